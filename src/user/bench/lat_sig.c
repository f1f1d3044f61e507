/* lat_sig: catching a signal, as LMbench's lat_sig catch does. Times
 * kill(getpid(), SIGUSR1) with a handler installed: the system call, the
 * signal frame the kernel builds on the way out, the handler, and the
 * sigreturn that undoes the frame. Usage: lat_sig [-n signals] */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_signals = 5000 };

static volatile sig_atomic_t g_caught;

static void on_usr1(int sig)
{
    (void)sig;
    ++g_caught;
}

int main(int argc, char** argv)
{
    uint64_t signals;
    bench_iterations(argc, argv, k_default_signals, &signals);
    bench_init("lat_sig");
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        bench_fail("lat_sig: sigaction failed");
    pid_t self = getpid();
    syscall(SYS_kill, self, SIGUSR1); /* warm up: the handler's page, the stack */
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < signals; ++i)
        syscall(SYS_kill, self, SIGUSR1);
    bench_end(&span);
    if (g_caught != (sig_atomic_t)(signals + 1))
        bench_fail("lat_sig: %d signals caught, expected %llu", (int)g_caught,
                   (unsigned long long)signals + 1);
    bench_report("lat_sig.catch", &span, signals);
    return 0;
}
