/* bw_pipe_tiny: a writer sends tinygrams through a pipe to a reader that
 * reads them with the same size, as in the pipe benchmark of seed 002. How
 * often the two switch depends on the pipe's buffer, which the counters show.
 * Reports instructions per write (the reader's work included).
 * Usage: bw_pipe_tiny [-n writes] <bytes per write>... */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_writes = 4000, k_max_chunk = 4096 };

static char g_buffer[k_max_chunk];

/* The reader: takes @total bytes in reads of @chunk, acknowledges, then
 * waits for end of file, so that its exit falls outside the timing. */
static void reader(int in, int ack, uint64_t chunk, uint64_t total)
{
    uint64_t got = 0;
    while (got < total) {
        ssize_t n = read(in, g_buffer, chunk);
        if (n <= 0)
            _exit(2);
        got += (uint64_t)n;
    }
    if (write(ack, "k", 1) != 1)
        _exit(3);
    _exit(read(in, g_buffer, 1) == 0 ? 0 : 4);
}

static void measure(uint64_t chunk, uint64_t writes)
{
    int data[2], ack[2];
    if (pipe(data) != 0 || pipe(ack) != 0)
        bench_fail("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork failed");
    if (pid == 0) {
        close(data[1]);
        close(ack[0]);
        reader(data[0], ack[1], chunk, chunk * writes);
    }
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < writes; ++i)
        if (write(data[1], g_buffer, chunk) != (ssize_t)chunk)
            bench_fail("write to the pipe came up short");
    char c;
    if (read(ack[0], &c, 1) != 1)
        bench_fail("the reader did not acknowledge");
    bench_end(&span);
    close(data[1]); /* the end of file that lets the reader exit */
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || status != 0)
        bench_fail("the reader failed (status 0x%x)", status);
    close(data[0]);
    close(ack[0]);
    close(ack[1]);
    char name[64];
    snprintf(name, sizeof name, "bw_pipe_tiny.%llu", (unsigned long long)chunk);
    bench_report(name, &span, writes);
}

int main(int argc, char** argv)
{
    uint64_t writes;
    int first = bench_iterations(argc, argv, k_default_writes, &writes);
    if (first >= argc)
        bench_fail("usage: bw_pipe_tiny [-n writes] <bytes per write>...");
    bench_init("bw_pipe_tiny");
    for (int i = first; i < argc; ++i) {
        uint64_t chunk = bench_number(argv[i], "bytes per write");
        if (chunk > k_max_chunk)
            bench_fail("bytes per write %llu is above %d", (unsigned long long)chunk, k_max_chunk);
        measure(chunk, writes);
    }
    return 0;
}
