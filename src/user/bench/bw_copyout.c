/* bw_copyout: what one copyout costs, by size. Reads /dev/zero in chunks of
 * each given size (one copyout per read up to 1 KB, /dev/zero's block) and
 * reports instructions per read; under vm.split=4/4 the kernel's
 * vm.copy_fast_max= decides whether the trampoline's fast path or the kernel
 * window's slow path carries it. Before timing a size it checks the data:
 * the read must overwrite a poisoned buffer with zeros, and a pattern sent
 * through a pipe (copyin, then copyout) must come back unchanged, so a
 * broken copy path fails the program instead of reporting a number.
 * Usage: bw_copyout [-n reads] [<chunk bytes>...] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum {
    k_default_reads = 500,
    k_max_chunk = 4096, /* the trampoline's copy buffer and the pipe's capacity */
    k_poison = 0x5a,
};

/* The sizes measured when none are given: 16 bytes to a page. */
static const uint64_t k_default_sizes[] = {16,  32,  48,  64,  96,   128,  192,
                                           256, 384, 512, 768, 1024, 2048, 4096};

static char g_buffer[k_max_chunk];
static char g_pattern[k_max_chunk];

/* Fails unless a read of @p chunk bytes from @p zero turns poison into zeros. */
static void check_zero_read(int zero, uint64_t chunk)
{
    memset(g_buffer, k_poison, sizeof g_buffer);
    if (read(zero, g_buffer, chunk) != (ssize_t)chunk)
        bench_fail("read(/dev/zero, %llu) came up short", (unsigned long long)chunk);
    for (uint64_t i = 0; i < chunk; ++i)
        if (g_buffer[i] != 0)
            bench_fail("read(/dev/zero, %llu): byte %llu is 0x%02x, not 0", (unsigned long long)chunk,
                       (unsigned long long)i, (unsigned char)g_buffer[i]);
    if (chunk < k_max_chunk && (unsigned char)g_buffer[chunk] != k_poison)
        bench_fail("read(/dev/zero, %llu) wrote past its end", (unsigned long long)chunk);
}

/* Fails unless @p chunk patterned bytes survive a trip through a pipe. */
static void check_pipe_round_trip(uint64_t chunk)
{
    int fds[2];
    if (pipe(fds) < 0)
        bench_fail("pipe() failed");
    for (uint64_t i = 0; i < chunk; ++i)
        g_pattern[i] = (char)(i * 7 + chunk);
    memset(g_buffer, k_poison, sizeof g_buffer);
    if (write(fds[1], g_pattern, chunk) != (ssize_t)chunk)
        bench_fail("write(pipe, %llu) came up short", (unsigned long long)chunk);
    if (read(fds[0], g_buffer, chunk) != (ssize_t)chunk)
        bench_fail("read(pipe, %llu) came up short", (unsigned long long)chunk);
    if (memcmp(g_buffer, g_pattern, chunk) != 0)
        bench_fail("a %llu-byte pattern came back changed through a pipe", (unsigned long long)chunk);
    close(fds[0]);
    close(fds[1]);
}

/* Times @p reads reads of @p chunk bytes from @p zero and reports them. */
static void measure(int zero, uint64_t chunk, uint64_t reads)
{
    check_pipe_round_trip(chunk);
    check_zero_read(zero, chunk); /* also the warm-up: the buffer is faulted in */
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < reads; ++i)
        if (read(zero, g_buffer, chunk) != (ssize_t)chunk)
            bench_fail("read(/dev/zero, %llu) came up short", (unsigned long long)chunk);
    bench_end(&span);
    char name[64];
    snprintf(name, sizeof name, "bw_copyout.%llu", (unsigned long long)chunk);
    bench_report(name, &span, reads);
}

int main(int argc, char** argv)
{
    uint64_t reads;
    int first = bench_iterations(argc, argv, k_default_reads, &reads);
    bench_init("bw_copyout");
    int zero = open("/dev/zero", O_RDONLY);
    if (zero < 0)
        bench_fail("cannot open /dev/zero");
    if (first >= argc) {
        for (size_t i = 0; i < sizeof k_default_sizes / sizeof k_default_sizes[0]; ++i)
            measure(zero, k_default_sizes[i], reads);
        return 0;
    }
    for (int i = first; i < argc; ++i) {
        uint64_t chunk = bench_number(argv[i], "chunk size");
        if (chunk > k_max_chunk)
            bench_fail("chunk size %llu is above %d", (unsigned long long)chunk, k_max_chunk);
        measure(zero, chunk, reads);
    }
    return 0;
}
