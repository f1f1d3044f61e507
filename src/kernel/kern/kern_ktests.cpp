// In-kernel tests of the boot flow itself: static constructors, the command
// line, formatting, and the deterministic cycle counter.
#include "kernel/arch/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/param.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll {
namespace {

// Set by a static constructor: proves kernel_main ran the init_array.
struct ConstructorProbe {
    int value = 0;
    ConstructorProbe() { value = 0x70115; }
};
ConstructorProbe g_constructor_probe;

} // namespace

KTEST("kern.static_constructors_ran")
{
    KEXPECT_EQ(g_constructor_probe.value, 0x70115);
}

KTEST("kern.cmdline_unknown_key_warns")
{
    KEXPECT_EQ(param_report_unknown("test=kern.* no.such.key=1 nonce=abc"), 1u);
    KEXPECT_EQ(param_report_unknown("test=x run=/bin/echo a b=c"), 0u);
}

KTEST("kern.format_in_kernel")
{
    char buf[48];
    lib::snformat(buf, sizeof buf, "%s|%5d|%-3x|%08llx|%c", "ok", -42, 0xa, 0x1234ull, 'z');
    KEXPECT(strcmp(buf, "ok|  -42|a  |00001234|z") == 0);
}

// The run= words the kernel hands to a program, split inside the kernel.
KTEST("kern.split_in_kernel")
{
    char line[] = " prog  one 'two words' \"a'b\" x\"y z\"w ";
    const char* argv[8] = {};
    auto word = [&](size_t i, const char* want) { return argv[i] && strcmp(argv[i], want) == 0; };
    KEXPECT_EQ(lib::split_arguments(line, argv, 8), 5u);
    KEXPECT(word(0, "prog"));
    KEXPECT(word(1, "one"));
    KEXPECT(word(2, "two words"));
    KEXPECT(word(3, "a'b"));
    KEXPECT(word(4, "xy zw"));
    char many[] = "a b c";
    KEXPECT_EQ(lib::split_arguments(many, argv, 2), 3u);
}

// Times a fixed loop with the cycle counter. In deterministic mode the value is
// the same on every run; tests/system checks that by booting twice.
KTEST("kern.deterministic_loop")
{
    volatile uint32_t sink = 0;
    uint64_t start = arch::cycle_counter();
    for (uint32_t i = 0; i < 100000; ++i)
        sink = sink + i;
    uint64_t end = arch::cycle_counter();
    KEXPECT(end > start);
    ktest::metric("kern.loop_100k", end - start, "cycles");
}

} // namespace toll
