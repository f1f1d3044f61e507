/* bw_null: tinygram writes to /dev/null, which accepts every byte without
 * reading it: the cost of write() itself, for each chunk size given.
 * Usage: bw_null [-n writes] <chunk bytes>... */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_writes = 20000, k_max_chunk = 65536 };

static char g_buffer[k_max_chunk];

int main(int argc, char** argv)
{
    uint64_t writes;
    int first = bench_iterations(argc, argv, k_default_writes, &writes);
    if (first >= argc)
        bench_fail("usage: bw_null [-n writes] <chunk bytes>...");
    bench_init("bw_null");
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0)
        bench_fail("cannot open /dev/null");
    for (int i = first; i < argc; ++i) {
        uint64_t chunk = bench_number(argv[i], "chunk size");
        if (chunk > k_max_chunk)
            bench_fail("chunk size %llu is above %d", (unsigned long long)chunk, k_max_chunk);
        (void)!write(fd, g_buffer, chunk);
        struct BenchSpan span;
        bench_begin(&span);
        for (uint64_t n = 0; n < writes; ++n)
            if (write(fd, g_buffer, chunk) != (ssize_t)chunk)
                bench_fail("write(/dev/null, %llu) came up short", (unsigned long long)chunk);
        bench_end(&span);
        char name[64];
        snprintf(name, sizeof name, "bw_null.%llu", (unsigned long long)chunk);
        bench_report(name, &span, writes);
    }
    return 0;
}
