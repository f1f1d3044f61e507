/* fpu_ctx: what FPU state costs a context switch, after LMbench's lat_ctx.
 * N processes pass a 1-byte token around a ring of pipes; with "fpu" each
 * executes one SSE (arm64: FP/SIMD) instruction every time it holds the token, with "int"
 * none does. Under fpu.switch=lazy an FPU-using process takes an #NM after
 * every switch to it (one restore) and is saved when it is switched out;
 * under eager it is saved and restored on every switch, trap-free.
 * Reports METRIC fpu_ctx.<N>p.<fpu|int> (instructions per hop, pipe
 * traffic included) and the FPU counters per 1000 hops.
 * Only steady-state hops are timed: warm-up rounds come first, and one last
 * round after the timed span releases the children, so their exit and the
 * freeing of their memory fall outside it and the per-hop figure does not
 * depend on the number of rounds.
 * Usage: fpu_ctx [-n rounds] <processes> fpu|int */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "fpu_user.h"

enum { k_default_rounds = 50, k_warmup_rounds = 2, k_max_procs = 16 };

static int g_ring[k_max_procs][2]; /* pipe i carries the token from process i to i + 1 */

static void hop(int left, int right, int fpu)
{
    char token;
    if (read(left, &token, 1) != 1)
        _exit(2);
    if (fpu)
        fpu_use_once();
    if (write(right, &token, 1) != 1)
        _exit(3);
}

int main(int argc, char** argv)
{
    uint64_t rounds;
    int first = bench_iterations(argc, argv, k_default_rounds, &rounds);
    if (argc - first != 2)
        bench_fail("usage: fpu_ctx [-n rounds] <processes> fpu|int");
    int procs = (int)bench_number(argv[first], "processes");
    int fpu = strcmp(argv[first + 1], "fpu") == 0;
    if (!fpu && strcmp(argv[first + 1], "int") != 0)
        bench_fail("the second argument is fpu or int, not %s", argv[first + 1]);
    if (procs < 2 || procs > k_max_procs)
        bench_fail("processes must be between 2 and %d", k_max_procs);
    bench_init("fpu_ctx");
    for (int i = 0; i < procs; ++i)
        if (pipe(g_ring[i]) != 0)
            bench_fail("pipe failed");
    uint64_t total = rounds + k_warmup_rounds;
    for (int i = 1; i < procs; ++i) {
        pid_t pid = fork();
        if (pid < 0)
            bench_fail("fork failed");
        if (pid == 0) {
            /* One hop more than timed: the release round after the span. */
            for (uint64_t r = 0; r <= total; ++r)
                hop(g_ring[i - 1][0], g_ring[i][1], fpu);
            _exit(0);
        }
    }
    char token = 't';
    struct BenchSpan span;
    for (uint64_t r = 0; r < total; ++r) {
        if (r == k_warmup_rounds)
            bench_begin(&span);
        if (write(g_ring[0][1], &token, 1) != 1 || read(g_ring[procs - 1][0], &token, 1) != 1)
            bench_fail("the ring broke");
        if (fpu)
            fpu_use_once();
    }
    bench_end(&span);
    /* The release round: each child passes the token on and exits. */
    if (write(g_ring[0][1], &token, 1) != 1 || read(g_ring[procs - 1][0], &token, 1) != 1)
        bench_fail("the ring broke");
    for (int i = 1; i < procs; ++i)
        wait(NULL);
    char name[64];
    snprintf(name, sizeof name, "fpu_ctx.%dp.%s", procs, fpu ? "fpu" : "int");
    bench_report(name, &span, rounds * (uint64_t)procs);
    return 0;
}
