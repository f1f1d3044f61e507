/* lat_exec: fork a child that executes a new program (this one, told to exit
 * at once), and wait for it: fork + exec + exit (LMbench's lat_proc exec).
 * Usage: lat_exec [-n processes] */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_execs = 30 };

static const char k_child_flag[] = "--exit-at-once";

static void fork_exec_wait(const char* path)
{
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork failed");
    if (pid == 0) {
        char* const argv[] = {(char*)"lat_exec", (char*)k_child_flag, NULL};
        char* const envp[] = {NULL};
        execve(path, argv, envp);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || status != 0)
        bench_fail("the child failed (status 0x%x; 127: exec of %s failed)", status, path);
}

int main(int argc, char** argv)
{
    if (argc == 2 && strcmp(argv[1], k_child_flag) == 0)
        return 0;
    uint64_t execs;
    bench_iterations(argc, argv, k_default_execs, &execs);
    bench_init("lat_exec");
    static char path[128] = "/bin/";
    const char* self = argc > 0 && argv[0] ? argv[0] : "lat_exec";
    if (strchr(self, '/'))
        path[0] = '\0';
    strncat(path, self, sizeof path - strlen(path) - 1);
    fork_exec_wait(path); /* warm-up, and proof that the path is right */
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < execs; ++i)
        fork_exec_wait(path);
    bench_end(&span);
    bench_report("lat_exec.fork_exec_exit", &span, execs);
    return 0;
}
