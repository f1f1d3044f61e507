/* ut_manymaps: the address space stays cheap with many mappings, and the
 * kernel gives its memory back. A child makes 50,000 one-page mappings; the
 * next mmap, a page fault, an mprotect and a munmap among them must each visit
 * only a logarithmic number of region-tree nodes (the kernel counts them in
 * vm.regions.steps: a deterministic cost, not a time). Then a burst of
 * processes holding thousands of mappings and touched pages exits, and the
 * available pages (vm.phys.available_pages: free, or held unused by a superpage
 * reservation) must come back to within a few pages of the
 * start, the kernel heap included. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_many = 50000,      /* mappings in the big child */
    k_burst = 12,        /* processes in the burst */
    k_burst_maps = 3000, /* mappings each of them holds */
    k_step_bound = 400,  /* a list walk would take ~50,000 steps */
    k_leak_bound = 4,    /* pages: a slab page or two may stay half used */
};

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    if (counter_get(name, &v) != 0)
        return ~0ull;
    return v;
}

/* What the big child reports to its parent. */
struct Costs {
    long mapped;
    unsigned long long mmap, fault, mprotect, munmap, heap_pages;
};

static char* g_maps[k_many];

static void many_child(int fd, long page)
{
    struct Costs c = {0};
    for (long i = 0; i < k_many; ++i) {
        /* Alternate the rights so that no two neighbours could ever merge. */
        int prot = (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE;
        char* p = mmap(NULL, page, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            break; /* a small user space (see main) */
        g_maps[c.mapped++] = p;
    }
    /* One in the middle, writable, with a mapped page below it. */
    char* last = c.mapped > 4 ? g_maps[(c.mapped / 2) & ~1L] : MAP_FAILED;
    /* Full: free the lowest page, so the next mmap must find the one hole
     * at the very bottom. */
    if (c.mapped < k_many && c.mapped > 0)
        munmap(g_maps[--c.mapped], page);
    unsigned long long s = counter("vm.regions.steps");
    char* one = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    c.mmap = counter("vm.regions.steps") - s;
    if (one == MAP_FAILED)
        c.mapped = -1;
    s = counter("vm.regions.steps");
    if (last != MAP_FAILED)
        last[0] = 1; /* a page fault in the middle of the tree */
    c.fault = counter("vm.regions.steps") - s;
    s = counter("vm.regions.steps");
    if (last == MAP_FAILED || mprotect(last, page, PROT_READ) != 0)
        c.mapped = -2;
    c.mprotect = counter("vm.regions.steps") - s;
    s = counter("vm.regions.steps");
    if (last == MAP_FAILED || munmap(last - page, page) != 0)
        c.mapped = -3;
    c.munmap = counter("vm.regions.steps") - s;
    c.heap_pages = counter("vm.kmalloc.pages");
    write(fd, &c, sizeof c);
    _exit(0); /* exit frees all 50,000 */
}

static void burst_child(int ready, int go, long page)
{
    for (long i = 0; i < k_burst_maps; ++i) {
        int prot = (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE;
        char* p = mmap(NULL, page, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            _exit(2);
        if (i % 4 == 0)
            p[0] = 1; /* resident: a page and maybe a page table */
    }
    write(ready, "r", 1);
    char c;
    read(go, &c, 1); /* returns 0 when the parent closes its end */
    _exit(0);
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned long long free0 = counter("vm.phys.available_pages");
    unsigned long long heap0 = counter("vm.kmalloc.pages");
    if (!CHECK_MSG(free0 != ~0ull && heap0 != ~0ull, "the kernel exposes its free and heap pages"))
        return utest_done();
    NOTE("start: %llu pages free, %llu in the kernel heap", free0, heap0);
    /* Fault injection is a test facility: without fail.alloc= on the command
     * line the kernel refuses to be told to fail. */
    CHECK_ERR(fail_alloc(1, 0), EPERM);

    /* 1. 50,000 mappings: every operation among them stays logarithmic. */
    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        many_child(fds[1], page);
    }
    close(fds[1]);
    struct Costs c;
    memset(&c, 0, sizeof c);
    CHECK_EQ(read(fds[0], &c, sizeof c), (long)sizeof c);
    close(fds[0]);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    /* A user space too small for 50,000 pages (arm64's is 128 MB for now)
     * fills up instead: every page below its stack and above its image. */
    unsigned long long limit = counter("vm.user_limit");
    long room = (long)((limit - (40ull << 20)) / (unsigned long long)page) - 16;
    long want = room < k_many ? room : k_many;
    NOTE("mapped %ld one-page regions (user space ends at 0x%llx)", c.mapped, limit);
    CHECK_MSG(c.mapped >= want, "the child made every mapping that fits, up to 50,000");
    NOTE("among %ld mappings, region-tree steps: mmap %llu, fault %llu, mprotect %llu, munmap %llu",
         c.mapped, c.mmap, c.fault, c.mprotect, c.munmap);
    CHECK_MSG(c.mmap > 0 && c.mmap <= k_step_bound, "one more mmap takes logarithmic steps");
    CHECK_MSG(c.fault > 0 && c.fault <= k_step_bound, "a page fault finds its region in log steps");
    CHECK_MSG(c.mprotect > 0 && c.mprotect <= k_step_bound, "mprotect takes logarithmic steps");
    CHECK_MSG(c.munmap > 0 && c.munmap <= k_step_bound, "munmap takes logarithmic steps");
    NOTE("the kernel heap held %llu pages with the mappings", c.heap_pages);
    CHECK_MSG(c.heap_pages > heap0 + 200, "the mappings took kernel heap pages");
    unsigned long long free1 = counter("vm.phys.available_pages");
    NOTE("after the mapping child exited: %llu pages free", free1);
    CHECK_MSG(free1 + k_leak_bound >= free0 && free1 <= free0 + k_leak_bound,
              "its pages, page tables and heap came back");

    /* 2. A burst of processes with mappings, held together, then gone. */
    int ready[2], go[2];
    CHECK_EQ(pipe(ready), 0);
    CHECK_EQ(pipe(go), 0);
    int started = 0;
    for (int i = 0; i < k_burst; ++i) {
        pid_t p = fork();
        if (p == 0) {
            close(ready[0]);
            close(go[1]);
            burst_child(ready[1], go[0], page);
        }
        if (p > 0)
            ++started;
    }
    close(ready[1]);
    close(go[0]);
    int up = 0;
    char r;
    while (up < started && read(ready[0], &r, 1) == 1)
        ++up;
    unsigned long long low = counter("vm.phys.available_pages");
    unsigned long long heap_peak = counter("vm.kmalloc.pages");
    close(go[1]); /* every child's read returns 0: they exit */
    int clean = 0;
    for (int i = 0; i < started; ++i)
        if (wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            ++clean;
    close(ready[0]);
    CHECK_EQ(started, k_burst);
    CHECK_EQ(up, k_burst);
    CHECK_EQ(clean, k_burst);
    unsigned long long free2 = counter("vm.phys.available_pages");
    unsigned long long heap2 = counter("vm.kmalloc.pages");
    NOTE("burst of %d processes x %d mappings: free pages %llu -> %llu -> %llu; heap pages "
         "%llu -> %llu -> %llu",
         k_burst, k_burst_maps, free0, low, free2, heap0, heap_peak, heap2);
    CHECK_MSG(low + 1000 < free0, "the burst really took memory");
    CHECK_MSG(heap_peak > heap0 + 100, "the burst really took kernel heap");
    CHECK_MSG(free2 + k_leak_bound >= free0 && free2 <= free0 + k_leak_bound,
              "free pages return to within a few pages of the start");
    CHECK_MSG(heap2 <= heap0 + k_leak_bound, "the kernel heap shrinks back");
    return utest_done();
}
