/* ut_mmap: the address space as a program sees it. Anonymous mappings come
 * zeroed and go away, mprotect changes what is allowed, MAP_FIXED puts a
 * mapping where it is told, fork copies memory, brk grows and shrinks, and
 * every forbidden access kills the process that made it with SIGSEGV. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_pages = 16,
    k_brk_grow = 64 * 1024,
};

static long g_page; /* the page size, from the kernel (arm64 may use 16 KB) */

/* What a child does to memory, at an address. */
typedef enum { k_read, k_write } Access;

/* Fork a child that reads or writes the byte at @addr. Returns the child's
 * wait status: exit 0 if the access went through, else the signal it died of. */
static int access_in_child(Access access, volatile char* addr)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (access == k_write)
            *addr = 1;
        else
            (void)*addr;
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

/* A check that a child doing @access at @addr dies of SIGSEGV. */
#define CHECK_SEGV(access, addr, desc)                                                             \
    __extension__({                                                                                \
        int status_ = access_in_child((access), (volatile char*)(addr));                           \
        utest_reportf(status_ != -1 && WIFSIGNALED(status_) && WTERMSIG(status_) == SIGSEGV,       \
                      __FILE__, __LINE__, desc, "wait status 0x%x", status_);                      \
    })

static char* map(size_t len, int prot)
{
    void* p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int all_bytes(const char* p, size_t len, char value)
{
    for (size_t i = 0; i < len; ++i)
        if (p[i] != value)
            return 0;
    return 1;
}

static void test_map_unmap(void)
{
    size_t len = k_pages * g_page;
    char* p = map(len, PROT_READ | PROT_WRITE);
    if (!CHECK_MSG(p != NULL, "mmap of 16 anonymous pages"))
        return;
    CHECK_EQ((uintptr_t)p % g_page, 0);
    CHECK_MSG(all_bytes(p, len, 0), "a new anonymous mapping reads as zeros");
    memset(p, 0x5a, len);
    CHECK_MSG(all_bytes(p, len, 0x5a), "it keeps what was written");
    CHECK_EQ(munmap(p, len), 0);
    CHECK_SEGV(k_read, p, "a read after munmap kills with SIGSEGV");
    CHECK_SEGV(k_read, p + len - 1, "so does a read of the last byte unmapped");

    /* Round trips: map and unmap many times; nothing of before shows through. */
    int zeroed = 0;
    for (int round = 0; round < 100; ++round) {
        char* q = map(len, PROT_READ | PROT_WRITE);
        if (q == NULL)
            break;
        zeroed += all_bytes(q, len, 0);
        memset(q, round + 1, len);
        munmap(q, len);
    }
    CHECK_MSG(zeroed == 100, "100 map/fill/unmap rounds, each mapping new zeros");
    CHECK_ERR(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), EINVAL);
}

static void test_unmap_middle(void)
{
    char* p = map(3 * g_page, PROT_READ | PROT_WRITE);
    if (!CHECK_MSG(p != NULL, "mmap of 3 pages"))
        return;
    memset(p, 7, 3 * g_page);
    CHECK_EQ(munmap(p + g_page, g_page), 0);
    CHECK_SEGV(k_read, p + g_page + 100, "the unmapped middle page kills a reader");
    CHECK_MSG(p[0] == 7 && p[g_page - 1] == 7, "the page before it is intact");
    CHECK_MSG(p[2 * g_page] == 7 && p[3 * g_page - 1] == 7, "the page after it is intact");
    munmap(p, 3 * g_page);
}

static void test_protect(void)
{
    char* p = map(2 * g_page, PROT_READ | PROT_WRITE);
    if (!CHECK_MSG(p != NULL, "mmap of 2 pages"))
        return;
    memset(p, 3, 2 * g_page);
    CHECK_EQ(mprotect(p, g_page, PROT_READ), 0);
    CHECK_SEGV(k_write, p + 10, "a write to a read-only page kills with SIGSEGV");
    CHECK_EQ(access_in_child(k_read, p + 10), 0);      /* reading it is fine */
    CHECK_EQ(access_in_child(k_write, p + g_page), 0); /* the next page is still writable */
    CHECK_MSG(p[10] == 3, "the read-only page kept its contents");
    CHECK_EQ(mprotect(p, g_page, PROT_NONE), 0);
    CHECK_SEGV(k_read, p, "a read of a PROT_NONE page kills with SIGSEGV");
    CHECK_EQ(mprotect(p, g_page, PROT_READ | PROT_WRITE), 0);
    p[10] = 4; /* writable again: this process would die here if not */
    CHECK_MSG(p[10] == 4 && p[11] == 3, "after PROT_READ|PROT_WRITE again the page is writable");
    /* musl's mprotect() rounds the address down to a page: ask the kernel. */
    CHECK_ERR(syscall(SYS_mprotect, p + 1, g_page, PROT_READ), EINVAL); /* not page-aligned */
    munmap(p, 2 * g_page);

    /* A read-only anonymous mapping from the start. */
    char* r = map(g_page, PROT_READ);
    if (CHECK_MSG(r != NULL, "mmap of a PROT_READ page")) {
        CHECK_MSG(r[0] == 0 && r[g_page - 1] == 0, "it reads as zeros");
        CHECK_SEGV(k_write, r, "a write to it kills with SIGSEGV");
        munmap(r, g_page);
    }
}

static void test_fixed(void)
{
    char* p = map(4 * g_page, PROT_READ | PROT_WRITE);
    if (!CHECK_MSG(p != NULL, "mmap of 4 pages"))
        return;
    memset(p, 9, 4 * g_page);
    /* Replace the second page: MAP_FIXED discards what was there. */
    char* q = mmap(p + g_page, g_page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK_MSG(q == p + g_page, "MAP_FIXED maps exactly at the address asked for");
    CHECK_MSG(q == p + g_page && all_bytes(q, g_page, 0), "the replaced page reads as zeros");
    CHECK_MSG(p[g_page - 1] == 9 && p[2 * g_page] == 9, "its neighbours are untouched");
    munmap(p, 4 * g_page);

    /* MAP_FIXED into a hole: the address was free, now it is mapped. */
    q = mmap(p, 2 * g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK_MSG(q == p, "MAP_FIXED maps into a free range");
    if (q == p) {
        CHECK_MSG(all_bytes(q, 2 * g_page, 0), "and the new pages read as zeros");
        munmap(q, 2 * g_page);
    }
    CHECK_ERR(mmap(p + 1, g_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
              EINVAL); /* MAP_FIXED needs an aligned address */
}

/* fork() gives the child a private copy: its writes never reach the parent. */
static void test_fork_copies(void)
{
    char* p = map(g_page, PROT_READ | PROT_WRITE);
    if (!CHECK_MSG(p != NULL, "mmap of 1 page"))
        return;
    p[0] = 'P';
    pid_t pid = fork();
    if (pid == 0) {
        int saw_parent = p[0] == 'P';
        p[0] = 'C';
        _exit(saw_parent && p[0] == 'C' ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child sees the parent's data");
    CHECK_MSG(p[0] == 'P', "the child's write does not reach the parent");
    munmap(p, g_page);
}

static void test_bad_pointers(void)
{
    CHECK_SEGV(k_read, NULL, "a read of address 0 kills with SIGSEGV");
    CHECK_SEGV(k_read, 0xC0000000u, "a read of kernel address 0xC0000000 kills with SIGSEGV");
    CHECK_SEGV(k_write, (uintptr_t)&test_bad_pointers,
               "a write into the program's own code kills with SIGSEGV");
}

/* brk moves the end of the heap. The raw call returns the new break, or the
 * old one when it refuses (Linux's brk(2); musl's brk() wrapper hides this). */
static void test_brk(void)
{
    uintptr_t start = (uintptr_t)syscall(SYS_brk, 0);
    CHECK(start != 0);
    uintptr_t base = (start + g_page - 1) & ~(uintptr_t)(g_page - 1);
    uintptr_t grown = (uintptr_t)syscall(SYS_brk, base + k_brk_grow);
    if (!CHECK_EQ(grown, base + k_brk_grow))
        return;
    char* heap = (char*)base;
    CHECK_MSG(all_bytes(heap, k_brk_grow, 0), "memory brk adds reads as zeros");
    memset(heap, 0x11, k_brk_grow);
    CHECK_MSG(all_bytes(heap, k_brk_grow, 0x11), "and keeps what was written");
    CHECK_EQ(syscall(SYS_brk, base + g_page), base + g_page); /* shrink */
    CHECK_MSG(heap[0] == 0x11, "the page still below the break is kept");
    CHECK_SEGV(k_read, heap + 2 * g_page, "a read above the shrunk break kills with SIGSEGV");
    CHECK_EQ(syscall(SYS_brk, base + 2 * g_page), base + 2 * g_page); /* grow again */
    CHECK_MSG(heap[g_page] == 0 && heap[2 * g_page - 1] == 0,
              "a page brk gives back and takes again reads as zeros");
    CHECK_EQ(syscall(SYS_brk, start), start); /* back to where it began */
}

int main(void)
{
    g_page = sysconf(_SC_PAGESIZE);
    test_map_unmap();
    test_unmap_middle();
    test_protect();
    test_fixed();
    test_fork_copies();
    test_bad_pointers();
    test_brk();
    return utest_done();
}
