/* ut_superpages_regions: superpages and the regions they lie in, seen from
 * user space. fork, munmap, MAP_FIXED and mprotect split filled level-2
 * blocks (2 MB at a 4 KB granule, 32 MB at 16 KB) and contiguous runs; each
 * case checks every page's data (a per-page pattern), the kernel's counters,
 * and that memory comes back: after a child exits, the free pages plus the
 * pages reservations hold unused (and the kernel heap's) are what they were
 * before the fork; after the range is unmapped, they are what they were
 * before it was mapped, but for the page-table pages, which stay in the
 * tables for the next mapping there.
 *
 * A superpage, and the reservation it is made from, must lie inside one
 * region. Were one to span two regions, fork would share its pages once for
 * the superpage and again for the second region: after the child exits, the
 * parent's writes would copy (cow.copies above 0) and the pages counted
 * twice would never come back (free pages below their start).
 *
 * Pages copied on write while a child shares them become a superpage again
 * once the parent has copied them all.
 *
 * On i386, which has no superpages, the same cases check the data and the
 * memory; the superpage counters must then not move. */
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

static long g_page;
static long g_run;   /* a contiguous run: 64 KB at 4 KB, 2 MB at 16 KB; a page on i386 */
static long g_block; /* a level-2 block: 2 MB at 4 KB, 32 MB at 16 KB; 2 MB on i386 */
static int g_on;     /* superpages exist (arm64) */

static long long counter(const char* name)
{
    unsigned long long v = 0;
    if (counter_get(name, &v) < 0)
        return -1;
    return (long long)v;
}

/* The counters a case looks at, read together. */
struct Snap {
    long long l2_prom, l2_dem, l3c_prom, l3c_dem, copies, reuses, broken, shared;
};

static void snap(struct Snap* s)
{
    s->l2_prom = counter("vm.pmap.l2.promotions");
    s->l2_dem = counter("vm.pmap.l2.demotions");
    s->l3c_prom = counter("vm.pmap.l3c.promotions");
    s->l3c_dem = counter("vm.pmap.l3c.demotions");
    s->copies = counter("vm.cow.copies");
    s->reuses = counter("vm.cow.reuses");
    s->broken = counter("vm.reserv.broken");
    s->shared = counter("vm.fork.pages_shared");
}

/* Memory no user page holds: free pages, pages reserved but unused (free in
 * all but name), and the kernel heap's pages (which it keeps for its next
 * allocations once it has grown, say, for the first fork's records). */
static long long free_now(void)
{
    return counter("vm.phys.free_pages") + counter("vm.reserv.unused_pages") +
           counter("vm.kmalloc.pages");
}

/* The same, counting as free the page-table pages (which an unmap leaves in
 * the tables, ready for the next mapping there). */
static long long free_with_tables(void)
{
    return free_now() + counter("vm.pmap.page_tables");
}

/* @p measure() once it reads @p want, or its last reading after a while.
 * On several CPUs a child that exit()ed on another CPU has its last pages
 * (its kernel stack) freed by that CPU a moment after waitpid() returns;
 * yielding lets that happen. A leak still reads short every time. */
static long long settled(long long (*measure)(void), long long want)
{
    long long now = measure();
    for (int i = 0; i < 200 && now != want; ++i) {
        sched_yield();
        now = measure();
    }
    return now;
}

/* The pattern of page @p i in round @p round: different in every page and
 * every round, never zero. */
static uint64_t pattern(long i, unsigned round)
{
    return 0x5450000000000000ull ^ ((uint64_t)round << 40) ^ ((uint64_t)i * 0x9e3779b1u) ^ 1u;
}

/* Writes round @p round's pattern into the first and last word of each page
 * of [p, p + length); @p base is where page 0 of the pattern is. */
static void fill(char* base, char* p, long length, unsigned round)
{
    for (char* q = p; q < p + length; q += g_page) {
        uint64_t v = pattern((q - base) / g_page, round);
        *(volatile uint64_t*)q = v;
        *(volatile uint64_t*)(q + g_page - 8) = v;
    }
}

/* How many pages of [p, p + length) do not hold round @p round's pattern. */
static long bad_pages(const char* base, const char* p, long length, unsigned round)
{
    long bad = 0;
    for (const char* q = p; q < p + length; q += g_page) {
        uint64_t v = pattern((q - base) / g_page, round);
        bad +=
            *(const volatile uint64_t*)q != v || *(const volatile uint64_t*)(q + g_page - 8) != v;
    }
    return bad;
}

/* How many pages of [p, p + length) read zero (fresh). */
static long nonzero_pages(const char* p, long length)
{
    long bad = 0;
    for (const char* q = p; q < p + length; q += g_page)
        bad +=
            *(const volatile uint64_t*)q != 0 || *(const volatile uint64_t*)(q + g_page - 8) != 0;
    return bad;
}

/* An anonymous private region of @p length; the kernel aligns one that can
 * hold a block to the block. */
static char* map(long length)
{
    char* p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int map_fixed(char* at, long length)
{
    char* p =
        mmap(at, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return p == at;
}

/* An aligned block, filled in round 1: one level-2 promotion. */
static char* filled_block(void)
{
    char* p = map(g_block);
    if (!CHECK(p != NULL))
        return NULL;
    CHECK_EQ((uintptr_t)p % (uintptr_t)g_block, 0);
    struct Snap a, b;
    snap(&a);
    fill(p, p, g_block, 1);
    snap(&b);
    CHECK_EQ(b.l2_prom - a.l2_prom, g_on);
    return p;
}

/* Forks. The child checks [p, p + length) holds round @p round, writes its
 * first page (a copy: the parent's must not change) and exits. Then the
 * parent: memory is back to what it was before the fork; its data is as it
 * was; every page it rewrites (round + 1) is taken back in place, none is
 * copied. */
static void fork_exit_rewrite(const char* what, char* base, char* p, long length, unsigned round)
{
    NOTE("%s: fork, the child exits, the parent rewrites", what);
    struct Snap a, b;
    long long before = free_now();
    snap(&a);
    pid_t pid = fork();
    if (pid == 0) {
        long bad = bad_pages(base, p, length, round);
        *(volatile uint64_t*)p = 0;
        bad += bad_pages(base, p + g_page, length - g_page, round);
        _exit(bad == 0 ? 0 : 1);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child saw the parent's data");
    snap(&b);
    /* Each page fork shared, once: a superpage shared whole is not shared
     * again page by page. (At least the range's pages; the stack and the
     * program's own pages come on top.) */
    CHECK(b.shared - a.shared >= length / g_page);
    CHECK_EQ(settled(free_now, before) - before, 0);
    CHECK_EQ(bad_pages(base, p, length, round), 0);
    snap(&a);
    fill(base, p, length, round + 1);
    snap(&b);
    CHECK_EQ(b.copies - a.copies, 0);
    CHECK_EQ(b.reuses - a.reuses, length / g_page);
    CHECK_EQ(bad_pages(base, p, length, round + 1), 0);
}

/* A block's reservation made by the first touch, then the region split by
 * mprotect and put back (two regions now), then filled and forked. Before
 * reservations were kept inside one region, the fill re-formed the block
 * across the split, fork shared its second half twice, and the parent's
 * rewrite copied that half (256 pages at 4 KB, 1024 at 16 KB) and leaked
 * it for good. */
static void check_split_before_fill(void)
{
    long long start = free_with_tables();
    char* p = map(g_block);
    if (!CHECK(p != NULL))
        return;
    struct Snap a, b;
    snap(&a);
    fill(p, p, g_page, 1); /* makes the block's reservation */
    char* half = p + g_block / 2;
    CHECK_EQ(mprotect(half, g_block / 2, PROT_READ), 0);
    CHECK_EQ(mprotect(half, g_block / 2, PROT_READ | PROT_WRITE), 0);
    fill(p, p, g_block, 1);
    snap(&b);
    /* The split broke the reservation: no block across the two regions. */
    CHECK_EQ(b.broken - a.broken, g_on);
    CHECK_EQ(b.l2_prom - a.l2_prom, 0);
    CHECK_EQ(bad_pages(p, p, g_block, 1), 0);
    fork_exit_rewrite("split before fill", p, p, g_block, 1);
    CHECK_EQ(munmap(p, g_block), 0);
    CHECK_EQ(settled(free_with_tables, start) - start, 0);
}

/* A filled block, MAP_FIXED 64 KB in its middle, touched, forked. */
static void check_fixed_fork(void)
{
    long long start = free_with_tables();
    char* p = filled_block();
    if (!p)
        return;
    const long fixed = 64 * 1024;
    char* mid = p + g_block / 2;
    struct Snap a, b;
    snap(&a);
    CHECK(map_fixed(mid, fixed));
    snap(&b);
    /* The block and the run around the new region are demoted, and the
     * block's reservation broken: the new pages must not come from it. */
    CHECK_EQ(b.l2_dem - a.l2_dem, g_on);
    CHECK_EQ(b.broken - a.broken, g_on);
    CHECK_EQ(nonzero_pages(mid, fixed), 0);
    snap(&a);
    fill(p, mid, fixed, 1);
    snap(&b);
    CHECK_EQ(b.l2_prom - a.l2_prom, 0); /* no block over three regions */
    CHECK_EQ(bad_pages(p, p, g_block, 1), 0);
    fork_exit_rewrite("MAP_FIXED in a block", p, p, g_block, 1);
    CHECK_EQ(munmap(p, g_block), 0);
    CHECK_EQ(settled(free_with_tables, start) - start, 0);
}

/* munmap inside a filled block: one page in the middle of a run, and a few
 * pages across the boundary of two runs; the holes then mapped again. */
static void check_unmap_in_block(void)
{
    long long start = free_with_tables();
    char* p = filled_block();
    if (!p)
        return;
    char* one = p + g_block / 4 + g_page;
    char* across = p + g_block / 2 + g_run - 2 * g_page; /* 4 pages over a run boundary */
    const long across_len = 4 * g_page;
    struct Snap a, b;
    snap(&a);
    long long before = free_now();
    CHECK_EQ(munmap(one, g_page), 0);
    CHECK_EQ(munmap(across, across_len), 0);
    snap(&b);
    /* The block is demoted once, then each run a hole cuts: three. The
     * holes' pages are free, and so are the unused pages of the block's
     * reservation (its pages still in use stay ordinary pages). */
    CHECK_EQ(b.l2_dem - a.l2_dem, g_on);
    CHECK_EQ(b.l3c_dem - a.l3c_dem, g_on ? 3 : 0);
    CHECK_EQ(b.broken - a.broken, g_on);
    CHECK_EQ(settled(free_now, before + 5) - before, 5);
    CHECK_EQ(bad_pages(p, p, one - p, 1), 0);
    CHECK_EQ(bad_pages(p, one + g_page, across - one - g_page, 1), 0);
    CHECK_EQ(bad_pages(p, across + across_len, p + g_block - across - across_len, 1), 0);
    /* The holes mapped again read zero, and are small regions of their own:
     * nothing is promoted over them. */
    CHECK(map_fixed(one, g_page));
    CHECK(map_fixed(across, across_len));
    snap(&a);
    CHECK_EQ(nonzero_pages(one, g_page), 0);
    CHECK_EQ(nonzero_pages(across, across_len), 0);
    fill(p, one, g_page, 1);
    fill(p, across, across_len, 1);
    snap(&b);
    CHECK_EQ(b.l2_prom - a.l2_prom, 0);
    CHECK_EQ(b.l3c_prom - a.l3c_prom, 0);
    CHECK_EQ(bad_pages(p, p, g_block, 1), 0);
    fork_exit_rewrite("munmap in a block", p, p, g_block, 1);
    CHECK_EQ(munmap(p, g_block), 0);
    CHECK_EQ(settled(free_with_tables, start) - start, 0);
}

/* mprotect of a range inside a filled block that cuts two runs: the block
 * and those two runs are demoted, the rest of the runs kept; back to RW the
 * three regions stay three, so no block forms again. */
static void check_protect_in_block(void)
{
    long long start = free_with_tables();
    char* p = filled_block();
    if (!p)
        return;
    char* lo = p + g_block / 2 - g_page;
    const long len = g_run + 2 * g_page; /* ends one page into a run */
    struct Snap a, b;
    snap(&a);
    CHECK_EQ(mprotect(lo, len, PROT_READ), 0);
    snap(&b);
    CHECK_EQ(b.l2_dem - a.l2_dem, g_on);
    CHECK_EQ(b.l3c_dem - a.l3c_dem, g_on ? 2 : 0);
    CHECK_EQ(bad_pages(p, p, g_block, 1), 0);
    /* Read-only pages, shared with a child: the writable rest is rewritten. */
    fork_exit_rewrite("mprotect in a block (before)", p, p, lo - p, 1);
    CHECK_EQ(bad_pages(p, lo, len, 1), 0);
    snap(&a);
    CHECK_EQ(mprotect(lo, len, PROT_READ | PROT_WRITE), 0);
    fill(p, lo, p + g_block - lo, 2);
    snap(&b);
    CHECK_EQ(b.l2_prom - a.l2_prom, 0); /* three regions: no block over them */
    CHECK_EQ(bad_pages(p, p, g_block, 2), 0);
    fork_exit_rewrite("mprotect in a block (after)", p, p, g_block, 2);
    CHECK_EQ(munmap(p, g_block), 0);
    CHECK_EQ(settled(free_with_tables, start) - start, 0);
}

/* A filled run, forked; the child exits; the parent's writes reuse every
 * page, and the last one makes the run a run again. Then a run unmapped
 * whole, and one cut by munmap in its middle. */
static void check_runs(void)
{
    long long start = free_with_tables();
    char* p = map(g_run);
    if (!CHECK(p != NULL))
        return;
    struct Snap a, b;
    snap(&a);
    fill(p, p, g_run, 1);
    snap(&b);
    CHECK_EQ(b.l3c_prom - a.l3c_prom, g_on);
    snap(&a);
    fork_exit_rewrite("a run", p, p, g_run, 1);
    snap(&b);
    CHECK_EQ(b.l3c_prom - a.l3c_prom, g_on); /* taken back whole: promoted again */
    snap(&a);
    CHECK_EQ(munmap(p + g_run / 2, g_page), 0);
    snap(&b);
    CHECK_EQ(b.l3c_dem - a.l3c_dem, g_on);
    CHECK_EQ(b.broken - a.broken, g_on);
    CHECK_EQ(bad_pages(p, p, g_run / 2, 2), 0);
    CHECK_EQ(bad_pages(p, p + g_run / 2 + g_page, g_run / 2 - g_page, 2), 0);
    fork_exit_rewrite("a run cut by munmap", p, p, g_run / 2, 2);
    CHECK_EQ(munmap(p, g_run), 0);
    CHECK_EQ(settled(free_with_tables, start) - start, 0);
}

/* A filled run and a filled block, forked; while the child still shares
 * them the parent rewrites every page: each write copies, and the copy that
 * completes the stretch makes it a superpage again (the copies come from a
 * reservation of their own). The child still sees the old data. */
static void check_copied_while_shared(char* p, long length, const char* what)
{
    NOTE("%s: rewritten while a child shares it", what);
    long long before = free_now();
    /* The child says it is ready (its own stack copied, so that it copies
     * nothing while the parent counts), then waits for the go. */
    int ready[2], go[2];
    if (!CHECK_EQ(pipe(ready), 0) || !CHECK_EQ(pipe(go), 0))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        char c = 0;
        close(ready[0]);
        close(go[1]);
        long bad =
            write(ready[1], &c, 1) == 1 && read(go[0], &c, 1) == 1 ? bad_pages(p, p, length, 1) : 1;
        _exit(bad == 0 ? 0 : 1);
    }
    close(ready[1]);
    close(go[0]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    struct Snap a, b;
    snap(&a); /* the stack pages the counters are read into: copied now */
    snap(&b);
    snap(&a);
    fill(p, p, length, 2);
    snap(&b);
    CHECK_EQ(b.copies - a.copies, length / g_page);
    CHECK_EQ(b.reuses - a.reuses, 0);
    /* As when first filled: each run as it fills, then the block at once. */
    CHECK_EQ(b.l3c_prom - a.l3c_prom, !g_on ? 0 : length == g_run ? 1 : g_block / g_run - 1);
    CHECK_EQ(b.l2_prom - a.l2_prom, g_on && length == g_block);
    CHECK_EQ(bad_pages(p, p, length, 2), 0);
    CHECK_EQ(write(go[1], "x", 1), 1);
    close(go[1]);
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child kept the old data");
    CHECK_EQ(settled(free_now, before) - before, 0);
}

static void check_copies(void)
{
    long long start = free_with_tables();
    char* p = map(g_run);
    if (!CHECK(p != NULL))
        return;
    fill(p, p, g_run, 1);
    check_copied_while_shared(p, g_run, "a run");
    CHECK_EQ(munmap(p, g_run), 0);
    p = filled_block();
    if (p) {
        check_copied_while_shared(p, g_block, "a block");
        CHECK_EQ(munmap(p, g_block), 0);
    }
    CHECK_EQ(settled(free_with_tables, start) - start, 0);
}

int main(int argc, char** argv)
{
    g_page = sysconf(_SC_PAGESIZE);
#if defined(__aarch64__)
    g_on = !(argc > 1 && strcmp(argv[1], "off") == 0);
    CHECK(g_page == 4096 || g_page == 16384);
    g_run = g_page * (g_page == 4096 ? 16 : 128);
    g_block = g_page == 4096 ? 2L << 20 : 32L << 20;
#else
    (void)argc;
    (void)argv;
    g_on = 0;
    g_run = 16 * g_page; /* no runs on i386: any size will do for the cases */
    g_block = 2L << 20;
    CHECK_EQ(counter("vm.pmap.l2.promotions"), -1);
#endif
    CHECK(counter("vm.phys.free_pages") > 0);
    CHECK(counter("vm.reserv.unused_pages") >= 0);
    CHECK(counter("vm.pmap.page_tables") > 0);
    CHECK(counter("vm.kmalloc.pages") > 0);
    check_split_before_fill();
    check_fixed_fork();
    check_unmap_in_block();
    check_protect_in_block();
    check_runs();
    check_copies();
    return utest_done();
}
