/* ut_hello: the canonical first program, musl's hello world. Its system calls
 * (set_thread_area, set_tid_address, getpid, ioctl, writev, exit_group) are
 * the first a new kernel must get right. */
#include <stdio.h>
#include <toll/utest.h>
#include <unistd.h>

int main(void)
{
    pid_t pid = getpid();
    int n = printf("hello, world from pid %d\n", pid);
    /* stdio buffers: the text reaches the kernel (through writev) here. */
    CHECK_EQ(fflush(stdout), 0);
    CHECK(n > 0);
    CHECK(pid > 0);
    CHECK_EQ(getpid(), pid);
    return utest_done();
}
