// ktest: Toll's in-kernel test framework. Tests register themselves by name
// with KTEST; `test=<glob>` on the command line runs the matching ones and
// reports each with the serial protocol (TEST, METRIC, DONE).
#pragma once
#include "kernel/kern/section.h"
#include <stdint.h>

namespace toll::ktest {

/// A registered test: a dotted name ("lib.format") and its body.
struct Test {
    const char* name;
    void (*body)();
};

/// Records a failure of the running test (the first reason is reported).
void fail(const char* file, int line, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

/// Marks the running test skipped with @p reason: it is reported as SKIP,
/// never as PASS, and does not count as passed.
void skip(const char* reason);

/// Prints a METRIC record, tagged with the run's nonce.
void metric(const char* name, uint64_t value, const char* unit);

/// Runs every test whose name matches @p glob; returns the number that failed.
unsigned run_matching(const char* glob);

/// Reports the outcome of a check made outside a registered test (a user
/// program run with run=): PASS when @p passed, else FAIL with @p reason.
void report(const char* name, bool passed, const char* reason);

/// Reports a check made outside a registered test as SKIP with @p reason
/// (a user program that exited with status 77, automake's "skipped").
void report_skip(const char* name, const char* reason);

/// Dumps the counters, prints DONE with the totals and powers off.
[[noreturn]] void finish();

} // namespace toll::ktest

#define TOLL_KTEST_CAT2(a, b) a##b
#define TOLL_KTEST_CAT(a, b) TOLL_KTEST_CAT2(a, b)

/// Defines and registers an in-kernel test: KTEST("area.behaviour") { ... }
/// A test named "destructive.*" is expected to end the run with a PANIC; it
/// runs only when the glob itself starts with "destructive." (tests/system
/// checks the PANIC with `tools/run --expect-panic`).
/// A test named "device.*" needs a device the default machine lacks (the
/// network card of `tools/run --net`) and likewise runs only when the glob
/// starts with "device.".
#define KTEST(name) TOLL_KTEST_IMPL(name, TOLL_KTEST_CAT(ktest_body_, __LINE__))
#define TOLL_KTEST_IMPL(name, body)                                                                \
    static void body();                                                                            \
    TOLL_IN_SECTION(toll_ktests)                                                                   \
    constinit const ::toll::ktest::Test TOLL_KTEST_CAT(body, _entry){name, body};                  \
    static void body()

/// Checks a condition inside a ktest; a false one fails the test and goes on.
#define KEXPECT(cond)                                                                              \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::toll::ktest::fail(__FILE__, __LINE__, "expected %s", #cond);                         \
    } while (0)

/// Checks that two integers are equal, printing both when they are not.
#define KEXPECT_EQ(a, b)                                                                           \
    do {                                                                                           \
        auto toll_a_ = (a);                                                                        \
        auto toll_b_ = (b);                                                                        \
        if (!(toll_a_ == toll_b_))                                                                 \
            ::toll::ktest::fail(__FILE__, __LINE__, "expected %s == %s (0x%llx != 0x%llx)", #a,    \
                                #b, (unsigned long long)toll_a_, (unsigned long long)toll_b_);     \
    } while (0)
