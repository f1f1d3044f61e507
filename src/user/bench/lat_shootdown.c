/* lat_shootdown: what munmap and mprotect cost when the address space is
 * live on several CPUs, whose TLBs must all drop the old translations (a TLB
 * shootdown: IPIs on i386, broadcast TLBI on arm64), and what promoting and
 * demoting a superpage costs then.
 *
 * Helpers, one per other CPU (clone(CLONE_VM) processes, pinned), run in
 * this address space: before each timed call each writes every page of the
 * range (so its TLB holds them) and then blocks in read(), leaving the space
 * loaded on its CPU and executing nothing while the call is timed. Reports,
 * per call, lat_shootdown.munmap.<N>p and lat_shootdown.mprotect.<N>p for N
 * = 1, 8, 64, 512 pages, and where the port has superpages
 * lat_shootdown.promote_run / promote_block (the write that fills a
 * contiguous run or an L2 block: its fault and the promotion) and
 * demote_run / demote_block (mprotect of one page inside one).
 * Usage: lat_shootdown [-n rounds] */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_rounds = 8, k_max_helpers = 7, k_helper_stack = 64 * 1024 };

static long g_page;
static int g_helpers;
static volatile char* g_range;
static volatile long g_length;
static int g_cmd[k_max_helpers][2], g_ack[2];
static pid_t g_pid[k_max_helpers];

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)sched_setaffinity(0, sizeof set, &set);
}

static int helper(void* arg)
{
    int h = (int)(intptr_t)arg;
    pin(h + 1);
    char c;
    while (read(g_cmd[h][0], &c, 1) == 1 && c == 't') {
        for (long off = 0; off < g_length; off += g_page)
            g_range[off] = (char)(off / g_page);
        if (write(g_ack[1], &c, 1) != 1)
            break;
    }
    return 0;
}

/* Has every helper write the range, and waits until each has. */
static void helpers_touch(volatile char* range, long length)
{
    g_range = range;
    g_length = length;
    for (int h = 0; h < g_helpers; ++h)
        if (write(g_cmd[h][1], "t", 1) != 1)
            bench_fail("helper %d gone", h);
    char c;
    for (int h = 0; h < g_helpers; ++h)
        if (read(g_ack[0], &c, 1) != 1)
            bench_fail("helper ack lost");
}

static char* map(long length)
{
    char* p = mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    if (p == MAP_FAILED)
        bench_fail("mmap of %ld bytes failed", length);
    return p;
}

static void touch(volatile char* p, long from, long to)
{
    for (long off = from; off < to; off += g_page)
        p[off] = 1;
}

enum Op { k_munmap, k_mprotect, k_promote, k_demote };

/* One timed call, @p rounds times, each on a fresh mapping of @p length
 * bytes that this thread and every helper have written. */
static void measure(const char* name, enum Op op, long length, uint64_t rounds)
{
    struct BenchSpan total, one;
    bench_span_clear(&total);
    for (uint64_t r = 0; r < rounds; ++r) {
        char* p = map(length);
        long last = length - g_page;
        touch(p, 0, op == k_promote ? last : length); /* promote: all but the last page */
        helpers_touch(p, op == k_promote ? last : length);
        long middle = (length / 2) & ~(g_page - 1);
        bench_begin(&one);
        switch (op) {
        case k_munmap:
            munmap(p, (size_t)length);
            break;
        case k_mprotect:
            mprotect(p, (size_t)length, PROT_READ);
            break;
        case k_promote:
            p[last] = 1; /* the fault that fills the reservation */
            break;
        case k_demote:
            mprotect(p + middle, (size_t)g_page, PROT_READ);
            break;
        }
        bench_end(&one);
        bench_span_add(&total, &one);
        if (op != k_munmap)
            munmap(p, (size_t)length);
    }
    bench_report(name, &total, rounds);
}

int main(int argc, char** argv)
{
    uint64_t rounds;
    bench_iterations(argc, argv, k_default_rounds, &rounds);
    bench_init("lat_shootdown");
    g_page = sysconf(_SC_PAGESIZE);
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    g_helpers = cpus - 1 < k_max_helpers ? cpus - 1 : k_max_helpers;
    pin(0);
    if (pipe(g_ack) != 0)
        bench_fail("pipe failed");
    for (int h = 0; h < g_helpers; ++h) {
        char* stack = malloc(k_helper_stack);
        if (!stack || pipe(g_cmd[h]) != 0)
            bench_fail("no room for helper %d", h);
        g_pid[h] = clone(helper, stack + k_helper_stack, CLONE_VM | SIGCHLD, (void*)(intptr_t)h);
        if (g_pid[h] < 0)
            bench_fail("clone of helper %d failed", h);
    }
    bench_metric("lat_shootdown.cpus", cpus, "count");
    static const long sizes[] = {1, 8, 64, 512};
    char name[64];
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        snprintf(name, sizeof name, "lat_shootdown.munmap.%ldp", sizes[i]);
        measure(name, k_munmap, sizes[i] * g_page, rounds);
        snprintf(name, sizeof name, "lat_shootdown.mprotect.%ldp", sizes[i]);
        measure(name, k_mprotect, sizes[i] * g_page, rounds);
    }
#if defined(__aarch64__)
    /* Arm ARM D8.6.1: a contiguous run is 16 pages (4 KB granule) or 128
     * (16 KB); an L2 block maps a whole level-3 table (page / 8 entries).
     * The 16 KB kernel's 32 MB block is left out: too big for a quick run. */
    long run = g_page * (g_page == 4096 ? 16 : 128), block = g_page * (g_page / 8);
    measure("lat_shootdown.promote_run", k_promote, run, rounds);
    measure("lat_shootdown.demote_run", k_demote, run, rounds);
    if (g_page == 4096) {
        measure("lat_shootdown.promote_block", k_promote, block, rounds);
        measure("lat_shootdown.demote_block", k_demote, block, rounds);
    }
#endif
    for (int h = 0; h < g_helpers; ++h) {
        if (write(g_cmd[h][1], "q", 1) != 1) /* (its own copy of the write end stays open) */
            bench_fail("helper %d gone", h);
        waitpid(g_pid[h], NULL, 0);
    }
    return 0;
}
