/* bench.h: what every Toll benchmark shares: the instruction clock, snapshots
 * of the kernel's event counters taken around a timed loop, and the METRIC
 * records that report instructions and events per operation. */
#ifndef TOLL_BENCH_H
#define TOLL_BENCH_H

#include <stdint.h>

/** The most counters a snapshot holds; the kernel has a few dozen. */
enum { BENCH_MAX_COUNTERS = 192 };

/** Counter deltas are reported in events per this many operations. */
enum { BENCH_PER = 1000 };

/**
 * The cycle counter: the TSC on i386 (rdtsc), CNTVCT_EL0 on arm64. In
 * deterministic mode (tools/run --deterministic) it counts guest
 * instructions, so a difference of two readings is a path length.
 */
static inline uint64_t bench_clock(void)
{
#if defined(__i386__)
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
#error "bench_clock: no cycle counter for this architecture"
#endif
}

/** A measurement in progress: the clock and every counter at its start. */
struct BenchSpan {
    uint64_t start;
    uint64_t end;
    uint64_t before[BENCH_MAX_COUNTERS];
    uint64_t after[BENCH_MAX_COUNTERS];
};

/**
 * Reads the names of the kernel's counters and measures what taking a
 * snapshot costs in events, so that bench_report() can subtract it.
 * @p program names the benchmark in error messages. Exits with status 1 on a
 * kernel whose counter call fails; on a kernel without it (ENOSYS: Linux)
 * there are no counters and only instructions are reported.
 */
void bench_init(const char* program);

/** Snapshots the counters, then reads the clock. Call right before the loop. */
void bench_begin(struct BenchSpan* span);

/** Reads the clock, then snapshots the counters. Call right after the loop. */
void bench_end(struct BenchSpan* span);

/**
 * For an operation timed one at a time between untimed preparations: an
 * empty total (after bench_init), and the sum of finished spans added to it
 * one by one, with each span's snapshot events taken out. bench_report() of
 * the total then gives instructions and events per operation.
 */
void bench_span_clear(struct BenchSpan* total);
void bench_span_add(struct BenchSpan* total, const struct BenchSpan* one);

/** Instructions per operation of a finished span: (end - start) / @p ops, rounded. */
uint64_t bench_per_op(const struct BenchSpan* span, uint64_t ops);

/**
 * Prints `METRIC <name> <instructions per operation> instr`, then for every
 * counter that changed `METRIC <name>.<counter> <events per 1000 operations>
 * per1000`, rounded to the nearest integer, with the events caused by the
 * snapshots themselves subtracted. A counter that rounds to 0 (fewer than
 * half an event per 1000 operations) is left out.
 */
void bench_report(const char* name, const struct BenchSpan* span, uint64_t ops);

/** Prints `METRIC <name> <value> <unit>`. */
void bench_metric(const char* name, long long value, const char* unit);

/** Prints a diagnostic on stderr and exits with status 1. */
void bench_fail(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/**
 * Parses "-n <count>" from the front of argv: the number of operations to
 * time, or @p fallback. Returns the index of the first other argument.
 */
int bench_iterations(int argc, char** argv, uint64_t fallback, uint64_t* iterations);

/** Parses a positive decimal argument, or fails naming @p what. */
uint64_t bench_number(const char* text, const char* what);

#endif /* TOLL_BENCH_H */
