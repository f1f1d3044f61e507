/* The child side of ut_fuzz: from a seed to system calls with hostile
 * arguments and register state. A splitmix64 generator seeded from (seed,
 * child) draws each call of the kernel's table (fuzz_calls.h) or an unknown
 * number, arguments made of hostile pointers, sizes and flags over an arena
 * of pages with every kind of access, and the trap itself with hostile
 * registers; nothing drawn depends on what the kernel answered, so a child
 * replays exactly. The driver (ut_fuzz.c) starts, watches and judges the
 * children. */
#include "fuzz_child.h"
#include "fuzz_calls.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <toll/toll.h>
#include <unistd.h>

typedef unsigned long word;

enum {
    k_arena_pages = 8, /* 6 read-write, 1 read-only, 1 inaccessible, then a hole */
};

/* --- the generator: splitmix64, the same on every run and architecture -- */

static uint64_t g_state;

static uint64_t next64(void)
{
    uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31); /* the same finaliser as mix() below */
}

static word rnd(void)
{
    return (word)next64();
}

static unsigned pick(unsigned n)
{
    return (unsigned)(next64() % n);
}

/* --- what the hostile values are made of -------------------------------- */

static char* g_arena; /* k_arena_pages pages, see above */
/* One page shared with the driver (MAP_SHARED, so fork keeps it shared):
 * the child counts its calls there, and the driver's watch reads the count.
 * A child that execs loses the page, so it stops counting. */
static volatile unsigned long* g_progress;
static long g_page;
static word g_limit; /* the top of user space (vm.user_limit) */
static word g_image_start, g_image_end;
static word g_stack_floor; /* below the stack region */
#if defined(__i386__)
static unsigned g_tls_selector, g_user_ds;
#endif

extern char __executable_start[], _end[];

static word pointer_value(void)
{
    switch (pick(16)) {
    case 0:
        return 0;
    case 1:
        return (word)g_arena + pick(6 * g_page); /* valid */
    case 2:
        return (word)g_arena + 6 * g_page - 1 - pick(64); /* runs into read-only */
    case 3:
        return (word)g_arena + 6 * g_page + pick(g_page); /* read-only */
    case 4:
        return (word)g_arena + 7 * g_page + pick(g_page); /* inaccessible */
    case 5:
        return (word)g_arena + 8 * g_page - 1 - pick(32); /* runs into a hole */
    case 6:
        return g_limit - 1 - pick(64); /* the top of user space */
    case 7:
        return g_limit + pick(16) * (word)g_page; /* just above: the kernel */
    case 8:
        return (word)-1 - pick(4096); /* wraps around zero */
    case 9:
        return (word) - (long)g_page; /* the last page */
#if defined(__i386__)
    case 10:
        return 0xC0100000u + pick(0x100000); /* kernel text under 3/1 */
    case 11:
        return 0xFFC00000u + pick(0x400000); /* the trampoline, the top */
#else
    case 10:
        return 0xFFFF000000000000ul + (rnd() & 0xFFFFFFFFFFul); /* the kernel half */
    case 11:
        return 0x0000800000000000ul - pick(4096); /* non-canonical edge */
#endif
    case 12:
        return g_image_start + pick((unsigned)(g_image_end - g_image_start)); /* the program */
    case 13:
        return 0x10000000u + pick(0x1000); /* nothing there */
    case 14:
        return rnd() & ~(word)(g_page - 1); /* any page */
    default:
        return rnd();
    }
}

static word size_value(void)
{
    switch (pick(12)) {
    case 0:
        return 0;
    case 1:
        return 1 + pick(64);
    case 2:
        return pick(5000);
    case 3:
        return (word)g_page;
    case 4:
        return (word)g_page + 1;
    case 5:
        return 0x7FFFF000u;
    case 6:
        return 0x80000000u;
    case 7:
        return (word)-1;
    case 8:
        return (word) - (long)g_page;
    case 9:
        return g_limit;
    case 10:
        return (word)1 << pick(8 * sizeof(word));
    default:
        return rnd();
    }
}

static word small_value(void)
{
    switch (pick(8)) {
    case 0:
        return 0;
    case 1:
        return (word)-1;
    case 2:
        return (word)(long)INT32_MIN;
    case 3:
        return 1023;
    case 4:
        return 1u << 20;
    default:
        return pick(24); /* descriptors, indexes, small counts */
    }
}

static word flags_value(void)
{
    switch (pick(5)) {
    case 0:
        return 0;
    case 1:
        return (word)1 << pick(8 * sizeof(word));
    case 2:
        return rnd() & 0xFFFF;
    case 3:
        return (word)-1;
    default:
        return rnd();
    }
}

static word any_value(void)
{
    switch (pick(4)) {
    case 0:
        return pointer_value();
    case 1:
        return size_value();
    case 2:
        return small_value();
    default:
        return flags_value();
    }
}

/* Fills the arena's writable pages with words that make plausible and
 * hostile structures alike: iovecs, timespecs, argv arrays, sigsets. */
static void fill_arena(void)
{
    word* w = (word*)g_arena;
    for (size_t i = 0; i < 6 * (size_t)g_page / sizeof(word); ++i) {
        switch (pick(6)) {
        case 0:
        case 1:
            w[i] = 0;
            break;
        case 2:
            w[i] = pick(4096);
            break;
        case 3:
            w[i] = pointer_value();
            break;
        default:
            w[i] = any_value();
            break;
        }
    }
    /* A string or two for the calls that take paths: names the calls may
     * not change for good (the tree is writable, but /dev is read-only, /
     * can be neither removed nor renamed, and /proc refuses writes), so
     * that nothing the children did stays behind as memory the tree holds. */
    static const char* const paths[] = {"/proc/self/stat", "/dev/null",       "/dev/zero",
                                        "/",               "/bin/../dev/zero", "/dev/console"};
    for (int i = 0; i < 4; ++i) {
        const char* p = paths[pick(sizeof paths / sizeof paths[0])];
        memcpy(g_arena + pick(5 * g_page), p, strlen(p) + 1);
    }
}

/* --- the trap itself, with hostile register state ------------------------ */

/* What the assembly below loads before trapping. Offsets are fixed. */
struct Frame {
    word number;   /* 0 */
    word arg[6];   /* 1..6 */
    word extra[8]; /* 7..14: i386 ds, es, fs, gs, eflags bits, esp; arm64 nzcv, sp, tpidr, x9.. */
};

long fuzz_trap(struct Frame* f);

#if defined(__i386__)
/* Intel SDM Vol. 1, 3.4.3: EFLAGS bits a program may set with popf:
 * CF PF AF ZF SF OF (0x8D5), DF (0x400), NT (0x4000), AC (0x40000),
 * ID (0x200000). TF is left out: its trap would end the child at once. */
#define FUZZ_EFLAGS_BITS 0x2448D5u
word fuzz_saved_esp;
__asm__(".text\n"
        ".globl fuzz_trap\n"
        "fuzz_trap:\n"
        "  push %ebp\n  push %ebx\n  push %esi\n  push %edi\n"
        "  mov 20(%esp), %eax\n"
        "  push %ds\n  push %es\n  push %fs\n  push %gs\n"
        "  mov %esp, fuzz_saved_esp\n"
        "  pushf\n  pop %ecx\n  or 44(%eax), %ecx\n  push %ecx\n  popf\n"
        "  mov 28(%eax), %es\n  mov 32(%eax), %fs\n  mov 36(%eax), %gs\n"
        "  mov 4(%eax), %ebx\n  mov 8(%eax), %ecx\n  mov 12(%eax), %edx\n"
        "  mov 16(%eax), %esi\n  mov 20(%eax), %edi\n  mov 24(%eax), %ebp\n"
        "  mov 40(%eax), %ds\n" /* from here on, memory only through %ss */
        "  cmpl $0, %ss:48(%eax)\n  je 1f\n  mov %ss:48(%eax), %esp\n1:\n"
        "  mov %ss:0(%eax), %eax\n"
        "  int $0x80\n"
        "  mov %ss:fuzz_saved_esp, %esp\n"
        "  pop %gs\n  pop %fs\n  pop %es\n  pop %ds\n"
        "  pushf\n  andl $~0x2448D5, (%esp)\n  popf\n"
        "  pop %edi\n  pop %esi\n  pop %ebx\n  pop %ebp\n"
        "  ret\n");

static void hostile_registers(struct Frame* f)
{
    /* Selectors a program may load: null, user data, its TLS, user code
     * (readable, so a data register may hold it). */
    const word selectors[] = {0, g_user_ds, g_tls_selector, g_user_ds - 8, 0};
    word* s = f->extra;
    /* extra[0..3] = es fs gs ds (see the offsets above: 28, 32, 36, 40) */
    s[0] = selectors[pick(5)];
    s[1] = selectors[pick(5)];
    s[2] = pick(2) ? g_tls_selector : selectors[pick(5)];
    s[3] = pick(3) ? g_user_ds : selectors[pick(5)];
    s[4] = pick(2) ? (rnd() & FUZZ_EFLAGS_BITS) : 0;
    s[5] = pick(8) == 0 ? pointer_value() | 1 : 0; /* a garbage stack pointer */
}
#elif defined(__aarch64__)
/* Arm ARM C5.2.9: NZCV is bits 31:28, writable at EL0. */
__asm__(".text\n"
        ".globl fuzz_trap\n"
        "fuzz_trap:\n"
        "  stp x29, x30, [sp, #-48]!\n"
        "  stp x19, x20, [sp, #16]\n"
        "  stp x21, x22, [sp, #32]\n"
        "  mov x19, sp\n"
        "  mrs x20, tpidr_el0\n"
        "  mov x21, x0\n"
        "  ldr x9, [x21, #56]\n  and x9, x9, #0xF0000000\n  msr nzcv, x9\n"
        "  ldr x9, [x21, #72]\n  msr tpidr_el0, x9\n"
        "  ldp x9, x10, [x21, #80]\n  ldp x11, x12, [x21, #96]\n"
        "  ldr x13, [x21, #112]\n"
        "  ldr x8, [x21, #0]\n"
        "  ldp x0, x1, [x21, #8]\n  ldp x2, x3, [x21, #24]\n  ldp x4, x5, [x21, #40]\n"
        "  ldr x15, [x21, #64]\n  cbz x15, 1f\n  mov sp, x15\n1:\n"
        "  svc #0\n"
        "  mov sp, x19\n"
        "  msr tpidr_el0, x20\n"
        "  ldp x21, x22, [sp, #32]\n"
        "  ldp x19, x20, [sp, #16]\n"
        "  ldp x29, x30, [sp], #48\n"
        "  ret\n");

static void hostile_registers(struct Frame* f)
{
    word* s = f->extra;
    s[0] = rnd();                              /* nzcv */
    s[1] = pick(8) == 0 ? pointer_value() : 0; /* sp, not even aligned */
    s[2] = pick(2) ? pointer_value() : 0;      /* tpidr_el0 */
    for (int i = 3; i < 8; ++i)
        s[i] = any_value(); /* x9..x13 */
}
#else
#error "ut_fuzz knows the trap of i386 and arm64 only"
#endif

/* --- one child ---------------------------------------------------------- */

static int name_is(const struct FuzzCall* c, const char* name)
{
    return strcmp(c->name, name) == 0;
}

/* Whether [a, a+len) would take away the child's own code, data or stack:
 * the child would only die of it, so such calls are drawn again. */
static int hits_self(word a, word len)
{
    word end = a + len;
    if (end < a)
        end = (word)-1;
    return (a < g_image_end && end > g_image_start) || end > g_stack_floor ||
           (a < (word)g_arena + k_arena_pages * g_page && end > (word)g_arena) ||
           (a < (word)g_progress + g_page && end > (word)g_progress);
}

static const struct FuzzCall* choose_call(struct FuzzCall* unknown)
{
    unsigned n = sizeof k_calls / sizeof k_calls[0];
    unsigned r = pick(100);
    if (r < 92)
        return &k_calls[pick(n)];
    unknown->name = "unknown";
    if (r < 98)
        unknown->number = (long)pick(1100);
    else
        unknown->number = (long)any_value();
    return unknown;
}

/* Draws the arguments of @c into @f. Returns 0 to skip the call. */
static int draw_arguments(const struct FuzzCall* c, struct Frame* f, pid_t self)
{
    for (int i = 0; i < 6; ++i)
        f->arg[i] = any_value();
    f->number = (word)c->number;
    if (name_is(c, "exit") || name_is(c, "exit_group"))
        return pick(50) == 0; /* rarely: they end the child */
    if ((name_is(c, "fork") || name_is(c, "clone")) && pick(8))
        return 0; /* costly (a copy of the child, then its exit): fewer of them */
    /* Calls that end the child (a sigreturn to a frame of garbage) or put it
     * to sleep until a signal (the driver then ends it): fewer of them too. */
    if ((name_is(c, "sigreturn") || name_is(c, "rt_sigreturn")) && pick(64))
        return 0;
    if ((name_is(c, "pause") || name_is(c, "rt_sigsuspend") || name_is(c, "ppoll")) && pick(16))
        return 0;
    if (name_is(c, "tkill") || name_is(c, "tgkill")) {
        /* Never another process's thread: only nonsense ids, or rarely its own. */
        const word ids[] = {99999, (word)-99999, (word)(long)INT32_MIN, 0x7FFFFFFF, 0};
        word id = pick(100) ? ids[pick(5)] : (word)self;
        f->arg[0] = name_is(c, "tgkill") ? (pick(2) ? (word)self : ids[pick(5)]) : id;
        if (name_is(c, "tgkill"))
            f->arg[1] = id;
        f->arg[name_is(c, "tgkill") ? 2 : 1] = pick(4) ? pick(70) : any_value();
    }
    if (name_is(c, "kill")) {
        /* Never the driver or init: kill(0) and kill(-1) reach them. */
        const word pids[] = {99999, (word)-99999, (word)(long)INT32_MIN, 0x7FFFFFFF};
        f->arg[0] = pick(100) ? pids[pick(4)] : (word)self; /* itself: rarely, it may die */
        f->arg[1] = pick(4) ? pick(70) : any_value();
    }
    if (name_is(c, "execve") && pick(2))
        f->arg[0] = (word) "/bin/true"; /* argv and envp stay hostile */
    if (name_is(c, "setpgid") && pick(2))
        f->arg[0] = pick(2) ? 0 : (word)self; /* itself, so that the rules past ESRCH run */
    if (name_is(c, "sigaltstack") && pick(2)) {
        /* A stack in the arena, of a size around the minimum, that a later
         * SA_ONSTACK handler (sigaction with random flags) may run on. */
        word* ss = (word*)g_arena;
        ss[0] = (word)g_arena + pick(4) * g_page;
        ss[1] = pick(4) ? 0 : rnd(); /* ss_flags (an int, then padding on arm64) */
        ss[2] = pick(2) ? pick(3) * 4096 + pick(2) : any_value();
        f->arg[0] = (word)ss;
    }
    if (name_is(c, "nanosleep") || name_is(c, "clock_nanosleep") || name_is(c, "ppoll")) {
        /* A valid timespec must not put the child to sleep: zero, or invalid. */
        word at = f->arg[name_is(c, "nanosleep") ? 0 : 2];
        if (at >= (word)g_arena && at <= (word)g_arena + 6 * g_page - 2 * sizeof(word)) {
            const word nsec[] = {0, (word)-1, 1000000000, (word)-1000000000, rnd()};
            word* ts = (word*)at; /* maybe misaligned: a user pointer may be */
            word seconds = pick(4) ? 0 : (word)-1 - pick(2), ns = nsec[pick(5)];
            if (seconds == 0 && ns < 1000000000 && ns != 0)
                ns = 0;
            memcpy(&ts[0], &seconds, sizeof seconds);
            memcpy((char*)at + sizeof(word), &ns, sizeof ns);
        }
    }
    if (name_is(c, "munmap") || name_is(c, "mprotect") || name_is(c, "mmap") ||
        name_is(c, "mmap_pages") || name_is(c, "brk") || name_is(c, "mremap")) {
        for (int tries = 0; hits_self(f->arg[0], f->arg[1]); ++tries) {
            if (tries == 8)
                return 0;
            f->arg[0] = pointer_value();
            f->arg[1] = size_value();
        }
    }
    hostile_registers(f);
    return 1;
}

/* Whether call @p number may create a process: the table's fork, clone or
 * vfork, whichever name drew it (an unknown number can land on one). */
static int makes_process(word number)
{
    for (size_t i = 0; i < sizeof k_calls / sizeof k_calls[0]; ++i)
        if ((word)k_calls[i].number == number &&
            (name_is(&k_calls[i], "fork") || name_is(&k_calls[i], "clone") ||
             name_is(&k_calls[i], "vfork")))
            return 1;
    return 0;
}

static int g_out = 1; /* where a replay prints its calls */

static void print_call(long i, const struct FuzzCall* c, const struct Frame* f)
{
    dprintf(
        g_out,
        "# call %ld: %s(#%ld) %#lx %#lx %#lx %#lx %#lx %#lx regs %#lx %#lx %#lx %#lx %#lx %#lx\n",
        i, c->name, c->number, f->arg[0], f->arg[1], f->arg[2], f->arg[3], f->arg[4], f->arg[5],
        f->extra[0], f->extra[1], f->extra[2], f->extra[3], f->extra[4], f->extra[5]);
}

/* splitmix64's finaliser: nearby inputs give unrelated outputs. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Child C's generator starts from a hash of (seed, C), not from seed + C:
 * splitmix64 steps its state by a constant, so children whose states were
 * that constant apart would make the same calls shifted by one. */
static uint64_t child_seed(uint64_t seed, long child)
{
    return mix(mix(seed) ^ mix(0x632BE59BD9B4E019ull + (uint64_t)child));
}

static void prepare_descriptors(void)
{
    /* The working directory: /proc, where no name can be made. A hostile
     * pointer is often a string of garbage, and a relative one would
     * otherwise leave a file of that name (and its memory) in the tree. */
    chdir("/proc");
    /* No console: a read would wait for a person, a write would scribble on
     * the test's output. In its place: /dev/null, /dev/zero and pipes that
     * cannot block (writer closed, reader closed) and one that can. */
    int devnull = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd)
        if (devnull >= 0 && devnull != fd)
            dup2(devnull, fd);
    open("/dev/zero", O_RDWR);
    int p[2];
    if (pipe(p) == 0)
        close(p[1]); /* reads: end of file */
    if (pipe(p) == 0)
        close(p[0]); /* writes: EPIPE */
    if (pipe(p) == 0)
        write(p[1], "fuzz", 4); /* reads: data, then it blocks */
}

void fuzz_child(uint64_t seed, long child, long calls, int verbose)
{
    g_state = child_seed(seed, child);
    pid_t self = getpid();
    /* A write to the pipe whose reader is closed fails with EPIPE instead of
     * ending the child (until the fuzzer itself changes the disposition). */
    signal(SIGPIPE, SIG_IGN);
    /* A group of its own, so that a kill(0) or a kill(-pgrp) it makes (an
     * unknown number can land on kill with any arguments) reaches only the
     * child and what it forks, never the driver's other children. */
    setpgid(0, 0);
    if (verbose)
        g_out = dup2(1, 60); /* out of the way of the descriptors fuzzed */
    prepare_descriptors();
    fill_arena();
    struct FuzzCall unknown = {0, "unknown"};
    for (long i = 0; i < calls;) {
        if (i % 256 == 255)
            fill_arena();
        const struct FuzzCall* c = choose_call(&unknown);
        struct Frame f;
        memset(&f, 0, sizeof f);
        if (!draw_arguments(c, &f, self))
            continue; /* drawn again: the sequence still depends on the seed alone */
        if (verbose)
            print_call(i, c, &f);
        ++*g_progress;
        long r = fuzz_trap(&f);
        ++i;
        if (r == 0 && makes_process(f.number) && getpid() != self)
            _exit(0); /* a grandchild: gone at once (it would fuzz on, unwatched) */
    }
    if (verbose)
        dprintf(g_out, "# child %ld made its %ld calls\n", child, calls);
    _exit(0);
}

int fuzz_setup(unsigned long user_limit)
{
    g_page = sysconf(_SC_PAGESIZE);
    g_limit = user_limit;
    g_image_start = (word)__executable_start;
    g_image_end = ((word)_end + g_page - 1) & ~(word)(g_page - 1);
    g_stack_floor = g_limit - (16ul << 20);
#if defined(__i386__)
    __asm__ volatile("mov %%gs, %0" : "=r"(g_tls_selector));
    __asm__ volatile("mov %%ds, %0" : "=r"(g_user_ds));
#endif
    g_arena = mmap(NULL, k_arena_pages * g_page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g_arena == MAP_FAILED)
        return 0;
    mprotect(g_arena + 6 * g_page, g_page, PROT_READ);
    mprotect(g_arena + 7 * g_page, g_page, PROT_NONE);
    memset(g_arena, 0, 6 * g_page);
    /* After the arena, so that the arena's address (and every pointer drawn
     * into it) is what it was before the page existed. */
    void* progress = mmap(NULL, g_page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (progress == MAP_FAILED)
        return 0;
    g_progress = progress;
    return 1;
}

unsigned long fuzz_progress(void)
{
    return *g_progress;
}

unsigned fuzz_call_count(void)
{
    return (unsigned)(sizeof k_calls / sizeof k_calls[0]);
}
