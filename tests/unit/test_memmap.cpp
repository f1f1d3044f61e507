// Host tests of the memory-map sanitiser (src/kernel/vm/memmap.cpp): the maps
// firmware really hands over are unsorted, overlapping and split.
#include "kernel/vm/memmap.h"
#include <catch2/catch.hpp>

using namespace toll;
using namespace toll::vm;

namespace {
constexpr MemType U = MemType::usable, R = MemType::reserved, A = MemType::acpi_reclaimable,
                  N = MemType::acpi_nvs, B = MemType::bad;
}

TEST_CASE("memmap: a clean map is left as it is", "[memmap]")
{
    MemRegion m[] = {{0, 0x9FC00, U}, {0x9FC00, 0x400, R}, {0x100000, 0x7F00000, U}};
    REQUIRE(memmap_sanitise(m, 3, 3) == 3);
    CHECK(m[0].base == 0);
    CHECK(m[2].length == 0x7F00000);
    CHECK(memmap_total(m, 3, U) == 0x9FC00 + 0x7F00000);
}

TEST_CASE("memmap: entries are sorted and touching ones of a type merged", "[memmap]")
{
    MemRegion m[] = {{0x200000, 0x100000, U}, {0x100000, 0x100000, U}, {0, 0x1000, R}};
    REQUIRE(memmap_sanitise(m, 3, 3) == 2);
    CHECK(m[0].base == 0);
    CHECK(m[0].type == R);
    CHECK(m[1].base == 0x100000);
    CHECK(m[1].length == 0x200000);
}

TEST_CASE("memmap: a reservation inside usable memory splits it", "[memmap]")
{
    MemRegion m[4] = {{0x100000, 0x300000, U}, {0x200000, 0x1000, R}};
    REQUIRE(memmap_sanitise(m, 2, 4) == 3);
    CHECK(m[0].base == 0x100000);
    CHECK(m[0].length == 0x100000);
    CHECK(m[1].type == R);
    CHECK(m[2].base == 0x201000);
    CHECK(m[2].length == 0x1FF000);
    CHECK(memmap_total(m, 3, U) == 0x300000 - 0x1000);
}

TEST_CASE("memmap: overlaps go to the type of highest precedence", "[memmap]")
{
    MemRegion m[8] = {
        {0, 0x10000, U}, {0x8000, 0x10000, A}, {0xC000, 0x1000, N}, {0xC800, 0x100, B}};
    size_t n = memmap_sanitise(m, 4, 8);
    REQUIRE(n == 6);
    CHECK(m[0].type == U);
    CHECK(m[0].length == 0x8000);
    CHECK(m[1].type == A);
    CHECK(m[2].type == N);
    CHECK(m[3].type == B);
    CHECK(m[4].type == N);
    CHECK(m[5].type == A);
    CHECK(m[5].base + m[5].length == 0x18000);
    CHECK(mem_type_precedence(B) > mem_type_precedence(N));
    CHECK(mem_type_precedence(R) > mem_type_precedence(U));
}

TEST_CASE("memmap: duplicates, empty entries and holes", "[memmap]")
{
    MemRegion m[] = {{0x1000, 0x1000, U}, {0x1000, 0x1000, U}, {0x5000, 0, R}, {0x4000, 0x1000, U}};
    REQUIRE(memmap_sanitise(m, 4, 4) == 2);
    CHECK(m[0].base == 0x1000);
    CHECK(m[0].length == 0x1000);
    CHECK(m[1].base == 0x4000);
}

TEST_CASE("memmap: a length that would wrap is clamped", "[memmap]")
{
    MemRegion m[] = {{0xFFFFFFFFFFFFF000ull, 0x10000, R}, {0, 0x1000, U}};
    REQUIRE(memmap_sanitise(m, 2, 2) == 2);
    CHECK(m[1].base == 0xFFFFFFFFFFFFF000ull);
    CHECK(m[1].length == 0xFFF);
}

TEST_CASE("memmap: a result that does not fit says so", "[memmap]")
{
    MemRegion m[3] = {{0, 0x3000, U}, {0x1000, 0x1000, R}};
    CHECK(memmap_sanitise(m, 2, 2) == 3);
}
