/* lat_pipe: a 1-byte ping-pong between two processes over two pipes. Each
 * round trip is two writes, two reads and two context switches.
 * Usage: lat_pipe [-n round trips] */
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_trips = 2000, k_warmup_trips = 10 };

/* The child: echo every byte back until @trips bytes have come and gone,
 * then wait for end of file, so that its exit falls outside the timing. */
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

int main(int argc, char** argv)
{
    uint64_t trips;
    bench_iterations(argc, argv, k_default_trips, &trips);
    bench_init("lat_pipe");
    int to_child[2], to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0)
        bench_fail("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork failed");
    if (pid == 0) {
        close(to_child[1]);
        close(to_parent[0]);
        echo(to_child[0], to_parent[1], trips + k_warmup_trips);
    }
    for (int i = 0; i < k_warmup_trips; ++i)
        ping(to_child[1], to_parent[0]);
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < trips; ++i)
        ping(to_child[1], to_parent[0]);
    bench_end(&span);
    close(to_child[1]); /* the end of file that lets the child exit */
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || status != 0)
        bench_fail("the echo process failed (status 0x%x)", status);
    bench_report("lat_pipe.roundtrip", &span, trips);
    return 0;
}
