/* ut_smp_vm: translations across CPUs. Worker threads, one pinned to each
 * other CPU, keep using a range while the main thread changes it.
 *
 * "tlb" rounds: once munmap or mprotect has returned, no thread on any CPU
 * may still use the old translation: a read of the unmapped page and a
 * write to the page made read-only fault on every CPU, while the page next
 * to it still reads what it held and the read-only page still holds the
 * last value each thread wrote. The same for a page cut out of a contiguous
 * run and out of a level-2 block (a demotion first) where the port has
 * them.
 *
 * "stress": the workers write and check their own word of every page of an
 * L2-block-sized range while the main thread fills it (concurrent faults
 * into one reservation, then promotion), protects pieces read-only and back
 * (demotion, re-promotion), and unmaps pieces and maps them again. Every
 * access is judged against the state the main thread published around it:
 * a write that lands in a read-only piece, a fault where the range is
 * mapped writable, or a word that does not hold what its thread last wrote
 * (or zero, for a piece mapped again) fails. At the end every byte of the
 * range is checked.
 *
 * "asid": processes come and go while the workers run this one on the
 * other CPUs; the kernel's ASID counters must show rollovers that kept the
 * running spaces apart and cost each CPU at most one flush.
 *
 * "asidbench": the book's measurement of what rollovers cost when every
 * CPU keeps switching (METRIC records).
 *
 * Arguments: [tlb] [stress] [asid] [asidbench] [rounds=N] [iters=N] [ops=N];
 * none means the first three, short. */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_max_workers = 7 };

static long g_page;
static long g_run;   /* a contiguous run (0: the port has none) */
static long g_block; /* a level-2 block (0: none) */
static int g_workers;
static int g_cpus; /* online when the test began (before it pinned itself) */

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    if (counter_get(name, &v) < 0)
        return ~0ull;
    return v;
}

/* ---- the workers: processes that share this address space ----
 *
 * clone(CLONE_VM) rather than threads: each worker is a process of its own
 * in this address space, so the scheduler spreads them over the CPUs like
 * any processes, and each has its own signal state. They share everything
 * in memory, thread-local storage included, so what is a worker's own is
 * kept in arrays by worker number (the main thread is number k_max_workers). */

static pid_t g_pids[k_max_workers + 1];
static sigjmp_buf g_jump[k_max_workers + 1];
static volatile int g_armed[k_max_workers + 1];

static int self_index(void)
{
    pid_t me = getpid();
    for (int i = 0; i < k_max_workers; ++i)
        if (g_pids[i] == me)
            return i;
    return k_max_workers;
}

/* ---- faults a worker expects: SIGSEGV back to the access that took it ---- */

static void on_segv(int sig)
{
    (void)sig;
    int i = self_index();
    if (!g_armed[i]) {
        static const char msg[] = "ut_smp_vm: unexpected SIGSEGV\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(99);
    }
    g_armed[i] = 0;
    siglongjmp(g_jump[i], 1);
}

static int try_read(int i, const volatile uint64_t* p, uint64_t* out)
{
    if (sigsetjmp(g_jump[i], 0)) /* SA_NODEFER: no mask to restore */
        return 0;
    g_armed[i] = 1;
    uint64_t v = *p;
    g_armed[i] = 0;
    *out = v;
    return 1;
}

static int try_write(int i, volatile uint64_t* p, uint64_t v)
{
    if (sigsetjmp(g_jump[i], 0)) /* SA_NODEFER: no mask to restore */
        return 0;
    g_armed[i] = 1;
    *p = v;
    g_armed[i] = 0;
    return 1;
}

enum { k_worker_stack = 64 * 1024 };
static char* g_stacks[k_max_workers];

struct Start {
    int (*fn)(void*);
    int w;
};
static struct Start g_start[k_max_workers];
static volatile int g_started[k_max_workers];

static int worker_entry(void* arg)
{
    struct Start* s = arg;
    /* Wait until the main thread has recorded this worker's pid. */
    while (!__atomic_load_n(&g_started[s->w], __ATOMIC_ACQUIRE))
        sched_yield();
    return s->fn((void*)(intptr_t)s->w);
}

/* Starts worker @p w running @p fn(w); its pid goes in g_pids[w]. */
static void spawn(int w, int (*fn)(void*))
{
    if (!g_stacks[w])
        g_stacks[w] = malloc(k_worker_stack);
    g_start[w] = (struct Start){fn, w};
    g_started[w] = 0;
    pid_t pid = clone(worker_entry, g_stacks[w] + k_worker_stack, CLONE_VM | SIGCHLD, &g_start[w]);
    g_pids[w] = pid;
    __atomic_store_n(&g_started[w], 1, __ATOMIC_RELEASE);
}

static void join(int w)
{
    int status = 0;
    if (g_pids[w] > 0)
        waitpid(g_pids[w], &status, 0);
    g_pids[w] = 0;
}

static int online_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    return CPU_COUNT(&set);
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)sched_setaffinity(0, sizeof set, &set);
}

static void relax(void)
{
    if (g_workers >= g_cpus)
        sched_yield(); /* fewer CPUs than threads: let the others run */
}

static int load_int(const volatile int* p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_int(volatile int* p, int v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* ---- tlb rounds ---- */

enum Kind { k_unmap, k_protect };
enum Phase { k_idle, k_warm, k_check, k_quit };

static struct {
    volatile int round, phase, warm, done, op_started;
    int kind;
    volatile uint64_t* target; /* the page that changes */
    volatile uint64_t* next;   /* the page after it, which must not */
    uint64_t next_value;
    /* per worker: what it saw */
    int early_fault[k_max_workers];  /* a fault before the change began */
    int probe_ok[k_max_workers];     /* the access that must fault did not */
    int next_bad[k_max_workers];     /* the neighbour did not read right */
    int lost[k_max_workers];         /* the read-only page lost its last write */
    uint64_t written[k_max_workers]; /* its last write that took */
    int cpu[k_max_workers];          /* where it checked */
} g_tlb;

static int g_tlb_base;
static int tlb_worker(void* arg);

/* Starts the tlb workers: they take the rounds numbered above the current one. */
static void start_tlb_workers(void)
{
    g_tlb_base = load_int(&g_tlb.round);
    store_int(&g_tlb.phase, k_idle);
    for (int w = 0; w < g_workers; ++w)
        spawn(w, tlb_worker);
}

static int tlb_worker(void* arg)
{
    int w = (int)(intptr_t)arg;
    pin((w + 1) % g_cpus);
    int seen = g_tlb_base; /* rounds after it are this worker's */
    for (;;) {
        while (load_int(&g_tlb.round) == seen && load_int(&g_tlb.phase) != k_quit)
            relax();
        if (load_int(&g_tlb.phase) == k_quit)
            return 0;
        seen = load_int(&g_tlb.round);
        volatile uint64_t* mine = g_tlb.target + w + 1; /* word 0 is the main thread's */
        uint64_t v = 0, count = (uint64_t)seen << 32;
        int warmed = 0;
        g_tlb.written[w] = 0;
        while (load_int(&g_tlb.phase) == k_warm) {
            int ok = g_tlb.kind == k_unmap ? try_read(w, g_tlb.target, &v)
                                           : try_write(w, mine, ++count);
            if (ok && g_tlb.kind == k_protect)
                g_tlb.written[w] = count;
            /* A fault is right only once the main thread began the change
             * (read after the access: the change may come between). */
            if (!ok && !load_int(&g_tlb.op_started))
                g_tlb.early_fault[w] = 1;
            (void)try_read(w, g_tlb.next, &v);
            if (!warmed) {
                warmed = 1;
                __atomic_fetch_add(&g_tlb.warm, 1, __ATOMIC_ACQ_REL);
            }
        }
        /* The change has returned: the old translation must be gone here. */
        g_tlb.cpu[w] = sched_getcpu();
        if (g_tlb.kind == k_unmap) {
            g_tlb.probe_ok[w] = try_read(w, g_tlb.target, &v);
        } else {
            g_tlb.probe_ok[w] = try_write(w, mine, ++count);
            g_tlb.lost[w] = !try_read(w, mine, &v) || v != g_tlb.written[w];
        }
        g_tlb.next_bad[w] = !try_read(w, g_tlb.next, &v) || v != g_tlb.next_value;
        __atomic_fetch_add(&g_tlb.done, 1, __ATOMIC_ACQ_REL);
    }
}

/* Maps @p length bytes aligned to @p length (the kernel aligns a region
 * to the largest superpage it can hold) and writes every page. */
static char* map_filled(long length)
{
    char* p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    for (long off = 0; off < length; off += g_page)
        *(volatile uint64_t*)(p + off) = (uint64_t)off ^ 0x5a5a5a5aull;
    return p;
}

/* One round: the workers use page @p at of a fresh mapping of @p length
 * bytes while the main thread unmaps or protects it. Returns 0 when the
 * mapping could not be had. */
static int tlb_round(int round, enum Kind kind, long length, long at, const char* what,
                     int* failures)
{
    unsigned long long promoted_before = counter("vm.pmap.l3c.promotions") +
                                         counter("vm.pmap.l2.promotions");
    char* base = map_filled(length);
    if (!base)
        return 0;
    if (length >= g_run && g_run) {
        unsigned long long promoted = counter("vm.pmap.l3c.promotions") +
                                      counter("vm.pmap.l2.promotions");
        if (!CHECK_MSG(promoted > promoted_before, what)) /* nothing to demote */
            NOTE("%s: the range was not promoted", what);
    }
    g_tlb.kind = kind;
    g_tlb.target = (volatile uint64_t*)(base + at);
    g_tlb.next = (volatile uint64_t*)(base + at + g_page);
    g_tlb.next_value = *g_tlb.next;
    memset(g_tlb.early_fault, 0, sizeof g_tlb.early_fault);
    store_int(&g_tlb.warm, 0);
    store_int(&g_tlb.done, 0);
    store_int(&g_tlb.op_started, 0);
    store_int(&g_tlb.phase, k_warm);
    store_int(&g_tlb.round, round);
    while (load_int(&g_tlb.warm) < g_workers)
        relax();
    store_int(&g_tlb.op_started, 1);
    int r = kind == k_unmap ? munmap(base + at, g_page)
                            : mprotect(base + at, g_page, PROT_READ);
    store_int(&g_tlb.phase, k_check);
    while (load_int(&g_tlb.done) < g_workers)
        relax();
    int bad = r != 0;
    for (int w = 0; w < g_workers; ++w)
        bad |= g_tlb.early_fault[w] | g_tlb.probe_ok[w] | g_tlb.next_bad[w] |
               (kind == k_protect && g_tlb.lost[w]);
    if (bad) {
        ++*failures;
        for (int w = 0; w < g_workers; ++w)
            NOTE("%s round %d worker %d: early fault %d, old translation used %d, neighbour "
                 "wrong %d, write lost %d",
                 what, round, w, g_tlb.early_fault[w], g_tlb.probe_ok[w], g_tlb.next_bad[w],
                 g_tlb.lost[w]);
    }
    store_int(&g_tlb.phase, k_idle);
    munmap(base, length);
    return 1;
}

static void test_tlb(int rounds)
{
    start_tlb_workers();
    struct {
        enum Kind kind;
        long length, at;
        const char* what;
    } cases[] = {
        {k_unmap, 4 * g_page, g_page, "munmap of a page"},
        {k_protect, 4 * g_page, g_page, "mprotect of a page"},
        {k_unmap, g_run, g_run / 2, "munmap of a page of a contiguous run"},
        {k_protect, g_run, g_run / 2, "mprotect of a page of a contiguous run"},
        {k_unmap, g_block, g_block / 2, "munmap of a page of an L2 block"},
        {k_protect, g_block, g_block / 2, "mprotect of a page of an L2 block"},
    };
    int round = g_tlb_base;
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        if (cases[c].length == 0)
            continue; /* no such superpage here */
        int failures = 0, done = 0;
        /* A block costs a fill of 2 MB (32 MB at 16 KB): fewer rounds. */
        int n = cases[c].length == g_block ? (rounds + 3) / 4 : rounds;
        for (int i = 0; i < n; ++i)
            done += tlb_round(++round, cases[c].kind, cases[c].length, cases[c].at,
                              cases[c].what, &failures);
        CHECK_MSG(done == n, cases[c].what);
        CHECK_MSG(failures == 0, cases[c].what);
        NOTE("%s: %d rounds, %d workers (last on CPUs %d %d %d)", cases[c].what, done, g_workers,
             g_tlb.cpu[0], g_workers > 1 ? g_tlb.cpu[1] : -1, g_workers > 2 ? g_tlb.cpu[2] : -1);
    }
    store_int(&g_tlb.phase, k_quit);
    store_int(&g_tlb.round, ++round);
    for (int w = 0; w < g_workers; ++w)
        join(w);
}

/* ---- stress ---- */

/* What the main thread publishes: a sequence number, odd while it changes
 * the range, and the state of each page while it is even. */
enum { k_rw = 0, k_ro = 1, k_gone = 2, k_changing = 3 };
static struct {
    volatile unsigned seq;
    volatile int stop;
    volatile int filled;
    char* base;
    long pages;
    unsigned char* state;       /* k_rw, k_ro or k_gone, per page */
    unsigned* epoch;            /* how many times the page was mapped again */
    uint64_t* expect;           /* [worker][page]: what its word must hold */
    unsigned* expect_epoch;     /* [worker][page]: the epoch that value is of */
    unsigned char* uncertain;   /* [worker][page]: a write raced a change */
    int stale[k_max_workers];   /* a write into a read-only page took */
    int spurious[k_max_workers]; /* a fault on a writable page */
    int wrong[k_max_workers];   /* a word did not hold what it must */
    unsigned long long accesses[k_max_workers];
} g_st;

static unsigned seq_now(void)
{
    return __atomic_load_n(&g_st.seq, __ATOMIC_ACQUIRE);
}

static void seq_begin(void)
{
    __atomic_fetch_add(&g_st.seq, 1, __ATOMIC_ACQ_REL); /* odd: changing */
}

static void seq_end(void)
{
    __atomic_fetch_add(&g_st.seq, 1, __ATOMIC_ACQ_REL); /* even: stable */
}

static int stress_worker(void* arg)
{
    int w = (int)(intptr_t)arg;
    pin((w + 1) % g_cpus);
    uint64_t count = (uint64_t)(w + 1) << 48;
    uint64_t* expect = g_st.expect + (long)w * g_st.pages;
    unsigned* expect_epoch = g_st.expect_epoch + (long)w * g_st.pages;
    unsigned char* uncertain = g_st.uncertain + (long)w * g_st.pages;
    unsigned rng = 12345u * (unsigned)(w + 1);
    int first_pass = 1;
    while (!load_int(&g_st.stop)) {
        for (long i = 0; i < g_st.pages && !load_int(&g_st.stop); ++i) {
            /* The first pass goes in order (every page faulted in by
             * several CPUs at once); later ones jump about. */
            long p = first_pass ? i : (long)((rng = rng * 1103515245u + 12345u) % g_st.pages);
            volatile uint64_t* word = (volatile uint64_t*)(g_st.base + p * g_page) + w + 1;
            unsigned s1 = seq_now();
            int state = g_st.state[p];
            /* A page that faults costs a signal: try only some of them. */
            if (state != k_rw && ((rng >> 16) & 15) != 0) {
                rng = rng * 1103515245u + 12345u;
                continue;
            }
            unsigned epoch = g_st.epoch[p];
            uint64_t v = 0;
            int read_ok = try_read(w, word, &v);
            int write_ok = try_write(w, word, ++count);
            unsigned s2 = seq_now();
            ++g_st.accesses[w];
            if (s1 != s2 || (s1 & 1)) {
                /* It raced a change: nothing can be judged, and what the
                 * word holds now is one of a few values. */
                uncertain[p] = 1;
                if (write_ok) {
                    expect[p] = count;
                    expect_epoch[p] = epoch;
                }
                continue;
            }
            if (state == k_gone) {
                if (read_ok || write_ok)
                    g_st.stale[w] = 1; /* an unmapped page was reached */
                continue;
            }
            if (!read_ok)
                g_st.spurious[w] = 1;
            uint64_t want = expect_epoch[p] == epoch ? expect[p] : 0;
            if (read_ok && !uncertain[p] && v != want)
                g_st.wrong[w] = 1;
            uncertain[p] = 0;
            if (state == k_ro) {
                if (write_ok)
                    g_st.stale[w] = 1;
                expect[p] = read_ok ? v : want;
            } else {
                if (!write_ok)
                    g_st.spurious[w] = 1;
                expect[p] = write_ok ? count : v;
            }
            expect_epoch[p] = epoch;
        }
        if (first_pass) {
            first_pass = 0;
            __atomic_fetch_add(&g_st.filled, 1, __ATOMIC_ACQ_REL);
        }
    }
    return 0;
}

/* A piece of the range, by pages: a page, a run, or a bit more. */
static void pick(unsigned* rng, long* first, long* count)
{
    *rng = *rng * 1103515245u + 12345u;
    long run_pages = g_run ? g_run / g_page : 16;
    long choices[] = {1, run_pages, run_pages + 3, 5};
    *count = choices[(*rng >> 8) % 4];
    if (*count > g_st.pages)
        *count = 1;
    *first = (long)((*rng >> 12) % (unsigned)(g_st.pages - *count + 1));
}

static void set_state(long first, long count, int state)
{
    for (long p = first; p < first + count; ++p)
        g_st.state[p] = (unsigned char)state;
}

static int stress_iteration(unsigned* rng, int ops)
{
    long length = g_block ? g_block : 256 * g_page;
    g_st.pages = length / g_page;
    char* base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 0;
    g_st.base = base;
    long per_worker = g_st.pages * (long)g_workers;
    memset(g_st.state, 0, (size_t)g_st.pages);
    memset(g_st.epoch, 0, sizeof(unsigned) * (size_t)g_st.pages);
    memset(g_st.expect, 0, sizeof(uint64_t) * (size_t)per_worker);
    memset(g_st.expect_epoch, 0, sizeof(unsigned) * (size_t)per_worker);
    memset(g_st.uncertain, 0, (size_t)per_worker);
    store_int(&g_st.stop, 0);
    store_int(&g_st.filled, 0);
    for (int w = 0; w < g_workers; ++w)
        spawn(w, stress_worker);
    /* Every page faulted in by the workers at once, then promoted. */
    while (load_int(&g_st.filled) < g_workers)
        relax();
    int failed_calls = 0;
    for (int op = 0; op < ops; ++op) {
        long first, count;
        pick(rng, &first, &count);
        char* at = base + first * g_page;
        size_t bytes = (size_t)(count * g_page);
        int gone = 0;
        for (long p = first; p < first + count; ++p)
            gone |= g_st.state[p] == k_gone;
        unsigned what = (*rng >> 20) % 3;
        if (what == 0 && gone)
            what = 1; /* mprotect wants every page mapped */
        seq_begin();
        set_state(first, count, k_changing);
        switch (what) {
        case 0: /* read-only, a while, then writable again (re-promotion) */
            failed_calls += mprotect(at, bytes, PROT_READ) != 0;
            set_state(first, count, k_ro);
            seq_end();
            for (int i = 0; i < 20; ++i)
                relax();
            seq_begin();
            set_state(first, count, k_changing);
            failed_calls += mprotect(at, bytes, PROT_READ | PROT_WRITE) != 0;
            set_state(first, count, k_rw);
            break;
        case 1: /* unmapped, a while, then mapped again: zero */
            failed_calls += munmap(at, bytes) != 0;
            set_state(first, count, k_gone);
            seq_end();
            for (int i = 0; i < 20; ++i)
                relax();
            seq_begin();
            set_state(first, count, k_changing);
            failed_calls += mmap(at, bytes, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != at;
            for (long p = first; p < first + count; ++p)
                ++g_st.epoch[p];
            set_state(first, count, k_rw);
            break;
        default: /* unmapped for good, until a later remap */
            failed_calls += munmap(at, bytes) != 0;
            set_state(first, count, k_gone);
            break;
        }
        seq_end();
        for (int i = 0; i < 10; ++i)
            relax();
    }
    store_int(&g_st.stop, 1);
    for (int w = 0; w < g_workers; ++w)
        join(w);
    /* Every byte: each worker's word holds what it last wrote (0 on a page
     * mapped again since), word 0 and the rest of each page are zero. */
    long bad_bytes = 0;
    for (long p = 0; p < g_st.pages; ++p) {
        if (g_st.state[p] == k_gone)
            continue;
        const unsigned char* page = (const unsigned char*)(base + p * g_page);
        for (long b = 0; b < g_page; ++b) {
            long word = b / 8;
            unsigned char want = 0;
            if (word >= 1 && word <= g_workers) {
                long w = word - 1;
                uint64_t v = g_st.expect_epoch[w * g_st.pages + p] == g_st.epoch[p]
                                 ? g_st.expect[w * g_st.pages + p]
                                 : 0;
                if (g_st.uncertain[w * g_st.pages + p]) {
                    b = (word + 1) * 8 - 1; /* a racing write's value: not judged */
                    continue;
                }
                want = (unsigned char)(v >> ((b % 8) * 8));
            }
            bad_bytes += page[b] != want;
        }
    }
    munmap(base, length);
    if (bad_bytes)
        NOTE("stress: %ld bytes wrong at the end", bad_bytes);
    return failed_calls == 0 && bad_bytes == 0 ? 1 : -1;
}

static void test_stress(int iters, int ops)
{
    long pages = (g_block ? g_block : 256 * g_page) / g_page;
    g_st.state = malloc((size_t)pages);
    g_st.epoch = malloc(sizeof(unsigned) * (size_t)pages);
    g_st.expect = malloc(sizeof(uint64_t) * (size_t)pages * k_max_workers);
    g_st.expect_epoch = malloc(sizeof(unsigned) * (size_t)pages * k_max_workers);
    g_st.uncertain = malloc((size_t)pages * k_max_workers);
    if (!CHECK(g_st.state && g_st.epoch && g_st.expect && g_st.expect_epoch && g_st.uncertain))
        return;
    unsigned long long promotions = counter("vm.pmap.l2.promotions") +
                                    counter("vm.pmap.l3c.promotions");
    unsigned long long demotions = counter("vm.pmap.l2.demotions") +
                                   counter("vm.pmap.l3c.demotions");
    unsigned rng = 2024;
    int unmappable = 0, bad = 0;
    for (int i = 0; i < iters; ++i) {
        int r = stress_iteration(&rng, ops);
        unmappable += r == 0;
        bad += r < 0;
    }
    int stale = 0, spurious = 0, wrong = 0;
    unsigned long long accesses = 0;
    for (int w = 0; w < g_workers; ++w) {
        stale |= g_st.stale[w];
        spurious |= g_st.spurious[w];
        wrong |= g_st.wrong[w];
        accesses += g_st.accesses[w];
    }
    CHECK_MSG(unmappable == 0, "stress: every range could be mapped");
    CHECK_MSG(bad == 0, "stress: every call succeeded and every byte held what was written");
    CHECK_MSG(!stale, "stress: no access reached an unmapped page or wrote a read-only one");
    CHECK_MSG(!spurious, "stress: no access to a mapped writable page faulted");
    CHECK_MSG(!wrong, "stress: every word read held its thread's last write");
    if (g_block || g_run) {
        CHECK_MSG(counter("vm.pmap.l2.promotions") + counter("vm.pmap.l3c.promotions") >
                      promotions,
                  "stress: the range was promoted under concurrent faults");
        CHECK_MSG(counter("vm.pmap.l2.demotions") + counter("vm.pmap.l3c.demotions") > demotions,
                  "stress: and demoted while in use");
    }
    NOTE("stress: %d iterations of %d changes, %d workers, %llu accesses", iters, ops, g_workers,
         accesses);
}

/* ---- ASIDs ---- */

/* Processes come and go on CPU 0 while the workers keep this address
 * space running on the others (a tlb round each time, so that they use it
 * and check it): with few ASID bits the generation rolls over again and
 * again, and each rollover must keep the running spaces' ASIDs, cost each
 * CPU at most one flush, and never let two CPUs run different spaces under
 * one ASID (counted by the kernel when booted with arm64.asid_check=1). */
static void test_asid(int children)
{
    unsigned long long bits = counter("vm.pmap.asid.bits");
    if (bits == ~0ull || bits == 0) {
        NOTE("no ASIDs here: nothing to check");
        return;
    }
    unsigned long long rollovers = counter("vm.pmap.asid.rollovers");
    start_tlb_workers();
    int failures = 0, round = g_tlb_base, exited = 0;
    for (int i = 0; i < children; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            volatile char* p = mmap(NULL, 4 * g_page, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                _exit(2);
            p[0] = (char)i;
            sched_yield();
            _exit(p[0] == (char)i ? 0 : 1);
        }
        (void)tlb_round(++round, i % 2 ? k_protect : k_unmap, 4 * g_page, g_page, "asid",
                        &failures);
        int status = 0;
        exited += pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0;
    }
    store_int(&g_tlb.phase, k_quit);
    store_int(&g_tlb.round, ++round);
    for (int w = 0; w < g_workers; ++w)
        join(w);
    unsigned long long turned = counter("vm.pmap.asid.rollovers") - rollovers;
    unsigned long long all = counter("vm.pmap.asid.rollovers");
    unsigned long long most = counter("vm.pmap.asid.flushes_max_cpu");
    CHECK_MSG(exited == children, "asid: every child ran and exited cleanly");
    CHECK_MSG(failures == 0, "asid: the workers' translations stayed right across rollovers");
    if (bits <= 4)
        CHECK_MSG(turned > 0, "asid: the generation rolled over (few ASID bits)");
    CHECK_MSG(most <= all, "asid: no CPU flushed more than once per rollover");
    if (counter("vm.pmap.asid.checking") == 1) {
        CHECK_MSG(counter("vm.pmap.asid.conflicts") == 0,
                  "asid: no two CPUs ran different address spaces under one ASID");
        CHECK_MSG(counter("vm.pmap.asid.unflushed") == 0,
                  "asid: no CPU took a new generation's ASID before its flush");
    }
    NOTE("asid: %llu bits, %llu rollovers (%llu here), at most %llu flushes on a CPU, %llu "
         "in all, %llu borrowed",
         bits, all, turned, most, counter("vm.pmap.asid.rollover_flushes"),
         counter("vm.pmap.asid.borrowed"));
}

/* For the book (book/measurements.toml): @p waves of one short-lived
 * process per CPU, each pinned to its CPU, switching a few times before it
 * exits, so that every CPU switches address spaces again and again while
 * the ASIDs roll over. Prints what the rollovers cost as METRIC records. */
static void asid_bench(int waves)
{
    unsigned long long rollovers = counter("vm.pmap.asid.rollovers");
    unsigned long long flushes = counter("vm.pmap.asid.rollover_flushes");
    unsigned long long loads = counter("vm.pmap.ttbr0_loads");
    unsigned long long slow = counter("vm.pmap.asid.slow_switches");
    int ok = 0;
    for (int wave = 0; wave < waves; ++wave) {
        pid_t pid[k_max_workers + 1];
        for (int c = 0; c < g_cpus && c <= k_max_workers; ++c) {
            pid[c] = fork();
            if (pid[c] == 0) {
                pin(c);
                volatile char* p = map_filled(4 * g_page);
                for (int i = 0; i < 4; ++i) {
                    sched_yield();
                    if (p)
                        p[i * g_page] = (char)i;
                }
                _exit(p ? 0 : 1);
            }
        }
        for (int c = 0; c < g_cpus && c <= k_max_workers; ++c) {
            int status = 0;
            ok += pid[c] > 0 && waitpid(pid[c], &status, 0) == pid[c] && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0;
        }
    }
    CHECK_MSG(ok == waves * (g_cpus <= k_max_workers ? g_cpus : k_max_workers + 1),
              "asid bench: every process ran and exited cleanly");
    CHECK_MSG(counter("vm.pmap.asid.flushes_max_cpu") <= counter("vm.pmap.asid.rollovers"),
              "asid bench: no CPU flushed more than once per rollover");
    printf("METRIC smp_vm.asid.cpus %d count\n", g_cpus);
    printf("METRIC smp_vm.asid.processes %d count\n", ok);
    printf("METRIC smp_vm.asid.rollovers %llu count\n", counter("vm.pmap.asid.rollovers") - rollovers);
    printf("METRIC smp_vm.asid.rollover_flushes %llu count\n",
           counter("vm.pmap.asid.rollover_flushes") - flushes);
    printf("METRIC smp_vm.asid.flushes_max_cpu %llu count\n", counter("vm.pmap.asid.flushes_max_cpu"));
    printf("METRIC smp_vm.asid.ttbr0_loads %llu count\n", counter("vm.pmap.ttbr0_loads") - loads);
    printf("METRIC smp_vm.asid.slow_switches %llu count\n",
           counter("vm.pmap.asid.slow_switches") - slow);
    printf("METRIC smp_vm.asid.borrowed %llu count\n", counter("vm.pmap.asid.borrowed"));
    fflush(stdout);
}

int main(int argc, char** argv)
{
    int tlb = 0, stress = 0, asid = 0, asidbench = 0, rounds = 2, iters = 1, ops = 6;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "tlb") == 0)
            tlb = 1;
        else if (strcmp(argv[i], "stress") == 0)
            stress = 1;
        else if (strcmp(argv[i], "asid") == 0)
            asid = 1;
        else if (strcmp(argv[i], "asidbench") == 0)
            asidbench = 1;
        else if (strncmp(argv[i], "rounds=", 7) == 0)
            rounds = atoi(argv[i] + 7);
        else if (strncmp(argv[i], "iters=", 6) == 0)
            iters = atoi(argv[i] + 6);
        else if (strncmp(argv[i], "ops=", 4) == 0)
            ops = atoi(argv[i] + 4);
    }
    if (!tlb && !stress && !asid && !asidbench)
        tlb = stress = asid = 1;
    g_page = sysconf(_SC_PAGESIZE);
#if defined(__aarch64__)
    g_run = g_page * (g_page == 4096 ? 16 : 128); /* Arm ARM D8.6.1 */
    g_block = g_page * (g_page / 8);              /* a level-2 entry's reach */
    if (counter("vm.pmap.l2.promotions") == ~0ull)
        g_run = g_block = 0; /* no superpage counters: none to test */
#endif
    int cpus = g_cpus = online_cpus();
    g_workers = cpus > 1 ? cpus - 1 : 2;
    if (g_workers > k_max_workers)
        g_workers = k_max_workers;
    NOTE("%d CPUs, %d workers, page %ld", cpus, g_workers, g_page);
    pin(0); /* the workers take the other CPUs */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    if (tlb)
        test_tlb(rounds);
    if (stress)
        test_stress(iters, ops);
    if (asid)
        test_asid(rounds * 8);
    if (asidbench)
        asid_bench(rounds * 4);
    return utest_done();
}
