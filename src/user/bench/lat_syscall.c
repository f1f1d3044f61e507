/* lat_syscall: the null system call. Times getppid(), which enters the kernel,
 * reads one field and returns, as LMbench's lat_syscall null does.
 * Usage: lat_syscall [-n calls] */
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_calls = 20000 };

int main(int argc, char** argv)
{
    uint64_t calls;
    bench_iterations(argc, argv, k_default_calls, &calls);
    bench_init("lat_syscall");
    /* Warm up: the first call may fault in the stack or the code page. */
    syscall(SYS_getppid);
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < calls; ++i)
        syscall(SYS_getppid); /* musl's getppid() is this call, not a cached value */
    bench_end(&span);
    bench_report("lat_syscall.getppid", &span, calls);
    return 0;
}
