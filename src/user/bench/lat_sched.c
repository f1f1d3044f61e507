/* lat_sched: the scheduler's three measurements, one per mode.
 *
 *   lat_sched wake [-n round trips]
 *       A 1-byte pipe ping-pong with both processes pinned to the boot CPU
 *       (lat_sched.wake_same), then with the echo on the last CPU the
 *       process may use (lat_sched.wake_cross: every wakeup crosses CPUs, by
 *       a reschedule IPI when the other CPU is idle). Instructions per round
 *       trip and the events of each.
 *   lat_sched fair [-n ticks]
 *       CPUs + 1 CPU-bound children spin for the same stretch of the clock;
 *       each reports the clock ticks the kernel charged it (times()), its
 *       share of the CPU time.
 *       lat_sched.fair.min_share: the smallest share against an equal one,
 *       per mille (1000: fair); lat_sched.fair.jain: Jain's index of the
 *       shares, per mille (1000: equal; 1000/n: one child got everything).
 *   lat_sched loaded [-n pings]
 *       An interactive child that waits on a pipe, next to two CPU-bound
 *       spinners per CPU; every tick the parent writes it a byte and the
 *       child notes the clock when its read returns. lat_sched.loaded.mean
 *       and .max: the wake-up latency, write to return of the read.
 *
 * The clock is bench_clock(): instructions in deterministic mode. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

enum {
    k_default_trips = 500,
    k_warmup_trips = 10,
    k_default_fair_ticks = 20,
    k_default_pings = 20,
    k_max_children = 16,
    k_check_every = 1024, /* spinner turns between two looks at the clock */
};

/* One tick of the kernel's 100 Hz clock in bench_clock() units in
 * deterministic mode (QEMU -icount shift=0: one instruction per ns). */
static const uint64_t k_clock_per_tick = 10000000;

static unsigned long allowed_mask(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        bench_fail("sched_getaffinity failed");
    unsigned long mask = 0;
    for (unsigned cpu = 0; cpu < 8 * sizeof mask; ++cpu)
        if (CPU_ISSET(cpu, &set))
            mask |= 1ul << cpu;
    return mask;
}

static void pin(unsigned cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        bench_fail("sched_setaffinity(cpu %u) failed", cpu);
}

static void echo(int in, int out, uint64_t trips)
{
    char c;
    for (uint64_t i = 0; i < trips; ++i)
        if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
            _exit(2);
    _exit(read(in, &c, 1) == 0 ? 0 : 3);
}

static void ping(int out, int in)
{
    char c = 'x';
    if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
        bench_fail("the echo process stopped answering");
}

/* A round trip with this process on @p here and its echo on @p there. */
static void wake(const char* name, unsigned here, unsigned there, uint64_t trips)
{
    int to_child[2], to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0)
        bench_fail("pipe failed");
    pin(here);
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork failed");
    if (pid == 0) {
        pin(there);
        close(to_child[1]);
        close(to_parent[0]);
        echo(to_child[0], to_parent[1], trips + k_warmup_trips);
    }
    close(to_child[0]);
    close(to_parent[1]);
    for (int i = 0; i < k_warmup_trips; ++i)
        ping(to_child[1], to_parent[0]);
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < trips; ++i)
        ping(to_child[1], to_parent[0]);
    bench_end(&span);
    close(to_child[1]);
    close(to_parent[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || status != 0)
        bench_fail("the echo process failed (status 0x%x)", status);
    bench_report(name, &span, trips);
}

/* Spins until the clock passes @p deadline; writes to @p out the clock
 * ticks the kernel charged it (times(), every tick that found it running). */
static void counter(uint64_t deadline, int out)
{
    for (;;) {
        for (int i = 0; i < k_check_every; ++i)
            __asm__ volatile("" ::: "memory");
        if (bench_clock() >= deadline)
            break;
    }
    struct tms t;
    times(&t);
    uint64_t ticks = (uint64_t)t.tms_utime;
    _exit(write(out, &ticks, sizeof ticks) == sizeof ticks ? 0 : 1);
}

static void fair(unsigned cpus, uint64_t ticks)
{
    int n = (int)cpus + 1;
    if (n > k_max_children)
        n = k_max_children;
    int results[2];
    if (pipe(results) != 0)
        bench_fail("pipe failed");
    uint64_t deadline = bench_clock() + ticks * k_clock_per_tick;
    pid_t pids[k_max_children];
    for (int i = 0; i < n; ++i) {
        pids[i] = fork();
        if (pids[i] < 0)
            bench_fail("fork failed");
        if (pids[i] == 0)
            counter(deadline, results[1]);
    }
    close(results[1]);
    uint64_t got[k_max_children], sum = 0, least = ~0ull;
    for (int i = 0; i < n; ++i) {
        if (read(results[0], &got[i], sizeof got[i]) != sizeof got[i])
            bench_fail("a spinner did not report");
        sum += got[i];
        if (got[i] < least)
            least = got[i];
    }
    for (int i = 0; i < n; ++i) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) != pids[i] || status != 0)
            bench_fail("a spinner failed (status 0x%x)", status);
    }
    /* Jain's fairness index (sum x)^2 / (n * sum x^2), per mille. */
    uint64_t sq = 0;
    for (int i = 0; i < n; ++i)
        sq += got[i] * got[i];
    bench_metric("lat_sched.fair.children", n, "count");
    bench_metric("lat_sched.fair.ticks", (long long)sum, "count");
    bench_metric("lat_sched.fair.min_share", sum ? (long long)(least * n * 1000 / sum) : 0,
                 "permille");
    bench_metric("lat_sched.fair.jain", sq ? (long long)(1000 * sum * sum / (n * sq)) : 0,
                 "permille");
}

static void spin_forever(void)
{
    for (;;)
        __asm__ volatile("" ::: "memory");
}

static void loaded(unsigned cpus, uint64_t pings)
{
    int spinners = 2 * (int)cpus;
    if (spinners > k_max_children)
        spinners = k_max_children;
    int to_child[2], to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0)
        bench_fail("pipe failed");
    pid_t child = fork();
    if (child < 0)
        bench_fail("fork failed");
    if (child == 0) {
        close(to_child[1]); /* its end of file comes when the parent closes its end */
        close(to_parent[0]);
        char c;
        for (;;) {
            if (read(to_child[0], &c, 1) != 1)
                _exit(0);
            uint64_t woke = bench_clock();
            if (write(to_parent[1], &woke, sizeof woke) != sizeof woke)
                _exit(1);
        }
    }
    close(to_child[0]);
    close(to_parent[1]);
    pid_t pids[k_max_children];
    for (int i = 0; i < spinners; ++i) {
        pids[i] = fork();
        if (pids[i] < 0)
            bench_fail("fork failed");
        if (pids[i] == 0)
            spin_forever();
    }
    struct timespec tick = {0, 10 * 1000 * 1000};
    uint64_t total = 0, worst = 0;
    for (uint64_t i = 0; i < pings; ++i) {
        nanosleep(&tick, NULL);
        char c = 'p';
        uint64_t sent = bench_clock(), woke;
        if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &woke, sizeof woke) != sizeof woke)
            bench_fail("the interactive child stopped answering");
        uint64_t latency = woke - sent;
        total += latency;
        if (latency > worst)
            worst = latency;
    }
    for (int i = 0; i < spinners; ++i)
        kill(pids[i], SIGKILL);
    close(to_child[1]);
    for (int i = 0; i < spinners; ++i)
        waitpid(pids[i], NULL, 0);
    int status = 0;
    if (waitpid(child, &status, 0) != child || status != 0)
        bench_fail("the interactive child failed (status 0x%x)", status);
    bench_metric("lat_sched.loaded.spinners", spinners, "count");
    bench_metric("lat_sched.loaded.mean", (long long)(total / pings), "instr");
    bench_metric("lat_sched.loaded.max", (long long)worst, "instr");
}

int main(int argc, char** argv)
{
    if (argc < 2)
        bench_fail("usage: lat_sched wake|fair|loaded [-n count]");
    const char* mode = argv[1];
    unsigned long allowed = allowed_mask();
    unsigned cpus = (unsigned)__builtin_popcountl(allowed);
    unsigned last = 8 * sizeof allowed - 1 - (unsigned)__builtin_clzl(allowed);
    uint64_t n;
    if (strcmp(mode, "wake") == 0) {
        bench_iterations(argc - 1, argv + 1, k_default_trips, &n);
        bench_init("lat_sched");
        bench_metric("lat_sched.cpus", cpus, "count");
        wake("lat_sched.wake_same", 0, 0, n);
        if (last > 0)
            wake("lat_sched.wake_cross", 0, last, n);
    } else if (strcmp(mode, "fair") == 0) {
        bench_iterations(argc - 1, argv + 1, k_default_fair_ticks, &n);
        bench_init("lat_sched");
        fair(cpus, n);
    } else if (strcmp(mode, "loaded") == 0) {
        bench_iterations(argc - 1, argv + 1, k_default_pings, &n);
        bench_init("lat_sched");
        loaded(cpus, n);
    } else {
        bench_fail("unknown mode %s: wake, fair or loaded", mode);
    }
    return 0;
}
