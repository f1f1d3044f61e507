/* ut_tls_segments: a program that pulls its TLS segment out from under its own
 * segment registers must not take the kernel down with it. It loads the TLS
 * selector into %fs, then asks set_thread_area for a not-present segment in
 * the same slot: the kernel's exit path would fault restoring %fs if it did
 * not null the register. The child doing this may die (Linux also nulls it),
 * but the parent, and the kernel, go on. */
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "toll/utest.h"

/* Linux's struct user_desc (asm/ldt.h). */
struct user_desc {
    unsigned int entry_number;
    unsigned int base_addr;
    unsigned int limit;
    unsigned int flags;
};
enum { k_seg_32bit = 1, k_limit_in_pages = 1 << 4, k_not_present = 1 << 5, k_useable = 1 << 6 };

static unsigned current_gs(void)
{
    unsigned gs;
    __asm__ volatile("movl %%gs, %0" : "=r"(gs));
    return gs;
}

int main(void)
{
    unsigned gs = current_gs();
    NOTE("musl's TLS selector is 0x%x", gs);
    CHECK(gs != 0);
    pid_t pid = fork();
    if (pid == 0) {
        __asm__ volatile("movl %0, %%fs" : : "r"(gs)); /* fs = the TLS selector too */
        struct user_desc d = {gs >> 3, 0, 0, k_seg_32bit | k_limit_in_pages | k_not_present};
        long r = syscall(SYS_set_thread_area, &d);
        unsigned fs;
        __asm__ volatile("movl %%fs, %0" : "=r"(fs));
        /* Back in user mode after the call: the kernel survived its exit path. */
        _exit(r == 0 && fs == 0 ? 0 : 3);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    /* The child either got back with %fs nulled, or died of its own next
     * TLS access (musl reads %gs:0, which now holds the same dead selector):
     * a fault of the program, reported as a signal. A kernel that restored
     * the dead selector on its exit path would have panicked instead. */
    CHECK_MSG((WIFEXITED(status) && WEXITSTATUS(status) == 0) || WIFSIGNALED(status),
              "the child came back from set_thread_area, or died of its own fault");
    /* And the system still runs programs. */
    pid = fork();
    if (pid == 0) {
        execl("/bin/true", "true", (char*)0);
        _exit(127);
    }
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return utest_done();
}
