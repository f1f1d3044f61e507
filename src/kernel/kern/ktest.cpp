// The ktest runner: walks the linker-built table of tests and reports each.
#include "kernel/kern/ktest.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

TOLL_SECTION_BOUNDS(const toll::ktest::Test, toll_ktests);

namespace toll::ktest {
namespace {
char g_reason[192];
bool g_failed;
bool g_skipped;
} // namespace

void fail(const char* file, int line, const char* fmt, ...)
{
    if (g_failed)
        return; // The first failure is the interesting one.
    g_failed = true;
    size_t n = lib::snformat(g_reason, sizeof g_reason, "%s:%d: ", file, line);
    if (n >= sizeof g_reason)
        return;
    va_list args;
    va_start(args, fmt);
    lib::vsnformat(g_reason + n, sizeof g_reason - n, fmt, args);
    va_end(args);
}

void skip(const char* reason)
{
    g_skipped = true;
    lib::snformat(g_reason, sizeof g_reason, "%s", reason);
}

void metric(const char* name, uint64_t value, const char* unit)
{
    krecord("METRIC %s %llu %s", name, (unsigned long long)value, unit);
}

namespace {
unsigned g_passed, g_failed_count, g_skipped_count;
} // namespace

unsigned run_matching(const char* glob)
{
    unsigned matched = 0;
    for (const Test* t = __start_toll_ktests; t < __stop_toll_ktests; ++t) {
        if (!lib::glob_match(glob, t->name))
            continue;
        // A destructive test ends the run (it proves a PANIC): it runs only
        // when the glob names destructive tests on purpose.
        if (strncmp(t->name, "destructive.", 12) == 0 && strncmp(glob, "destructive.", 12) != 0)
            continue;
        // A device test needs hardware the default machine lacks (the
        // network card of tools/run --net): it runs only when named.
        if (strncmp(t->name, "device.", 7) == 0 && strncmp(glob, "device.", 7) != 0)
            continue;
        ++matched;
        g_failed = g_skipped = false;
        g_reason[0] = '\0';
        t->body();
        if (g_failed) {
            krecord("TEST %s FAIL %s", t->name, g_reason);
            ++g_failed_count;
        } else if (g_skipped) {
            krecord("TEST %s SKIP %s", t->name, g_reason);
            ++g_skipped_count;
        } else {
            krecord("TEST %s PASS", t->name);
            ++g_passed;
        }
    }
    if (matched == 0) // A mistyped glob must not look like a clean run.
        report("ktest.selection", false, "no in-kernel test matches the glob");
    return g_failed_count;
}

void report(const char* name, bool passed, const char* reason)
{
    if (passed) {
        krecord("TEST %s PASS", name);
        ++g_passed;
    } else {
        krecord("TEST %s FAIL %s", name, reason);
        ++g_failed_count;
    }
}

void report_skip(const char* name, const char* reason)
{
    krecord("TEST %s SKIP %s", name, reason);
    ++g_skipped_count;
}

void finish()
{
    counters_dump();
    krecord("DONE %u passed, %u failed, %u skipped", g_passed, g_failed_count, g_skipped_count);
    arch::poweroff(g_failed_count == 0);
}

} // namespace toll::ktest
