// Host tests of src/lib: formatting, string functions, command-line words, globs.
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

using namespace toll::lib;

static std::string fmt(const char* f, ...)
{
    char buf[128];
    va_list args;
    va_start(args, f);
    vsnformat(buf, sizeof buf, f, args);
    va_end(args);
    return buf;
}

TEST_CASE("format handles the conversions the kernel uses")
{
    CHECK(fmt("%d %i %u", -7, 42, 3000000000u) == "-7 42 3000000000");
    CHECK(fmt("%x %X %o", 0xbeefu, 0xbeefu, 8u) == "beef BEEF 10");
    CHECK(fmt("%llu %lld", 18446744073709551615ull, -9223372036854775807ll - 1) ==
          "18446744073709551615 -9223372036854775808");
    CHECK(fmt("[%5d|%-5d|%05d]", 42, 42, -42) == "[   42|42   |-0042]");
    CHECK(fmt("[%s|%.3s|%6s|%-6s]", "abc", "abcdef", "ab", "ab") == "[abc|abc|    ab|ab    ]");
    CHECK(fmt("%.*s|%*d", 2, "xyz", 4, 7) == "xy|   7");
    CHECK(fmt("%c%%%s", 'a', (const char*)nullptr) == "a%(null)");
    CHECK(fmt("%zu", (size_t)12345) == "12345");
    CHECK(fmt("%q") == "%q");
}

TEST_CASE("snformat truncates but reports the full length")
{
    char buf[8];
    CHECK(snformat(buf, sizeof buf, "%s", "0123456789") == 10);
    CHECK(std::string(buf) == "0123456");
    CHECK(snformat(buf, 1, "abc") == 3);
    CHECK(buf[0] == '\0');
}

TEST_CASE("string functions agree with the C library")
{
    const char* words[] = {"", "a", "abc", "abd", "ab", "\xff"};
    for (auto a : words)
        for (auto b : words) {
            int ours = toll_strcmp(a, b), theirs = std::strcmp(a, b);
            CHECK((ours < 0) == (theirs < 0));
            CHECK((ours > 0) == (theirs > 0));
        }
    char buf[16] = "0123456789";
    toll_memmove(buf + 2, buf, 8);
    CHECK(std::string(buf) == "0101234567");
    toll_memmove(buf, buf + 2, 8);
    CHECK(std::string(buf, 8) == "01234567");
    toll_memset(buf, 'x', 3);
    CHECK(std::memcmp(buf, "xxx", 3) == 0);
    CHECK(toll_memcmp("ab", "ac", 2) < 0);
    CHECK(toll_strnlen("abcdef", 3) == 3);
    CHECK(toll_strchr("abc", 'c') != nullptr);
    CHECK(toll_strchr("abc", 'z') == nullptr);
    CHECK(toll_strncmp("abcx", "abcy", 3) == 0);
}

static std::string word_string(const CmdlineWord& w)
{
    return std::string(w.key, w.key_length) + "=" + std::string(w.value, w.value_length);
}

TEST_CASE("command-line words, quoting and run= taking the rest")
{
    CmdlineCursor c("  vm.split=4/4 test='vm.* fpu.*'  flag run=/bin/echo hello world  ");
    CmdlineWord w;
    REQUIRE(c.next(w));
    CHECK(word_string(w) == "vm.split=4/4");
    REQUIRE(c.next(w));
    CHECK(word_string(w) == "test=vm.* fpu.*");
    REQUIRE(c.next(w));
    CHECK(word_string(w) == "flag=");
    REQUIRE(c.next(w));
    CHECK(word_string(w) == "run=/bin/echo hello world");
    CHECK_FALSE(c.next(w));
}

TEST_CASE("run= values: programs split at commas, arguments at spaces, quotes kept together")
{
    char line[] = "ut_pipe,/bin/sh -c \"echo a, b | cat\",lat_ctx -n 50 2 0";
    char* cursor = line;
    std::vector<std::string> programs;
    while (char* program = next_program(cursor))
        programs.push_back(program);
    REQUIRE(programs.size() == 3);
    CHECK(programs[0] == "ut_pipe");
    CHECK(programs[1] == "/bin/sh -c \"echo a, b | cat\"");
    CHECK(programs[2] == "lat_ctx -n 50 2 0");

    char command[] = "  /bin/sh -c \"echo hi | cat\" 'it''s' x\"y z\"w  ";
    const char* argv[8] = {};
    REQUIRE(split_arguments(command, argv, 8) == 5);
    CHECK(std::string(argv[0]) == "/bin/sh");
    CHECK(std::string(argv[1]) == "-c");
    CHECK(std::string(argv[2]) == "echo hi | cat");
    CHECK(std::string(argv[3]) == "its");
    CHECK(std::string(argv[4]) == "xy zw");

    char many[] = "a b c d";
    CHECK(split_arguments(many, argv, 3) == 4); // more than fits is reported
    char empty[] = "   ";
    CHECK(split_arguments(empty, argv, 8) == 0);
    char open[] = "echo 'never closed";
    REQUIRE(split_arguments(open, argv, 8) == 2);
    CHECK(std::string(argv[1]) == "never closed");
}

TEST_CASE("ADDRESS,BYTES ranges of boot parameters")
{
    uint64_t base = 0, size = 0;
    CHECK(parse_range("0x47ff0000,1234", 15, base, size));
    CHECK(base == 0x47ff0000);
    CHECK(size == 1234);
    CHECK(parse_range("16,0x10", 7, base, size));
    CHECK((base == 16 && size == 16));
    CHECK_FALSE(parse_range("0x1000", 6, base, size));                 // no comma
    CHECK_FALSE(parse_range(",5", 2, base, size));                     // no address
    CHECK_FALSE(parse_range("5,", 2, base, size));                     // no size
    CHECK_FALSE(parse_range("0x1g,5", 6, base, size));                 // not a digit
    CHECK_FALSE(parse_range("0x10000000000000000,1", 21, base, size)); // past 64 bits
    bool found = false;
    CHECK(find_range("run=/bin/x a=1 i386.ramdisk=0x400000,77", "i386.ramdisk", base, size,
                     found) == false); // run= takes the rest of the line
    CHECK_FALSE(found);
    CHECK(find_range("vm.split=4/4 i386.ramdisk=0x400000,77 run=/bin/x", "i386.ramdisk", base, size,
                     found));
    CHECK(found);
    CHECK((base == 0x400000 && size == 77));
    CHECK_FALSE(find_range("i386.ramdisk=nonsense", "i386.ramdisk", base, size, found));
    CHECK(found);
}

TEST_CASE("glob patterns")
{
    CHECK(glob_match("*", ""));
    CHECK(glob_match("vm.*", "vm.pmap.map"));
    CHECK_FALSE(glob_match("vm.*", "fpu.lazy"));
    CHECK(glob_match("*.lazy", "fpu.lazy"));
    CHECK(glob_match("f?u.*y", "fpu.lazy"));
    CHECK(glob_match("a*b*c", "aXbYbZc"));
    CHECK_FALSE(glob_match("a*b*c", "aXbYbZ"));
    CHECK_FALSE(glob_match("abc", "abcd"));
    CHECK(glob_match("ab*", "abcd", 2));
}
