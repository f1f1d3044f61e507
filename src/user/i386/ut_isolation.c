/* ut_isolation: the isolation self-check over real processes. Several
 * children map memory low, high and (under 4/4) where the kernel's text lives
 * in its own space, then wait; the parent asks the kernel (Toll's call 1003)
 * to walk the user page directory of every live process. Under 3/1-pti and
 * 4/4 each may hold only user page tables and the trampoline; under 3/1 its
 * kernel quarter must be the kernel's. A layout that leaked one kernel entry
 * into a user directory would be counted.
 *
 * Then, from a child pinned to each CPU in turn, user mode reads the kernel
 * (its base and its text) and every page of the trampoline's first 256 KB,
 * where each CPU's trampoline block (its stack, copy buffer and the CR3s it
 * loads) lies, mapped in every space but supervisor-only: every read must
 * fault, on every CPU, whichever CPU's block it names. */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "toll/toll.h"
#include "toll/utest.h"

enum { k_children = 4, k_check_isolation = TOLL_SYS_check_isolation };

/* The trampoline slot (src/arch/i386/layout.h TRAMPOLINE_BASE) and how much
   of it the probe reads: the whole image of 8 CPUs' blocks fits well inside. */
enum { k_trampoline_base = 0xFFC00000u, k_probe_pages = 64, k_max_cpus = 8 };

static sigjmp_buf g_probe;

static void probe_fault(int sig)
{
    (void)sig;
    siglongjmp(g_probe, 1);
}

/* In a child pinned to CPU @p cpu: how many of the probed kernel addresses
   user mode could read (0 is right), or -1 if it could not be pinned there. */
static int reads_that_succeed(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0 || sched_getcpu() != cpu)
        return -1;
    struct sigaction sa = {0};
    sa.sa_handler = probe_fault;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    volatile int leaked = 0;
    for (int i = -2; i < k_probe_pages; ++i) {
        uintptr_t at = i == -2 ? 0xC0000000u : i == -1 ? 0xC0100000u
                                                         : k_trampoline_base + (uintptr_t)i * 4096;
        if (!sigsetjmp(g_probe, 1)) {
            (void)*(volatile const char*)at;
            ++leaked;
        }
    }
    return leaked;
}

static void test_no_cpu_reads_the_trampoline(void)
{
    cpu_set_t all;
    if (sched_getaffinity(0, sizeof all, &all) != 0)
        CPU_ZERO(&all);
    int probed = 0;
    for (int cpu = 0; cpu < k_max_cpus; ++cpu) {
        if (!CPU_ISSET(cpu, &all))
            continue;
        pid_t kid = fork();
        if (kid == 0)
            _exit(reads_that_succeed(cpu) == 0 ? 0 : 1);
        int status = 0;
        CHECK_EQ(waitpid(kid, &status, 0), kid);
        if (!CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            NOTE("cpu%d: user mode read kernel or trampoline memory (or was not placed)", cpu);
        ++probed;
    }
    NOTE("user mode read nothing of the kernel or the trampoline on %d CPU(s)", probed);
    CHECK(probed >= 1);
}

int main(void)
{
    unsigned long long user_limit = 0;
    if (counter_get("vm.user_limit", &user_limit) != 0) {
        SKIP("the isolation check", "not running on Toll");
        return utest_done();
    }
    int go[2], ready[2];
    CHECK_EQ(pipe(go), 0);
    CHECK_EQ(pipe(ready), 0);
    pid_t kids[k_children];
    for (int i = 0; i < k_children; ++i) {
        kids[i] = fork();
        if (kids[i] == 0) {
            close(go[1]); /* else no child would ever see end of file */
            close(ready[0]);
            uintptr_t places[] = {0x20000000u + i * 0x400000u, 0xB0000000u, 0xC0100000u};
            for (int j = 0; j < 3; ++j) {
                if (places[j] + 0x10000 > user_limit)
                    continue;
                char* p = mmap((void*)places[j], 0x10000, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
                if (p != MAP_FAILED)
                    p[0] = p[0x8000] = (char)i; /* make the page tables exist */
            }
            char c = 1;
            write(ready[1], &c, 1);
            read(go[0], &c, 1); /* stay alive until the check is done */
            _exit(0);
        }
        CHECK(kids[i] > 0);
    }
    for (int i = 0; i < k_children; ++i) {
        char c;
        CHECK_EQ(read(ready[0], &c, 1), 1);
    }
    unsigned directories = 0;
    long violations = syscall(k_check_isolation, &directories);
    NOTE("checked %u user directories, %ld bad entries", directories, violations);
    CHECK_EQ(violations, 0);
    CHECK(directories >= 1 + k_children);
    CHECK(syscall(k_check_isolation, (void*)0xFFFFF000u) == -1); /* a bad pointer: EFAULT */
    close(go[1]); /* the children read EOF and exit */
    for (int i = 0; i < k_children; ++i) {
        int status;
        CHECK_EQ(waitpid(kids[i], &status, 0), kids[i]);
    }
    test_no_cpu_reads_the_trampoline();
    return utest_done();
}
