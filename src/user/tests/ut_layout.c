/* ut_layout: what the address-space layout (vm.split=) means for a program.
 * Under 4/4 a program can map memory where the kernel's text lives in the
 * kernel's own space (0xC0100000) and gets its own zeroed page there; under
 * 3/1 that address is the kernel's and mmap refuses. And every copy between
 * kernel and user behaves at the edges: around the 4/4 fast-path threshold,
 * across pages, from unmapped or into read-only memory, at the very top of
 * user space and wrapping around. On Linux the counters are missing and the
 * layout checks are skipped. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "toll/toll.h"
#include "toll/utest.h"

static long g_page; /* the page size, from the kernel (AT_PAGESZ) */
static const uintptr_t k_kernel_text = 0xC0100000u;

/* write(2) and read(2) without musl in between: the kernel sees our pointer. */
static long raw_write(int fd, uintptr_t buf, uintptr_t n)
{
    long r = syscall(SYS_write, fd, buf, n);
    return r < 0 ? -errno : r;
}

static long raw_read(int fd, uintptr_t buf, uintptr_t n)
{
    long r = syscall(SYS_read, fd, buf, n);
    return r < 0 ? -errno : r;
}

static void check_high_mapping(unsigned long long user_limit)
{
    void* want = (void*)k_kernel_text;
    void* p = mmap(want, 16 * g_page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (user_limit > k_kernel_text) {
        CHECK_MSG(p == want, "4/4: MAP_FIXED at 0xC0100000 succeeds");
        if (p != want)
            return;
        volatile uint32_t* w = p;
        /* A fresh anonymous page reads zero: not the kernel's text (which
         * starts with the multiboot header, 0x1BADB002). */
        CHECK_EQ(w[0], 0u);
        for (int i = 0; i < 16 * g_page / 4; i += 1024)
            w[i] = 0xA5A50000u + i;
        int same = 1;
        for (int i = 0; i < 16 * g_page / 4; i += 1024)
            same &= w[i] == 0xA5A50000u + i;
        CHECK_MSG(same, "4/4: our own data reads back from 0xC0100000");
        /* The kernel copies to and from it like any user memory. */
        int fd = open("/dev/zero", O_RDONLY);
        CHECK_EQ(raw_read(fd, (uintptr_t)p + 100, 300), 300);
        CHECK_EQ(w[25], 0u);
        close(fd);
        CHECK_EQ(munmap(p, 16 * g_page), 0);
    } else {
        CHECK_MSG(p == MAP_FAILED && errno == ENOMEM,
                  "3/1: MAP_FIXED at 0xC0100000 is refused with ENOMEM");
    }
}

static void check_copy_edges(unsigned long long fast_max, unsigned long long user_limit)
{
    int zero = open("/dev/zero", O_RDONLY);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    /* Two pages; a buffer of n bytes straddles the boundary between them. */
    char* two = mmap(NULL, 2 * g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED);
    unsigned long long sizes[] = {fast_max ? fast_max - 1 : 1, fast_max, fast_max + 1, 2000};
    for (int i = 0; i < 4; ++i) {
        uintptr_t n = sizes[i] ? sizes[i] : 1;
        char* buf = two + g_page - n / 2;
        memset(buf, 0xEE, n);
        CHECK_EQ(raw_read(zero, (uintptr_t)buf, n), (long)n); /* copyout */
        int zeroed = 1;
        for (uintptr_t j = 0; j < n; ++j)
            zeroed &= buf[j] == 0;
        CHECK_MSG(zeroed, "copyout across a page boundary delivers every byte");
        /* A pipe holds 4096 bytes: larger writes would wait for a reader. */
        if (n > 4096)
            continue;
        for (uintptr_t j = 0; j < n; ++j)
            buf[j] = (char)(j * 7);
        CHECK_EQ(raw_write(p[1], (uintptr_t)buf, n), (long)n); /* copyin */
        static char back[4096];
        CHECK_EQ(read(p[0], back, n), (long)n);
        CHECK_MSG(memcmp(back, buf, n) == 0, "copyin across a page boundary carries every byte");
    }
    /* From unmapped memory: the second page goes away. */
    CHECK_EQ(munmap(two + g_page, g_page), 0);
    CHECK_EQ(raw_write(p[1], (uintptr_t)two + g_page - 16, 32), -EFAULT);
    CHECK_EQ(raw_read(zero, (uintptr_t)two + g_page - 16, 32), -EFAULT);
    CHECK_EQ(raw_write(p[1], (uintptr_t)two + g_page, 8), -EFAULT);
    /* Into read-only memory. */
    char* ro = mmap(NULL, g_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK_EQ(raw_read(zero, (uintptr_t)ro, 16), -EFAULT);
    CHECK_EQ(raw_read(zero, (uintptr_t)ro, 3000), -EFAULT);
    /* Ending exactly at the top of user space (the top of the stack, which
     * holds our environment strings): reading it works, one byte more fails. */
    if (user_limit) {
        CHECK_EQ(raw_write(p[1], (uintptr_t)(user_limit - 16), 16), 16);
        char sink[32];
        read(p[0], sink, 16);
        CHECK_EQ(raw_write(p[1], (uintptr_t)(user_limit - 16), 17), -EFAULT);
        CHECK_EQ(raw_write(p[1], (uintptr_t)user_limit, 1), -EFAULT);
    }
    /* Wrapping around the top of the address space. */
    CHECK_EQ(raw_write(p[1], (uintptr_t)0xFFFFFFF0u, 0x20), -EFAULT);
    CHECK_EQ(raw_read(zero, (uintptr_t)two, (uintptr_t)0 - (uintptr_t)two + 16), -EFAULT);
    close(zero);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    g_page = sysconf(_SC_PAGESIZE);
    unsigned long long user_limit = 0, fast_max = 0;
    if (counter_get("vm.user_limit", &user_limit) != 0) {
        SKIP("the layout checks", "not running on Toll (no vm.user_limit counter)");
        return utest_done();
    }
    counter_get("vm.copy.fast_max", &fast_max);
    NOTE("user space ends at 0x%llx; copies of at most %llu bytes take the fast path",
         user_limit, fast_max);
    check_high_mapping(user_limit);
    check_copy_edges(fast_max, user_limit);
    return utest_done();
}
