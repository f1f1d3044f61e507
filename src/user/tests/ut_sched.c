/* ut_sched: CPU affinity and getcpu, as Linux answers them. The mask a
 * process may have names the boot CPU at least; sched_getaffinity rejects a
 * size that is not a whole number of longs and returns the bytes it wrote;
 * sched_setaffinity rejects an empty mask, a mask of CPUs that are not
 * there and a bad pointer; a process pinned to a CPU runs there (getcpu
 * says so) and its children inherit the pin. With "-spread N" it also
 * requires that N spinning children, unpinned, between them run on more
 * than one CPU (the test of make check at 2 and 4 CPUs, with smp.user=1). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_spin_rounds = 400, /* sched_getcpu calls per spinning child */
    k_spin_work = 20000, /* loop turns between two of them */
    k_spin_patience = 20, /* how many times k_spin_rounds a child waits for company */
};

static long raw_getaffinity(pid_t pid, size_t len, void* mask)
{
    long r = syscall(SYS_sched_getaffinity, pid, len, mask);
    return r < 0 ? -errno : r;
}

static long raw_setaffinity(pid_t pid, size_t len, const void* mask)
{
    long r = syscall(SYS_sched_setaffinity, pid, len, mask);
    return r < 0 ? -errno : r;
}

/* The CPUs this process may use, as a bit mask (CPU n: bit n). */
static unsigned long allowed_mask(void)
{
    unsigned long mask = 0;
    if (raw_getaffinity(0, sizeof mask, &mask) != (long)sizeof mask)
        return 0;
    return mask;
}

static int pin(unsigned cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static void test_getaffinity(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CHECK_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    CHECK(CPU_ISSET(0, &set));
    CHECK(CPU_COUNT(&set) >= 1);
    unsigned long mask = 0;
    /* The raw call returns the kernel's mask size: one long here. */
    CHECK_EQ(raw_getaffinity(0, sizeof mask, &mask), (long)sizeof mask);
    CHECK_EQ(raw_getaffinity(getpid(), sizeof mask, &mask), (long)sizeof mask);
    CHECK_EQ(raw_getaffinity(0, sizeof set, &set), (long)sizeof mask);
    CHECK_EQ(raw_getaffinity(0, 0, &mask), -EINVAL);
    CHECK_EQ(raw_getaffinity(0, 1, &mask), -EINVAL); /* not a multiple of a long */
    CHECK_EQ(raw_getaffinity(0, sizeof mask, (void*)1), -EFAULT);
    CHECK_EQ(raw_getaffinity(0x7fffff, sizeof mask, &mask), -ESRCH);
}

static void test_setaffinity_errors(void)
{
    unsigned long none = 0, far = 1ul << (8 * sizeof(long) - 1);
    CHECK_EQ(raw_setaffinity(0, sizeof none, &none), -EINVAL);
    CHECK_EQ(raw_setaffinity(0, sizeof far, &far), -EINVAL); /* no such CPU online */
    CHECK_EQ(raw_setaffinity(0, 0, &none), -EINVAL);        /* nothing read: empty */
    CHECK_EQ(raw_setaffinity(0, sizeof none, (void*)1), -EFAULT);
    unsigned long one = 1;
    CHECK_EQ(raw_setaffinity(0x7fffff, sizeof one, &one), -ESRCH);
    /* A short mask is zero-filled, a long one read as far as the kernel's. */
    unsigned char byte = 1;
    CHECK_EQ(raw_setaffinity(0, 1, &byte), 0);
    CHECK_EQ(allowed_mask(), 1ul);
    cpu_set_t big;
    CPU_ZERO(&big);
    CPU_SET(0, &big);
    CHECK_EQ(raw_setaffinity(0, sizeof big, &big), 0);
}

static void test_pins(unsigned long allowed)
{
    for (unsigned cpu = 0; cpu < 8 * sizeof allowed; ++cpu) {
        if (!(allowed & (1ul << cpu)))
            continue;
        if (!CHECK_EQ(pin(cpu), 0))
            continue;
        CHECK_EQ(allowed_mask(), 1ul << cpu);
        CHECK_EQ(sched_getcpu(), (int)cpu);
        unsigned got = ~0u, node = ~0u;
        CHECK_EQ(syscall(SYS_getcpu, &got, &node, 0), 0);
        CHECK_EQ(got, cpu);
        CHECK_EQ(node, 0u);
    }
    CHECK_EQ(syscall(SYS_getcpu, 0, 0, 0), 0);
    errno = 0;
    CHECK_EQ(syscall(SYS_getcpu, (void*)1, 0, 0), -1L);
    CHECK_EQ(errno, EFAULT);
}

static void test_inherited(unsigned long allowed)
{
    unsigned last = 0;
    for (unsigned cpu = 0; cpu < 8 * sizeof allowed; ++cpu)
        if (allowed & (1ul << cpu))
            last = cpu;
    if (!CHECK_EQ(pin(last), 0))
        return;
    pid_t pid = fork();
    if (pid == 0)
        _exit(allowed_mask() == 1ul << last && sched_getcpu() == (int)last ? 0 : 1);
    int status = -1;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A child that spins and notes each CPU it finds itself on, in its own
 * mask (its exit status) and in the mask all the children share; the exit
 * status is its own. It spins k_spin_rounds, then on until the children
 * together have seen two CPUs, up to k_spin_patience times as long: a
 * loaded host may not run a vCPU for a while, and the others must not
 * finish (and an idle CPU take every child) before it runs at all. */
static void spinner(unsigned* shared_seen)
{
    unsigned seen = 0;
    volatile unsigned sink = 0;
    for (int r = 0; r < k_spin_rounds * k_spin_patience; ++r) {
        int cpu = sched_getcpu();
        if (cpu >= 0 && cpu < 8) {
            seen |= 1u << cpu;
            __atomic_or_fetch(shared_seen, 1u << cpu, __ATOMIC_RELAXED);
        }
        if (r >= k_spin_rounds &&
            __builtin_popcount(__atomic_load_n(shared_seen, __ATOMIC_RELAXED)) >= 2)
            break;
        for (int i = 0; i < k_spin_work; ++i)
            sink = sink + 1;
    }
    _exit((int)seen);
}

static void test_spread(unsigned long allowed, int children)
{
    cpu_set_t all;
    CPU_ZERO(&all);
    for (unsigned cpu = 0; cpu < 8; ++cpu)
        if (allowed & (1ul << cpu))
            CPU_SET(cpu, &all);
    CHECK_EQ(sched_setaffinity(0, sizeof all, &all), 0);
    CHECK(__builtin_popcountl(allowed) >= 2);
    pid_t pids[8];
    if (children > 8)
        children = 8;
    unsigned* shared_seen =
        mmap(NULL, sizeof *shared_seen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!CHECK(shared_seen != MAP_FAILED))
        return;
    *shared_seen = 0;
    for (int i = 0; i < children; ++i) {
        pids[i] = fork();
        if (pids[i] == 0)
            spinner(shared_seen);
    }
    unsigned seen = 0;
    for (int i = 0; i < children; ++i) {
        int status = 0;
        if (pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status))
            seen |= (unsigned)WEXITSTATUS(status);
    }
    utest_line("# %d spinning children ran on %d CPUs (mask 0x%x)", children,
               __builtin_popcount(seen), seen);
    CHECK(__builtin_popcount(seen) >= 2);
    CHECK_EQ(seen & ~(unsigned)allowed, 0u);
    munmap(shared_seen, sizeof *shared_seen);
}

int main(int argc, char** argv)
{
    int spread = 0;
    if (argc == 3 && strcmp(argv[1], "-spread") == 0)
        spread = atoi(argv[2]);
    unsigned long allowed = allowed_mask();
    CHECK(allowed & 1ul);
    test_getaffinity();
    test_setaffinity_errors();
    test_pins(allowed);
    test_inherited(allowed);
    if (spread > 0)
        test_spread(allowed, spread);
    return utest_done();
}
