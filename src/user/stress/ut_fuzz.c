/* ut_fuzz: no program can make the kernel panic, hang or lose memory.
 *
 * Throwaway children make system calls with hostile arguments: every call
 * the kernel implements (its own table for this architecture, generated into
 * fuzz_calls.h), plus unknown numbers; pointers to the kernel, the top of
 * memory, unmapped and read-only pages, buffers that run off their end or
 * wrap around zero; huge, negative and odd sizes; random flags; and hostile
 * register state around the trap (segment registers, EFLAGS bits and a
 * garbage stack pointer on i386; condition flags, scratch registers, the
 * thread pointer and a garbage stack pointer on arm64).
 *
 *     ut_fuzz [calls=N] [seed=S] [child=C] [verbose]
 *
 * Child C's calls depend on (S, C) alone, never on what the kernel answered,
 * so a failure replays exactly: the driver prints each child's number and
 * pid before it starts it, and `ut_fuzz seed=S child=C verbose` reruns that
 * child alone, printing every call before making it. The driver ends a child
 * that stops making progress (blocked on its own pipe, asleep), counts the
 * calls made (the kernel's cpu.syscalls, less its own), and at the end checks
 * the kernel's health: fork, exec and pipes work, and the free pages are back
 * to their starting value. The children's side, from the seed to the trap,
 * is fuzz_child.c. */
#include "fuzz_child.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_calls_per_child = 2000,
    k_leak_bound = 0, /* free pages after == before: nothing may stay behind */
};

/* --- the driver ---------------------------------------------------------- */

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    return counter_get(name, &v) == 0 ? v : ~0ull;
}

static long g_own_calls; /* system calls the driver made between the two readings */

/* Forks a child that execs /bin/true; its wait status, or -1. */
static int fork_exec_true(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(utest_bin("true"), "true", (char*)0);
        _exit(127);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid ? status : -1;
}

static void healthy_quiet(void)
{
    int p[2];
    fork_exec_true();
    if (pipe(p) == 0) {
        close(p[0]);
        close(p[1]);
    }
}

static int healthy(void)
{
    int status = fork_exec_true();
    int ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    pid_t pid;
    CHECK_MSG(ok, "after the fuzzing, fork and exec still work");
    /* a pipe between two processes */
    int p[2];
    char buf[8] = {0};
    int piped = pipe(p) == 0;
    if (piped && (pid = fork()) == 0) {
        write(p[1], "healthy", 7);
        _exit(0);
    }
    piped = piped && pid > 0 && read(p[0], buf, 7) == 7 && memcmp(buf, "healthy", 7) == 0 &&
            waitpid(pid, &status, 0) == pid;
    if (p[0] >= 0) {
        close(p[0]);
        close(p[1]);
    }
    CHECK_MSG(piped, "after the fuzzing, a pipe carries data between processes");
    return ok && piped;
}

/* Waits for the fuzzing child @p pid, ending it (and counting it in
 * @p killed) when it stops making progress: blocked on a pipe it holds both
 * ends of, asleep until a signal, or running another program it exec'd
 * (which may be a watcher like this one, whose own system calls would look
 * like progress to a count of the whole machine's calls, so progress is the
 * child's own count, fuzz_progress). Says which child it ended and why.
 * Returns its wait status. */
static int watch(pid_t pid, long child, long* killed)
{
    unsigned long last = fuzz_progress();
    int status = 0, still = 0;
    for (;;) {
        struct timespec tick = {0, 20 * 1000 * 1000};
        nanosleep(&tick, NULL);
        pid_t done = waitpid(pid, &status, WNOHANG);
        unsigned long now = fuzz_progress();
        g_own_calls += 2;
        if (done == pid)
            return status;
        if (now == last) {
            if (++still == 2) {
                NOTE("child %ld (pid %d) made no call for two ticks: ended with SIGKILL",
                     child, (int)pid);
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                g_own_calls += 2;
                ++*killed;
                return status;
            }
        } else {
            still = 0;
        }
        last = now;
    }
}

int main(int argc, char** argv)
{
    long calls = 20000, only_child = -1;
    uint64_t seed = 1;
    int verbose = 0, exec_self = 0;
    for (int i = 1; i < argc; ++i) {
        if (strncmp(argv[i], "calls=", 6) == 0)
            calls = strtol(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "seed=", 5) == 0)
            seed = strtoull(argv[i] + 5, NULL, 0);
        else if (strncmp(argv[i], "child=", 6) == 0)
            only_child = strtol(argv[i] + 6, NULL, 0);
        else if (strcmp(argv[i], "verbose") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "exec-self") == 0)
            exec_self = 1;
        else {
            NOTE("usage: ut_fuzz [calls=N] [seed=S] [child=C] [verbose] [exec-self]; unknown "
                 "word '%s'",
                 argv[i]);
            return 2;
        }
    }
    unsigned long long limit = counter("vm.user_limit");
    if (!CHECK_MSG(limit != ~0ull && fuzz_setup((unsigned long)limit),
                   "the fuzzer's arena is mapped"))
        return utest_done();
    NOTE("seed %llu, %ld calls, %u implemented calls in the table", (unsigned long long)seed, calls,
         fuzz_call_count());

    if (exec_self) { /* the child runs this driver again, as a fuzzed execve can */
        NOTE("one child that execs %s: a watcher that makes no fuzzed call", argv[0]);
        pid_t pid = fork();
        if (pid == 0) {
            char* again[] = {argv[0], NULL};
            execv(argv[0], again);
            _exit(127);
        }
        long killed = 0;
        int status = watch(pid, 0, &killed);
        CHECK_MSG(killed == 1, "the watch ends a child whose exec'd program makes no fuzzed call");
        NOTE("child 0 %s (wait status 0x%x)", killed ? "was ended" : "ended", status);
        return utest_done();
    }

    if (only_child >= 0) { /* replay one child, watched like the rest */
        NOTE("replaying child %ld of seed %llu", only_child, (unsigned long long)seed);
        pid_t pid = fork();
        if (pid == 0)
            fuzz_child(seed, only_child, calls < k_calls_per_child ? calls : k_calls_per_child,
                      verbose);
        long killed = 0;
        int status = watch(pid, only_child, &killed);
        NOTE("child %ld %s (wait status 0x%x)", only_child,
             killed ? "blocked and was ended" : "ended", status);
        return utest_done();
    }

    /* Once before measuring, so that the driver's own stack and data pages
     * are already there: what follows must then leave the count unchanged. */
    healthy_quiet();
    unsigned long long free0 = counter("vm.phys.available_pages");
    unsigned long long sys0 = counter("cpu.syscalls");
    long fuzzed = 0, children = 0, killed = 0, died = 0;
    g_own_calls = 1; /* the cpu.syscalls reading itself */
    while (fuzzed < calls) {
        long child = children++;
        NOTE("child %ld (replay: ut_fuzz seed=%llu child=%ld verbose)", child,
             (unsigned long long)seed, child);
        g_own_calls += 1;
        pid_t pid = fork();
        g_own_calls += 1;
        if (pid == 0)
            fuzz_child(seed, child, k_calls_per_child, 0);
        if (pid < 0) {
            CHECK_MSG(0, "fork a fuzzing child");
            break;
        }
        int status = watch(pid, child, &killed);
        if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
            ++died;
            NOTE("child %ld died of signal %d", child, WTERMSIG(status));
            g_own_calls += 1;
        }
        fuzzed = (long)(counter("cpu.syscalls") - sys0) - g_own_calls;
        g_own_calls += 1;
    }
    NOTE("fuzzed %ld system calls in %ld children: %ld blocked and were ended, %ld died of "
         "their own faults",
         fuzzed, children, killed, died);
    CHECK_MSG(fuzzed >= calls, "the children made the calls asked for");
    healthy();
    /* A grandchild orphaned by a child's death may still be on its way out,
     * and the kernel frees an orphan's zombie at the next fork: fork a
     * trivial child and nap until the count is back, for half a second at
     * most. A page that never comes back is a leak. */
    unsigned long long free1 = counter("vm.phys.available_pages");
    for (int naps = 0; free1 != free0 && naps < 50; ++naps) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
        free1 = counter("vm.phys.available_pages");
    }
    NOTE("free pages: %llu before, %llu after", free0, free1);
    CHECK_MSG(free1 + k_leak_bound >= free0 && free1 <= free0 + k_leak_bound,
              "the free pages are back to their starting value");
    return utest_done();
}
