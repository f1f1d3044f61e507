/* bench.c: the instruction clock, counter snapshots and METRIC records shared
 * by every benchmark (see bench.h). Records are written with write(2), never
 * through stdio's buffer, so a fork cannot print them twice. */
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <toll/toll.h>
#include <unistd.h>

enum {
    k_list_size = 16 * 1024, /* room for every "name value" line */
    k_pool_size = 6144,      /* room for every counter name */
    k_baseline_rounds = 3,   /* empty spans whose cheapest sets the overhead */
};

/* The data of the benchmark programs is kept small on purpose: fork copies
 * every page of it, so a fat harness would inflate lat_fork_exit. */
static const char* g_program = "bench";
static int g_count;
static char g_pool[k_pool_size];                /* the names, each ending in '\0' */
static const char* g_names[BENCH_MAX_COUNTERS]; /* into g_pool */
/* Events that a begin/end pair causes by itself (its counter_get calls). */
static int64_t g_overhead[BENCH_MAX_COUNTERS];
/* Whether the kernel samples (booted with profile.us=): each span is then
 * profiled, the timed loop alone (tools/bench --profile). */
static int g_profiling;

void bench_fail(const char* fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(line, sizeof line, "%s: ", g_program);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    if (len + 1 < sizeof line)
        line[len++] = '\n';
    (void)!write(2, line, len);
    _exit(1);
}

/* Reads every counter, in the order of g_names, into @values. */
static void snapshot(uint64_t* values)
{
    for (int i = 0; i < g_count; ++i) {
        unsigned long long v = 0;
        if (counter_get(g_names[i], &v) < 0)
            bench_fail("counter_get(%s): %s", g_names[i], strerror(errno));
        values[i] = v;
    }
}

void bench_begin(struct BenchSpan* span)
{
    snapshot(span->before);
    if (g_profiling)
        profile(1);
    span->start = bench_clock();
}

void bench_end(struct BenchSpan* span)
{
    span->end = bench_clock();
    if (g_profiling)
        profile(0);
    snapshot(span->after);
}

void bench_span_clear(struct BenchSpan* total)
{
    memset(total, 0, sizeof *total);
    /* bench_report subtracts one snapshot's events: the sum below already
     * has them subtracted, so give one back. */
    for (int i = 0; i < g_count; ++i)
        total->after[i] = (uint64_t)g_overhead[i];
}

void bench_span_add(struct BenchSpan* total, const struct BenchSpan* one)
{
    total->end += one->end - one->start;
    for (int i = 0; i < g_count; ++i)
        total->after[i] += one->after[i] - one->before[i] - (uint64_t)g_overhead[i];
}

void bench_init(const char* program)
{
    g_program = program;
    /* The listing is needed once: map it, read the names, unmap it. */
    char* list =
        mmap(NULL, k_list_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (list == MAP_FAILED)
        bench_fail("mmap failed");
    long n = counter_list(list, k_list_size - 1);
    if (n < 0 && errno == ENOSYS) {
        /* Another kernel (Linux, for tools/bench --linux): the same binary
         * measures instructions only. */
        munmap(list, k_list_size);
        g_count = 0;
        return;
    }
    if (n < 0)
        bench_fail("counter_list: %s (not a Toll kernel?)", strerror(errno));
    list[n] = '\0';
    g_count = 0;
    size_t used = 0;
    for (char* line = list; *line;) {
        char* end = strchr(line, '\n');
        if (end)
            *end = '\0';
        size_t name_length = strcspn(line, " ");
        if (g_count == BENCH_MAX_COUNTERS || used + name_length + 1 > sizeof g_pool)
            bench_fail("more counters than bench.h has room for");
        if (name_length > 0) {
            memcpy(g_pool + used, line, name_length);
            g_pool[used + name_length] = '\0';
            g_names[g_count++] = g_pool + used;
            used += name_length + 1;
        }
        if (!end)
            break;
        line = end + 1;
    }
    munmap(list, k_list_size);
    g_profiling = profile(0) == 0;
    /* The snapshots are system calls that copy in and out, so they move
     * counters themselves; an empty span shows by how much. A timer tick can
     * land inside one empty span, so the cheapest of a few is taken. */
    struct BenchSpan empty;
    for (int round = 0; round < k_baseline_rounds; ++round) {
        bench_begin(&empty);
        bench_end(&empty);
        for (int i = 0; i < g_count; ++i) {
            int64_t d = (int64_t)(empty.after[i] - empty.before[i]);
            if (round == 0 || d < g_overhead[i])
                g_overhead[i] = d;
        }
    }
}

uint64_t bench_per_op(const struct BenchSpan* span, uint64_t ops)
{
    return ops ? (span->end - span->start + ops / 2) / ops : 0;
}

void bench_metric(const char* name, long long value, const char* unit)
{
    char line[160];
    int n = snprintf(line, sizeof line, "METRIC %s %lld %s\n", name, value, unit);
    if (n > 0 && (size_t)n < sizeof line)
        (void)!write(1, line, (size_t)n);
}

/* @delta events over @ops operations, in events per BENCH_PER operations,
 * rounded to the nearest integer (halves away from zero). */
static long long per_thousand(int64_t delta, uint64_t ops)
{
    long long scaled = (long long)delta * BENCH_PER;
    long long half = (long long)(ops / 2);
    return scaled >= 0 ? (scaled + half) / (long long)ops : -((-scaled + half) / (long long)ops);
}

void bench_report(const char* name, const struct BenchSpan* span, uint64_t ops)
{
    if (ops == 0)
        bench_fail("%s: no operations to report", name);
    bench_metric(name, (long long)bench_per_op(span, ops), "instr");
    char metric[160];
    for (int i = 0; i < g_count; ++i) {
        int64_t delta = (int64_t)(span->after[i] - span->before[i]) - g_overhead[i];
        long long per = per_thousand(delta, ops);
        if (per == 0)
            continue; /* fewer than half an event per BENCH_PER operations */
        snprintf(metric, sizeof metric, "%s.%s", name, g_names[i]);
        bench_metric(metric, per, "per1000");
    }
}

uint64_t bench_number(const char* text, const char* what)
{
    char* end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || !end || *end || end == text || v == 0)
        bench_fail("%s must be a positive number, not '%s'", what, text);
    return v;
}

int bench_iterations(int argc, char** argv, uint64_t fallback, uint64_t* iterations)
{
    *iterations = fallback;
    if (argc >= 3 && strcmp(argv[1], "-n") == 0) {
        *iterations = bench_number(argv[2], "-n");
        return 3;
    }
    return 1;
}
