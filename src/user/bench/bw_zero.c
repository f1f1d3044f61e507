/* bw_zero: reading /dev/zero in chunks of a given size. Small chunks
 * ("tinygrams") pay the system call once per few bytes; the seeds compare 5
 * with 1500 bytes. Reports instructions per read() and bytes per 1000
 * instructions.
 * Usage: bw_zero [-n reads] <chunk bytes>... */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum {
    k_default_reads = 2000,
    k_max_chunk = 1024 * 1024,
    k_bytes_per_kinstr = 1000, /* bandwidth unit: bytes per 1000 instructions */
};

/* Reads @p reads chunks of @p chunk bytes from @p fd and reports them. */
static void measure(int fd, char* buffer, uint64_t chunk, uint64_t reads)
{
    if (read(fd, buffer, chunk) != (ssize_t)chunk) /* warm-up: faults the buffer in */
        bench_fail("read(/dev/zero, %llu) came up short", (unsigned long long)chunk);
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < reads; ++i)
        if (read(fd, buffer, chunk) != (ssize_t)chunk)
            bench_fail("read(/dev/zero, %llu) came up short", (unsigned long long)chunk);
    bench_end(&span);
    char name[64];
    snprintf(name, sizeof name, "bw_zero.%llu", (unsigned long long)chunk);
    bench_report(name, &span, reads);
    uint64_t instructions = span.end - span.start;
    snprintf(name, sizeof name, "bw_zero.%llu.bandwidth", (unsigned long long)chunk);
    bench_metric(name, (long long)(chunk * reads * k_bytes_per_kinstr / instructions), "B/kinstr");
}

int main(int argc, char** argv)
{
    uint64_t reads;
    int first = bench_iterations(argc, argv, k_default_reads, &reads);
    if (first >= argc)
        bench_fail("usage: bw_zero [-n reads] <chunk bytes>...");
    bench_init("bw_zero");
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0)
        bench_fail("cannot open /dev/zero");
    char* buffer = malloc(k_max_chunk);
    if (!buffer)
        bench_fail("out of memory");
    for (int i = first; i < argc; ++i) {
        uint64_t chunk = bench_number(argv[i], "chunk size");
        if (chunk > k_max_chunk)
            bench_fail("chunk size %llu is above %d", (unsigned long long)chunk, k_max_chunk);
        measure(fd, buffer, chunk, reads);
    }
    return 0;
}
