/* ut_superpages: arm64 superpages seen from user space, through the kernel's
 * counters. Touching every page of an aligned run (16 pages with a 4 KB
 * granule, 128 with 16 KB) promotes it to a contiguous run; touching all of
 * an aligned 2 MB region at 4 KB promotes its runs and then the level-2
 * block; protecting or unmapping a whole run keeps it, one page demotes it;
 * fork shares a run as one mapping. A heap grown by brk in small steps gets
 * the same runs and blocks; at 16 KB an aligned 32 MB region becomes an L2
 * block. Code written and executed through a new mapping never runs stale
 * instructions.
 *
 * With the argument "off" (booted with vm.superpages=0) it checks that none
 * of this happens and that memory still works. On i386, which has no
 * superpage sizes, it checks that the counters do not exist. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    if (counter_get(name, &v) < 0)
        return ~0ull;
    return v;
}

/* The superpage counters, read together. */
struct Sp {
    unsigned long long l3c_promotions, l3c_demotions, l3c_mappings, l3c_failures;
    unsigned long long l2_promotions, l2_demotions, reserv_freed, reserv_broken;
};

static void sp_now(struct Sp* s)
{
    s->l3c_promotions = counter("vm.pmap.l3c.promotions");
    s->l3c_demotions = counter("vm.pmap.l3c.demotions");
    s->l3c_mappings = counter("vm.pmap.l3c.mappings");
    s->l3c_failures = counter("vm.pmap.l3c.p_failures");
    s->l2_promotions = counter("vm.pmap.l2.promotions");
    s->l2_demotions = counter("vm.pmap.l2.demotions");
    s->reserv_freed = counter("vm.reserv.freed");
    s->reserv_broken = counter("vm.reserv.broken");
}

static long g_page;
static long g_run; /* bytes in a contiguous run: 64 KB at 4 KB, 2 MB at 16 KB */
static const long k_two_mb = 2L << 20;

static char* map(long length)
{
    char* p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void touch(char* p, long length)
{
    for (long off = 0; off < length; off += g_page)
        p[off] = (char)(off / g_page + 1);
}

/* Whether the pages of [from, to) of @p still hold what touch() wrote. */
static int intact_range(const char* p, long from, long to)
{
    for (long off = from; off < to; off += g_page)
        if (p[off] != (char)(off / g_page + 1))
            return 0;
    return 1;
}

static int intact(const char* p, long length)
{
    return intact_range(p, 0, length);
}

#if defined(__aarch64__)
/* Writes "mov w0, #value; ret" at @p code (Arm ARM C6.2: MOVZ, RET). */
static void write_code(uint32_t* code, unsigned value)
{
    code[0] = 0x52800000u | (value << 5);
    code[1] = 0xd65f03c0u;
}

static void check_fresh_code(void)
{
    /* A run-sized region, so that a whole run is protected at once. */
    char* p = map(g_run);
    CHECK(p != NULL);
    if (!p)
        return;
    write_code((uint32_t*)p, 42);
    CHECK_EQ(mprotect(p, g_run, PROT_READ | PROT_EXEC), 0);
    CHECK_EQ(((int (*)(void))p)(), 42);
    CHECK_EQ(munmap(p, g_run), 0);
    /* New pages at the same address (likely the same frames): the new
     * instructions run, not the old ones. */
    char* q =
        mmap(p, g_run, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(q == p);
    if (q != p)
        return;
    write_code((uint32_t*)q, 7);
    CHECK_EQ(mprotect(q, g_run, PROT_READ | PROT_EXEC), 0);
    CHECK_EQ(((int (*)(void))q)(), 7);
    munmap(q, g_run);
}
#endif

static void check_run(int on)
{
    struct Sp a, b;
    char* p = map(g_run);
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_EQ((uintptr_t)p % (uintptr_t)(on ? g_run : g_page), 0u);
    sp_now(&a);
    touch(p, g_run);
    sp_now(&b);
    CHECK_EQ(b.l3c_promotions - a.l3c_promotions, on ? 1ull : 0ull);
    CHECK(intact(p, g_run));

    /* Read-only as a whole: the run stays a run. */
    sp_now(&a);
    CHECK_EQ(mprotect(p, g_run, PROT_READ), 0);
    sp_now(&b);
    CHECK_EQ(b.l3c_demotions - a.l3c_demotions, 0ull);
    CHECK(intact(p, g_run));

    /* fork shares the run: one contiguous mapping in the child. */
    sp_now(&a);
    pid_t pid = fork();
    if (pid == 0)
        _exit(intact(p, g_run) ? 0 : 1);
    int status = -1;
    waitpid(pid, &status, 0);
    sp_now(&b);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(b.l3c_mappings - a.l3c_mappings, on ? 1ull : 0ull);
    CHECK_EQ(b.l3c_demotions - a.l3c_demotions, 0ull);

    /* One page made writable again: the run is demoted, and the region is
     * split inside the reservation, which is broken (no reservation spans
     * two regions). */
    sp_now(&a);
    CHECK_EQ(mprotect(p + g_page, g_page, PROT_READ | PROT_WRITE), 0);
    sp_now(&b);
    CHECK_EQ(b.l3c_demotions - a.l3c_demotions, on ? 1ull : 0ull);
    CHECK_EQ(b.reserv_broken - a.reserv_broken, on ? 1ull : 0ull);
    p[g_page] = 99;
    CHECK_EQ(p[g_page], 99);
    CHECK_EQ(munmap(p, g_run), 0);

    /* A run left whole: unmapped whole, its reservation goes back whole. */
    p = map(g_run);
    CHECK(p != NULL);
    if (!p)
        return;
    touch(p, g_run);
    sp_now(&a);
    CHECK_EQ(munmap(p, g_run), 0);
    sp_now(&b);
    CHECK_EQ(b.reserv_freed - a.reserv_freed, on ? 1ull : 0ull);
}

static void check_two_mb(int on)
{
    struct Sp a, b;
    char* p = map(k_two_mb);
    CHECK(p != NULL);
    if (!p)
        return;
    sp_now(&a);
    touch(p, k_two_mb);
    sp_now(&b);
    unsigned long long runs = (unsigned long long)(k_two_mb / g_run);
    int blocks = on && g_page == 4096; /* a 2 MB block is level 2 at 4 KB only */
    /* The fault that fills the block makes it at once: its last run is
     * never promoted on the way. */
    CHECK_EQ(b.l3c_promotions - a.l3c_promotions, on ? runs - (blocks ? 1 : 0) : 0ull);
    CHECK_EQ(b.l2_promotions - a.l2_promotions, blocks ? 1ull : 0ull);
    CHECK(intact(p, k_two_mb));

    /* Unmapping one page demotes the block, then the run holding the page. */
    sp_now(&a);
    CHECK_EQ(munmap(p + k_two_mb / 2, g_page), 0);
    sp_now(&b);
    CHECK_EQ(b.l2_demotions - a.l2_demotions, blocks ? 1ull : 0ull);
    CHECK_EQ(b.l3c_demotions - a.l3c_demotions, on ? 1ull : 0ull);
    CHECK(intact_range(p, 0, k_two_mb / 2));
    CHECK(intact_range(p, k_two_mb / 2 + g_page, k_two_mb));
    munmap(p, k_two_mb);
}

/* How many naturally aligned stretches of @p size lie wholly in [lo, hi). */
static unsigned long long aligned_in(uintptr_t lo, uintptr_t hi, uintptr_t size)
{
    uintptr_t first = (lo + size - 1) & ~(size - 1);
    return hi > first ? (unsigned long long)((hi - first) / size) : 0ull;
}

/* The heap grown 4 MB three pages at a time, then touched from the top
 * down: every aligned run inside it is promoted, and at 4 KB the aligned
 * 2 MB stretch inside it becomes an L2 block, although no single brk step is
 * big enough to hold a reservation and the first page touched in each
 * stretch is its last (so the heap must be one region, not one per step). */
static void check_brk(int on)
{
    struct Sp a, b;
    const uintptr_t total = 4ul << 20, step = 3 * (uintptr_t)g_page;
    uintptr_t start = (uintptr_t)syscall(SYS_brk, 0);
    uintptr_t lo = (start + g_page - 1) & ~(uintptr_t)(g_page - 1), top = lo;
    while (top < lo + total) {
        uintptr_t want = top + step;
        if (!CHECK_EQ((uintptr_t)syscall(SYS_brk, want), want))
            break;
        top = want;
    }
    sp_now(&a);
    for (uintptr_t at = top; at > lo;) {
        at -= g_page;
        *(char*)at = (char)((at - lo) / g_page + 1);
    }
    sp_now(&b);
    uintptr_t l2 = (uintptr_t)(g_page == 4096 ? k_two_mb : 32L << 20);
    /* Each block is made at once by the fault that fills it, one run
     * fewer promoted each. */
    CHECK_EQ(b.l3c_promotions - a.l3c_promotions,
             on ? aligned_in(lo, top, g_run) - aligned_in(lo, top, l2) : 0ull);
    CHECK_EQ(b.l2_promotions - a.l2_promotions, on ? aligned_in(lo, top, l2) : 0ull);
    if (on)
        CHECK(b.l3c_promotions - a.l3c_promotions >= 1);
    CHECK(intact((char*)lo, (long)(top - lo)));
    CHECK_EQ((uintptr_t)syscall(SYS_brk, start), start);
}

#if defined(__aarch64__)
/* At 16 KB, an aligned 32 MB region touched in full is one L2 block (15 of
 * its 16 runs of 2 MB are promoted first; the fault that fills the last
 * makes the block). */
static void check_32mb(int on)
{
    struct Sp a, b;
    const long size = 32L << 20;
    char* p = map(size);
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_EQ((uintptr_t)p % (uintptr_t)(on ? size : g_page), 0u);
    sp_now(&a);
    touch(p, size);
    sp_now(&b);
    CHECK_EQ(b.l3c_promotions - a.l3c_promotions,
             on ? (unsigned long long)(size / g_run) - 1 : 0ull);
    CHECK_EQ(b.l2_promotions - a.l2_promotions, on ? 1ull : 0ull);
    CHECK(intact(p, size));
    CHECK_EQ(munmap(p, size), 0);
}
#endif

int main(int argc, char** argv)
{
    int on = !(argc > 1 && strcmp(argv[1], "off") == 0);
    g_page = sysconf(_SC_PAGESIZE);
#if defined(__aarch64__)
    g_run = g_page * (g_page == 4096 ? 16 : 128);
    CHECK(g_page == 4096 || g_page == 16384);
    CHECK(counter("vm.pmap.l3c.promotions") != ~0ull);
    check_run(on);
    check_two_mb(on);
    check_brk(on);
    if (g_page == 16384)
        check_32mb(on);
    check_fresh_code();
#else
    (void)on;
    (void)check_run;
    (void)check_two_mb;
    (void)check_brk; /* ut_mmap grows and shrinks the heap on i386 */
    /* i386 maps 4 KB pages only: no superpage counters exist, and a large
     * anonymous region still works page by page. */
    g_run = g_page;
    CHECK_EQ(counter("vm.pmap.l3c.promotions"), ~0ull);
    CHECK_EQ(counter("vm.pmap.l2.promotions"), ~0ull);
    char* p = map(k_two_mb);
    CHECK(p != NULL);
    if (p) {
        touch(p, k_two_mb);
        CHECK(intact(p, k_two_mb));
        CHECK_EQ(munmap(p, k_two_mb), 0);
    }
#endif
    return utest_done();
}
