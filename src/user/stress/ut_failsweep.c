/* ut_failsweep: the kernel copes when memory runs out anywhere. Each user
 * test program runs many times, each time with kernel allocations made to
 * fail (Toll's fail_alloc call: every Nth page or heap allocation, for a
 * sweep of N, then at random from a few seeds). The program may fail its own
 * checks, or die: what must hold is that the kernel does not panic, the
 * program ends (or, blocked for good on its own pipe after a fork that
 * failed, can be killed), and after every run the free pages and the open
 * files (sys.files.live) are exactly what they were before it: no reference
 * leaked or dropped twice on a failure path. Needs a kernel booted with
 * fail.alloc=.
 *
 *     ut_failsweep [program...]      (default: the portable user tests) */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_nap_ms = 10, k_sweep = 7, k_seeds = 2 };

static int g_limit_naps; /* a run longer than this is stuck: kill it */

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    return counter_get(name, &v) == 0 ? v : ~0ull;
}

/* Runs @p program with fault injection (every, seed); returns its wait
 * status, or -1 if it had to be killed. The injection starts in the child,
 * just before exec, and stops once it is reaped. */
static int run_injected(const char* program, unsigned long every, unsigned long seed, int* naps)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY); /* the program's own output is noise here */
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        fail_alloc(every, seed);
        execl(utest_bin(program), program, (char*)0);
        _exit(127); /* exec itself may fail: that is fine */
    }
    if (pid < 0)
        return -2;
    int status = 0;
    for (*naps = 0;; ++*naps) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        if (*naps == g_limit_naps) {
            kill(pid, SIGKILL);
            status = waitpid(pid, &status, 0) == pid ? -1 : -3;
            break;
        }
        struct timespec nap = {0, k_nap_ms * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    fail_alloc(0, 0);
    return status;
}

/* The free pages once the run has settled. A program's orphans (children
 * whose parent died of an injected failure) may still be finishing, and the
 * kernel frees an orphan's zombie at the next fork: so fork a trivial child,
 * nap, and look again, until the count is back to @p before (and the open
 * files to @p files_before) or half a second has gone by. A page that never
 * comes back is a leak. */
static unsigned long long settled_free_pages(unsigned long long before,
                                             unsigned long long files_before)
{
    unsigned long long now = counter("vm.phys.available_pages");
    for (int naps = 0; (now != before || counter("sys.files.live") != files_before) && naps < 50;
         ++naps) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        struct timespec nap = {0, k_nap_ms * 1000 * 1000};
        nanosleep(&nap, NULL);
        now = counter("vm.phys.available_pages");
    }
    return now;
}

int main(int argc, char** argv)
{
    static const char* const defaults[] = {"ut_hello",  "ut_forkexec", "ut_pipe",   "ut_mmap",
                                           "ut_efault", "ut_procs64",  "ut_layout", "ut_sh"};
    const char* const* programs = argc > 1 ? (const char* const*)argv + 1 : defaults;
    int count = argc > 1 ? argc - 1 : (int)(sizeof defaults / sizeof defaults[0]);
    if (!CHECK_MSG(fail_alloc(0, 0) == 0,
                   "the kernel was booted with fail.alloc= (injection armed)"))
        return utest_done();
    unsigned long long injected0 = counter("vm.fail.injected");
    int runs = 0, leaks = 0, file_leaks = 0, stuck = 0, unkillable = 0, clean_exits = 0;
    for (int p = 0; p < count; ++p) {
        const char* program = programs[p];
        /* How many allocations does a run make? Count without failing any. */
        unsigned long long c0 = counter("vm.fail.candidates");
        unsigned long long free0 = counter("vm.phys.available_pages");
        unsigned long long files0 = counter("sys.files.live");
        int naps;
        g_limit_naps = 3000; /* 30 s */
        int status = run_injected(program, 0xFFFFFFFFul, 0, &naps);
        g_limit_naps = 3 * naps + 50;
        unsigned long long total = counter("vm.fail.candidates") - c0;
        if (!CHECK_MSG(status == 0, program)) /* without failures it passes */
            continue;
        CHECK_MSG(counter("vm.phys.available_pages") == free0, "a plain run gives every page back");
        CHECK_MSG(counter("sys.files.live") == files0, "a plain run closes every file");
        /* Every Nth allocation: N = 1 (all fail), then spread up to the
         * run's own count (the last allocation fails); then at random. */
        unsigned long sweep[k_sweep + k_seeds];
        int n = 0;
        sweep[n++] = 1;
        for (int i = k_sweep - 1; i >= 1; --i)
            sweep[n++] =
                (unsigned long)(total >> (i - 1)) > 1 ? (unsigned long)(total >> (i - 1)) : 2;
        for (unsigned long seed = 1; seed <= k_seeds; ++seed)
            sweep[n++] = 0x80000000ul | (seed + (unsigned long)p * 16); /* 1 in 8, seeded */
        int program_leaks = 0;
        for (int i = 0; i < n; ++i) {
            unsigned long every = sweep[i] & 0x80000000ul ? 8 : sweep[i];
            unsigned long seed = sweep[i] & 0x80000000ul ? sweep[i] & 0xFF : 0;
            free0 = counter("vm.phys.available_pages");
            files0 = counter("sys.files.live");
            status = run_injected(program, every, seed, &naps);
            unsigned long long free1 = settled_free_pages(free0, files0);
            unsigned long long files1 = counter("sys.files.live");
            ++runs;
            if (status == -3) {
                ++unkillable;
                NOTE("%s with every=%lu seed=%lu could not be killed", program, every, seed);
            } else if (status == -1) {
                ++stuck; /* blocked in a system call, killed: its own doing */
                NOTE("%s with every=%lu seed=%lu blocked; killed", program, every, seed);
            } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                ++clean_exits;
            }
            if (files1 != files0) {
                ++file_leaks;
                NOTE("%s with every=%lu seed=%lu: %llu files open before, %llu after", program,
                     every, seed, files0, files1);
            }
            if (free1 != free0) {
                ++program_leaks;
                NOTE("%s with every=%lu seed=%lu: free pages %llu before, %llu after", program,
                     every, seed, free0, free1);
            }
        }
        leaks += program_leaks;
        NOTE("%s: %llu allocations a run; %d runs with failures injected, %d leaked", program,
             total, n, program_leaks);
    }
    unsigned long long injected = counter("vm.fail.injected") - injected0;
    NOTE("%d runs, %llu allocation failures injected, %d ran to a clean exit anyway, %d blocked "
         "and were killed",
         runs, injected, clean_exits, stuck);
    CHECK_MSG(injected >= (unsigned long long)runs, "failures were really injected");
    CHECK_EQ(unkillable, 0);
    CHECK_EQ(leaks, 0);
    CHECK_EQ(file_leaks, 0);
    return utest_done();
}
