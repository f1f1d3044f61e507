/* lat_fork_exit: fork a child that exits at once, and wait for it: the whole
 * life of a process that runs no code of its own (LMbench's lat_proc fork).
 * Usage: lat_fork_exit [-n processes] */
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_forks = 50 };

static void fork_exit_wait(void)
{
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork failed");
    if (pid == 0)
        _exit(0);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || status != 0)
        bench_fail("the child failed (status 0x%x)", status);
}

int main(int argc, char** argv)
{
    uint64_t forks;
    bench_iterations(argc, argv, k_default_forks, &forks);
    bench_init("lat_fork_exit");
    fork_exit_wait(); /* warm-up */
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < forks; ++i)
        fork_exit_wait();
    bench_end(&span);
    bench_report("lat_fork_exit.fork_exit_wait", &span, forks);
    return 0;
}
