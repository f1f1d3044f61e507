/* lat_ctx: context switch time, after LMbench's lat_ctx. N processes form a
 * ring of pipes and pass a 1-byte token around it; each, on receiving the
 * token, reads all S KB of its own memory (so the switch also costs the
 * caches and TLB entries that memory needs) and passes the token on. The
 * same pipe traffic and memory reads done by one process with no switch are
 * the overhead, subtracted as LMbench does.
 * Usage: lat_ctx [-n rounds] <processes> <KB per process> */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_rounds = 50, k_warmup_rounds = 2, k_max_procs = 16 };

static int g_ring[k_max_procs][2]; /* pipe i carries the token from process i to i + 1 */
static int g_release[2];           /* its end of file lets the ring processes exit */
static volatile int g_sink;        /* keeps the sum of the memory reads alive */

/* Reads every word of @data: what LMbench's sumit() does. */
static void touch(const int* data, size_t words)
{
    int sum = 0;
    for (size_t i = 0; i < words; ++i)
        sum += data[i];
    g_sink = sum;
}

static int* own_memory(size_t words)
{
    int* data = malloc(words * sizeof *data + sizeof *data);
    if (!data)
        bench_fail("out of memory");
    for (size_t i = 0; i < words; ++i)
        data[i] = (int)i; /* written, so every page is really there */
    return data;
}

/* Receive the token from the left, touch the memory, pass it to the right. */
static void hop(int left, int right, const int* data, size_t words)
{
    char token;
    if (read(left, &token, 1) != 1)
        _exit(2);
    touch(data, words);
    if (write(right, &token, 1) != 1)
        _exit(3);
}

/* One process doing the same pipe writes, reads and memory reads as one
 * round of the ring, with no context switch: the overhead of @procs hops. */
static void overhead_round(int procs, const int* data, size_t words)
{
    char token = 't';
    for (int i = 0; i < procs; ++i) {
        if (write(g_ring[i][1], &token, 1) != 1 || read(g_ring[i][0], &token, 1) != 1)
            bench_fail("the overhead pipes failed");
        touch(data, words);
    }
}

int main(int argc, char** argv)
{
    uint64_t rounds;
    int first = bench_iterations(argc, argv, k_default_rounds, &rounds);
    if (argc - first != 2)
        bench_fail("usage: lat_ctx [-n rounds] <processes> <KB per process>");
    int procs = (int)bench_number(argv[first], "processes");
    uint64_t kb = 0;
    if (argv[first + 1][0] != '0' || argv[first + 1][1])
        kb = bench_number(argv[first + 1], "KB per process");
    if (procs < 2 || procs > k_max_procs)
        bench_fail("processes must be between 2 and %d", k_max_procs);
    size_t words = (size_t)kb * 1024 / sizeof(int);
    bench_init("lat_ctx");
    for (int i = 0; i < procs; ++i)
        if (pipe(g_ring[i]) != 0)
            bench_fail("pipe failed");
    if (pipe(g_release) != 0)
        bench_fail("pipe failed");

    char name[64];
    char what[64];
    snprintf(name, sizeof name, "lat_ctx.%dp_%lluk", procs, (unsigned long long)kb);

    /* The overhead first, in this process alone. */
    int* data = own_memory(words);
    for (int i = 0; i < k_warmup_rounds; ++i)
        overhead_round(procs, data, words);
    struct BenchSpan overhead;
    bench_begin(&overhead);
    for (uint64_t r = 0; r < rounds; ++r)
        overhead_round(procs, data, words);
    bench_end(&overhead);
    uint64_t hops = rounds * (uint64_t)procs;

    /* Process i (1 .. procs-1) takes the token from pipe i-1 and gives it to
     * pipe i; this process is number 0 and closes the ring. */
    pid_t pids[k_max_procs];
    for (int i = 1; i < procs; ++i) {
        pids[i] = fork();
        if (pids[i] < 0)
            bench_fail("fork failed");
        if (pids[i] == 0) {
            close(g_release[1]);
            int* mine = own_memory(words);
            for (uint64_t r = 0; r < rounds + k_warmup_rounds; ++r)
                hop(g_ring[i - 1][0], g_ring[i][1], mine, words);
            /* Exit only once the timing is over. */
            char c;
            _exit(read(g_release[0], &c, 1) == 0 ? 0 : 4);
        }
    }
    char token = 't';
    struct BenchSpan ring;
    for (uint64_t r = 0; r < rounds + k_warmup_rounds; ++r) {
        if (r == k_warmup_rounds)
            bench_begin(&ring);
        if (write(g_ring[0][1], &token, 1) != 1 || read(g_ring[procs - 1][0], &token, 1) != 1)
            bench_fail("the ring broke");
        touch(data, words);
    }
    bench_end(&ring);
    close(g_release[1]);
    for (int i = 1; i < procs; ++i) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) != pids[i] || status != 0)
            bench_fail("ring process %d failed (status 0x%x)", i, status);
    }

    uint64_t per_hop = bench_per_op(&ring, hops);
    uint64_t cost = bench_per_op(&overhead, hops);
    bench_metric(name, (long long)per_hop - (long long)cost, "instr");
    snprintf(what, sizeof what, "%s.hop", name);
    bench_report(what, &ring, hops);
    snprintf(what, sizeof what, "%s.overhead", name);
    bench_metric(what, (long long)cost, "instr");
    return 0;
}
