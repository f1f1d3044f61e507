/* lat_shootdown: what munmap and mprotect cost when the address space runs
 * on several CPUs, so that the kernel must take the old translations out of
 * the other CPUs' TLBs too (a TLB shootdown). One thread per other CPU the
 * process may use, each pinned there, keeps touching the range, so that
 * every CPU holds its translations; the main thread, on CPU 0, maps and
 * fills @pages pages, then times munmap of them, or mprotect to read-only
 * (the spinners then only read). Reports, per call, for 1, 8, 64 and 512
 * pages: lat_shootdown.munmap.<pages> and lat_shootdown.mprotect.<pages>.
 * Usage: lat_shootdown [-n rounds] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_rounds = 20, k_max_spinners = 7, k_region_pages = 512 };

static volatile unsigned char* volatile g_target; /* the page the spinners touch, or NULL */
static volatile int g_stop;
static volatile unsigned g_generation;                 /* bumped when g_target is cleared */
static volatile unsigned g_seen[k_max_spinners + 1];   /* each spinner's last generation */

/* Adds the finished @p span to @p total (whose start stays 0): the time
   and every counter's change. Each span's snapshots are outside its clock
   reads, so the instruction count has none of them; the counters of the
   rounds after the first carry their snapshots' few events. */
static void accumulate(struct BenchSpan* total, const struct BenchSpan* span)
{
    total->end += span->end - span->start;
    for (int i = 0; i < BENCH_MAX_COUNTERS; ++i)
        total->after[i] += span->after[i] - span->before[i];
}

static void* spinner(void* arg)
{
    int cpu = (int)(long)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    while (!g_stop) {
        unsigned generation = g_generation;
        volatile unsigned char* p = g_target;
        if (p)
            (void)*p; /* keeps this CPU's TLB holding the range */
        g_seen[cpu] = generation;
    }
    return NULL;
}

int main(int argc, char** argv)
{
    uint64_t rounds;
    bench_iterations(argc, argv, k_default_rounds, &rounds);
    bench_init("lat_shootdown");
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    cpu_set_t all;
    int cpus = sched_getaffinity(0, sizeof all, &all) == 0 ? CPU_COUNT(&all) : 1;
    cpu_set_t zero;
    CPU_ZERO(&zero);
    CPU_SET(0, &zero);
    sched_setaffinity(0, sizeof zero, &zero);
    int spinners = cpus - 1 > k_max_spinners ? k_max_spinners : cpus - 1;
    pthread_t t[k_max_spinners];
    for (int i = 0; i < spinners; ++i)
        pthread_create(&t[i], NULL, spinner, (void*)(long)(i + 1));
    static const int sizes[] = {1, 8, 64, k_region_pages};
    for (int op = 0; op < 2; ++op) {
        for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
            size_t length = (size_t)sizes[s] * page;
            struct BenchSpan span;
            uint64_t spent = 0;
            static struct BenchSpan total;
            total = (struct BenchSpan){0};
            for (uint64_t r = 0; r < rounds; ++r) {
                unsigned char* region = mmap(NULL, length, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (region == MAP_FAILED)
                    bench_fail("mmap of %d pages failed", sizes[s]);
                for (size_t i = 0; i < length; i += page)
                    region[i] = 1;
                g_target = region + length - page;
                for (int k = 0; k < 1000; ++k)
                    sched_yield(); /* let the spinners touch it */
                /* They stop touching it (their TLBs keep what they loaded),
                   so that none faults on the range once it is gone. */
                g_target = NULL;
                unsigned generation = ++g_generation;
                for (int i = 1; i <= spinners; ++i)
                    while (g_seen[i] != generation)
                        sched_yield();
                bench_begin(&span);
                int rc = op == 0 ? munmap(region, length) : mprotect(region, length, PROT_READ);
                bench_end(&span);
                if (rc != 0)
                    bench_fail("%s of %d pages failed", op == 0 ? "munmap" : "mprotect", sizes[s]);
                if (op == 1)
                    munmap(region, length);
                accumulate(&total, &span);
                spent++;
            }
            char name[64];
            snprintf(name, sizeof name, "lat_shootdown.%s.%d", op == 0 ? "munmap" : "mprotect",
                     sizes[s]);
            bench_report(name, &total, spent);
        }
    }
    g_stop = 1;
    for (int i = 0; i < spinners; ++i)
        pthread_join(t[i], NULL);
    return 0;
}
