/* utest.h: a tiny harness for Toll's user-level tests, in plain C.
 * Each check prints one TAP-style line; utest_done() prints a summary and
 * returns the exit status, 0 only when every check passed. */
#ifndef TOLL_UTEST_H
#define TOLL_UTEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * How to use it:
 *
 *     #include <toll/utest.h>
 *     int main(void)
 *     {
 *         CHECK(getpid() > 0);
 *         CHECK_EQ(write(1, "", 0), 0);
 *         CHECK_ERR(close(-1), EBADF);
 *         return utest_done();
 *     }
 *
 * Lines look like "ok 3 - close(-1) fails with EBADF" or
 * "not ok 4 - x == 2 (ut_demo.c:17: got 1, expected 2)". Nothing this
 * harness prints begins with TEST, METRIC, COUNTER, PANIC or DONE: those
 * words open the kernel's own records on the serial line.
 *
 * Checks belong in the parent process. A child reports to its parent through
 * its exit status or a pipe, and the parent checks what arrived: a check made
 * in a child would number its line from the child's copy of the counters.
 *
 * Every line is formatted into a buffer and handed to write(2) in one call,
 * bypassing stdio, so no line is lost or printed twice around fork().
 */

/** Counters of the checks made so far in this process. */
static int utest_count;
static int utest_failed;
static int utest_skipped;

/** Write one formatted line to standard output with a single write(2). */
static inline void utest_line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void utest_line(const char* fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2; /* cut an over-long line, keep its newline */
    line[n++] = '\n';
    for (int done = 0; done < n;) {
        ssize_t w = write(1, line + done, n - done);
        if (w <= 0)
            return;
        done += w;
    }
}

/**
 * Record one check. @p ok decides "ok" or "not ok"; @p desc names the check;
 * on failure @p details (may be empty) says what went wrong. Returns @p ok so
 * that a test can stop early when a later check makes no sense.
 */
static inline int utest_report(int ok, const char* file, int line, const char* desc,
                               const char* details)
{
    ++utest_count;
    if (ok) {
        utest_line("ok %d - %s", utest_count, desc);
    } else {
        ++utest_failed;
        utest_line("not ok %d - %s (%s:%d%s%s)", utest_count, desc, file, line,
                   details[0] ? ": " : "", details);
    }
    return ok;
}

/** Like utest_report() with printf-style details. */
static inline int utest_reportf(int ok, const char* file, int line, const char* desc,
                                const char* fmt, ...) __attribute__((format(printf, 5, 6)));
static inline int utest_reportf(int ok, const char* file, int line, const char* desc,
                                const char* fmt, ...)
{
    char details[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(details, sizeof details, fmt, ap);
    va_end(ap);
    return utest_report(ok, file, line, desc, details);
}

/** Passes when @p cond is true; the description is the condition's text. */
#define CHECK(cond) utest_report(!!(cond), __FILE__, __LINE__, #cond, "")

/** Like CHECK() with a description of your own. */
#define CHECK_MSG(cond, desc) utest_report(!!(cond), __FILE__, __LINE__, (desc), "")

/** Passes when @p a equals @p b, both compared as integers; prints both on failure. */
#define CHECK_EQ(a, b)                                                                             \
    __extension__({                                                                                \
        long long utest_a_ = (long long)(a), utest_b_ = (long long)(b);                            \
        utest_reportf(utest_a_ == utest_b_, __FILE__, __LINE__, #a " == " #b,                      \
                      "got %lld, expected %lld", utest_a_, utest_b_);                              \
    })

/**
 * Passes when @p call returns -1 and sets errno to @p err (an E... constant).
 * Use it for every system call that must fail.
 */
#define CHECK_ERR(call, err)                                                                       \
    __extension__({                                                                                \
        errno = 0;                                                                                 \
        long utest_r_ = (long)(call);                                                              \
        int utest_e_ = errno;                                                                      \
        utest_reportf(utest_r_ == -1 && utest_e_ == (err), __FILE__, __LINE__,                     \
                      #call " fails with " #err, "returned %ld, errno %d (%s), expected %d",       \
                      utest_r_, utest_e_, strerror(utest_e_), (err));                              \
    })

/**
 * Record a check that could not be made, and why: TAP's "# SKIP". A skipped
 * check is never counted as passed, and utest_done() names the count.
 */
#define SKIP(desc, reason)                                                                         \
    do {                                                                                           \
        ++utest_count;                                                                             \
        ++utest_skipped;                                                                           \
        utest_line("ok %d - %s # SKIP %s", utest_count, (desc), (reason));                         \
    } while (0)

/** Print a comment line ("# ..."): notes, measured values. */
#define NOTE(...) utest_line("# " __VA_ARGS__)

/**
 * The path of the program @p name of /bin: "/bin/<name>", or "$TOLL_BIN/<name>"
 * when the environment variable TOLL_BIN names another folder (on Linux, to
 * run the build's own programs instead of the host's). The result lives in
 * one of four static buffers, reused in turn.
 */
static inline const char* utest_bin(const char* name)
{
    static char paths[4][256];
    static int next;
    const char* dir = getenv("TOLL_BIN");
    char* path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", dir != NULL && dir[0] ? dir : "/bin", name);
    return path;
}

/**
 * Print the plan and a summary, and return the exit status for main():
 * 0 when every check passed (skips allowed), 1 otherwise or if no check ran.
 */
static inline int utest_done(void)
{
    extern char* program_invocation_short_name; /* musl sets it from argv[0] */
    const char* name = program_invocation_short_name ? program_invocation_short_name : "test";
    int passed = utest_count - utest_failed - utest_skipped;
    utest_line("1..%d", utest_count);
    utest_line("# %s: %d passed, %d failed, %d skipped", name, passed, utest_failed, utest_skipped);
    return (utest_failed == 0 && utest_count > 0) ? 0 : 1;
}

#endif /* TOLL_UTEST_H */
