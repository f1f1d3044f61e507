/* ut_isolation: the isolation self-check over real processes. Several
 * children map memory low, high and (under 4/4) where the kernel's text lives
 * in its own space, then wait; the parent asks the kernel (Toll's call 1003)
 * to walk the user page directory of every live process. Under 3/1-pti and
 * 4/4 each may hold only user page tables and the trampoline; under 3/1 its
 * kernel quarter must be the kernel's. A layout that leaked one kernel entry
 * into a user directory would be counted. */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "toll/toll.h"
#include "toll/utest.h"

enum { k_children = 4, k_check_isolation = TOLL_SYS_check_isolation };

int main(void)
{
    unsigned long long user_limit = 0;
    if (counter_get("vm.user_limit", &user_limit) != 0) {
        SKIP("the isolation check", "not running on Toll");
        return utest_done();
    }
    int go[2], ready[2];
    CHECK_EQ(pipe(go), 0);
    CHECK_EQ(pipe(ready), 0);
    pid_t kids[k_children];
    for (int i = 0; i < k_children; ++i) {
        kids[i] = fork();
        if (kids[i] == 0) {
            close(go[1]); /* else no child would ever see end of file */
            close(ready[0]);
            uintptr_t places[] = {0x20000000u + i * 0x400000u, 0xB0000000u, 0xC0100000u};
            for (int j = 0; j < 3; ++j) {
                if (places[j] + 0x10000 > user_limit)
                    continue;
                char* p = mmap((void*)places[j], 0x10000, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
                if (p != MAP_FAILED)
                    p[0] = p[0x8000] = (char)i; /* make the page tables exist */
            }
            char c = 1;
            write(ready[1], &c, 1);
            read(go[0], &c, 1); /* stay alive until the check is done */
            _exit(0);
        }
        CHECK(kids[i] > 0);
    }
    for (int i = 0; i < k_children; ++i) {
        char c;
        CHECK_EQ(read(ready[0], &c, 1), 1);
    }
    unsigned directories = 0;
    long violations = syscall(k_check_isolation, &directories);
    NOTE("checked %u user directories, %ld bad entries", directories, violations);
    CHECK_EQ(violations, 0);
    CHECK(directories >= 1 + k_children);
    CHECK(syscall(k_check_isolation, (void*)0xFFFFF000u) == -1); /* a bad pointer: EFAULT */
    close(go[1]); /* the children read EOF and exit */
    for (int i = 0; i < k_children; ++i) {
        int status;
        CHECK_EQ(waitpid(kids[i], &status, 0), kids[i]);
    }
    return utest_done();
}
