/* linux_signals.c: ut_linux's signal answers, where Linux gives one exact
 * answer: the si_code of kill, tkill and raise, sigaltstack and SA_ONSTACK
 * delivery (nested, across fork and exec, overflowing), and what sigreturn
 * does with a frame a program may not resume (segment selectors and MXCSR
 * on i386, PSTATE on arm64). Part of the program ut_linux (ut_linux.c has
 * main and the process and file answers). */
#define _GNU_SOURCE /* REG_DS and kin in <ucontext.h> */
#include "install_info.h"
#include "toll/utest.h"
#include "ut_linux.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>

#if defined(__aarch64__)
#define KERNEL_MINSIGSTKSZ 5120 /* arch/arm64/include/uapi/asm/signal.h */
#else
#define KERNEL_MINSIGSTKSZ 2048 /* arch/x86/include/uapi/asm/signal.h */
#endif

/* --- si_code ---------------------------------------------------------------- */

static volatile int g_code, g_pid;

static void code_handler(int sig, siginfo_t* si, void* uc)
{
    (void)sig;
    (void)uc;
    g_code = si->si_code;
    g_pid = si->si_pid;
}

void test_si_code(void)
{
    install_info(SIGUSR1, code_handler, 0);
    pid_t me = getpid();
    g_code = 99;
    raise(SIGUSR1);
    CHECK_EQ(g_code, SI_TKILL);
    CHECK_EQ(g_pid, me);
    g_code = 99;
    kill(me, SIGUSR1);
    CHECK_EQ(g_code, SI_USER);
    CHECK_EQ(g_pid, me);
    g_code = 99;
    syscall(SYS_tkill, (long)syscall(SYS_gettid), SIGUSR1);
    CHECK_EQ(g_code, SI_TKILL);
    g_code = 99;
    syscall(SYS_tgkill, me, (long)syscall(SYS_gettid), SIGUSR1);
    CHECK_EQ(g_code, SI_TKILL);
    signal(SIGUSR1, SIG_DFL);
}

/* --- sigaltstack ------------------------------------------------------------ */

static char g_alt[65536] __attribute__((aligned(16)));

/* musl refuses some requests itself: these go straight to the kernel. */
static long raw_sigaltstack(const stack_t* ss, stack_t* old)
{
    return syscall(SYS_sigaltstack, ss, old);
}

static int on_alt(const void* p)
{
    return (const char*)p >= g_alt && (const char*)p < g_alt + sizeof g_alt;
}

struct handler_view {
    int local_on_alt;
    int query_flags;
    int change_errno;
    stack_t uc_stack;
    uintptr_t local;
};
static struct handler_view g_outer, g_inner;
static volatile int g_nest;

static void view(struct handler_view* v, void* ctx)
{
    volatile int local = 0;
    v->local = (uintptr_t)&local;
    v->local_on_alt = on_alt((const void*)&local);
    stack_t q;
    raw_sigaltstack(NULL, &q);
    v->query_flags = q.ss_flags;
    stack_t other = {g_alt, 0, sizeof g_alt / 2};
    errno = 0;
    v->change_errno = raw_sigaltstack(&other, NULL) == 0 ? 0 : errno;
    v->uc_stack = ((ucontext_t*)ctx)->uc_stack;
}

static void inner_handler(int sig, siginfo_t* si, void* ctx)
{
    (void)sig;
    (void)si;
    view(&g_inner, ctx);
}

static void outer_handler(int sig, siginfo_t* si, void* ctx)
{
    (void)sig;
    (void)si;
    view(&g_outer, ctx);
    if (g_nest)
        raise(SIGUSR2);
}

/* The alternate stack after fork (kept) or exec (gone): exit 0 when it is
 * g_alt or disabled, as @p expect_kept says. */
int altstack_is(int expect_kept)
{
    stack_t q;
    if (raw_sigaltstack(NULL, &q) != 0)
        return 2;
    if (expect_kept)
        return q.ss_sp == g_alt && q.ss_size == sizeof g_alt && q.ss_flags == 0 ? 0 : 1;
    return q.ss_flags == SS_DISABLE && q.ss_size == 0 ? 0 : 1;
}

/* A handler that raises its own signal again (SA_NODEFER) on an alternate
 * stack with an unmapped page below it, counting in shared memory: the
 * frames run off the bottom and the process dies of SIGSEGV. */
static volatile int* g_depth;

static void recurse_handler(int sig)
{
    ++*g_depth;
    raise(sig);
}

static void overflow_alt_stack(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char* area = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED || mprotect(area, page, PROT_NONE) != 0)
        _exit(2);
    stack_t s = {area + page, 0, 2 * page};
    if (raw_sigaltstack(&s, NULL) != 0)
        _exit(3);
    install(SIGUSR1, recurse_handler, SA_ONSTACK | SA_NODEFER);
    raise(SIGUSR1);
    _exit(4);
}

void test_sigaltstack(void)
{
    stack_t q;
    CHECK_EQ(raw_sigaltstack(NULL, &q), 0);
    CHECK_EQ(q.ss_flags, SS_DISABLE);
    CHECK_EQ(q.ss_size, 0);
    stack_t s = {g_alt, 0, KERNEL_MINSIGSTKSZ - 1};
    CHECK_ERR(raw_sigaltstack(&s, NULL), ENOMEM);
    s.ss_size = KERNEL_MINSIGSTKSZ;
    CHECK_EQ(raw_sigaltstack(&s, NULL), 0);
    CHECK_EQ(raw_sigaltstack(NULL, &q), 0);
    CHECK_MSG(q.ss_sp == g_alt && q.ss_size == KERNEL_MINSIGSTKSZ && q.ss_flags == 0,
              "sigaltstack reports the stack it was given, not in use");
    s.ss_flags = 5;
    CHECK_ERR(raw_sigaltstack(&s, NULL), EINVAL);
    s.ss_flags = SS_ONSTACK; /* accepted, as 0, for old programs */
    CHECK_EQ(raw_sigaltstack(&s, NULL), 0);
    s.ss_flags = SS_DISABLE;
    s.ss_size = 1; /* ignored when disabling */
    CHECK_EQ(raw_sigaltstack(&s, &q), 0);
    CHECK_EQ(q.ss_flags, 0); /* the old one, as it was */
    CHECK_EQ(raw_sigaltstack(NULL, &q), 0);
    CHECK_MSG(q.ss_flags == SS_DISABLE && q.ss_size == 0 && q.ss_sp == NULL,
              "a disabled alternate stack reads back as none");
    CHECK_ERR(raw_sigaltstack((stack_t*)8, NULL), EFAULT);
    CHECK_ERR(raw_sigaltstack(NULL, (stack_t*)8), EFAULT);

    /* Delivery on it: SA_ONSTACK handlers run there, see it in use and
     * cannot change it; uc_stack saves it as it was when interrupted. */
    s = (stack_t){g_alt, 0, sizeof g_alt};
    CHECK_EQ(raw_sigaltstack(&s, NULL), 0);
    install_info(SIGUSR1, outer_handler, SA_ONSTACK);
    install_info(SIGUSR2, inner_handler, SA_ONSTACK);
    g_nest = 0;
    raise(SIGUSR1);
    CHECK(g_outer.local_on_alt);
    CHECK_EQ(g_outer.query_flags, SS_ONSTACK);
    CHECK_EQ(g_outer.change_errno, EPERM);
    CHECK_MSG(g_outer.uc_stack.ss_sp == g_alt && g_outer.uc_stack.ss_size == sizeof g_alt &&
                  g_outer.uc_stack.ss_flags == 0,
              "uc_stack holds the alternate stack as sigaltstack set it");
    CHECK_EQ(raw_sigaltstack(NULL, &q), 0);
    CHECK_EQ(q.ss_flags, 0); /* back on the main stack */

    /* A nested SA_ONSTACK signal stays on it, below the first frame. */
    g_nest = 1;
    raise(SIGUSR1);
    CHECK(g_inner.local_on_alt);
    CHECK(g_inner.local < g_outer.local);
    /* uc_stack saves the flags sigaltstack was given, not whether the stack
     * was in use (Linux's __save_altstack): 0 here too. */
    CHECK_MSG(g_inner.uc_stack.ss_sp == g_alt && g_inner.uc_stack.ss_flags == 0,
              "a nested frame's uc_stack is the alternate stack as set");
    CHECK_EQ(g_inner.change_errno, EPERM);

    /* Without SA_ONSTACK the handler runs on the stack it interrupted. */
    install_info(SIGUSR1, outer_handler, 0);
    g_nest = 0;
    raise(SIGUSR1);
    CHECK(!g_outer.local_on_alt);
    CHECK_EQ(g_outer.query_flags, 0);
    CHECK_EQ(g_outer.change_errno, 0); /* not on it: may change it */
    s = (stack_t){g_alt, 0, sizeof g_alt};
    CHECK_EQ(raw_sigaltstack(&s, NULL), 0);

    /* fork keeps it; execve forgets it. */
    pid_t f = fork();
    if (f == 0)
        _exit(altstack_is(1));
    CHECK_EQ(outcome(f), 0);
    pid_t e = fork();
    if (e == 0) {
        execl(utest_bin("ut_linux"), "ut_linux", "--altstack-gone", (char*)0);
        _exit(127);
    }
    CHECK_EQ(outcome(e), 0);

    /* Frames that run off the alternate stack kill the program. */
    g_depth = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(g_depth != MAP_FAILED);
    if (g_depth != MAP_FAILED) {
        *g_depth = 0;
        pid_t o = fork();
        if (o == 0)
            overflow_alt_stack();
        CHECK_EQ(outcome(o), KILLED_BY(SIGSEGV));
        CHECK(*g_depth >= 1);
        NOTE("handlers nested on a 2-page alternate stack before it overflowed: %d", *g_depth);
    }

    s.ss_flags = SS_DISABLE;
    raw_sigaltstack(&s, NULL);
    signal(SIGUSR1, SIG_DFL);
    signal(SIGUSR2, SIG_DFL);
}

/* --- sigreturn of a frame the program may not resume ----------------------- */

#if defined(__i386__)
static volatile int g_edit_reg;
static volatile unsigned g_edit_value;
static volatile unsigned g_mxcsr_bit;

static void edit_handler(int sig, siginfo_t* si, void* ctx)
{
    (void)sig;
    (void)si;
    ucontext_t* uc = ctx;
    if (g_mxcsr_bit) {
        uint8_t* fp = (uint8_t*)uc->uc_mcontext.fpregs;
        if (!fp)
            _exit(99);
        uint32_t mxcsr; /* the FXSAVE image starts 112 bytes in; MXCSR at 24 */
        memcpy(&mxcsr, fp + 112 + 24, sizeof mxcsr);
        mxcsr |= g_mxcsr_bit;
        memcpy(fp + 112 + 24, &mxcsr, sizeof mxcsr);
    } else {
        uc->uc_mcontext.gregs[g_edit_reg] = g_edit_value;
    }
}

/* After the handler edits @p reg to @p value, reads the segment register
 * back and exits with its low byte, through the stack and int 0x80 only (a
 * null DS would fault on any access to the program's data). */
static void segment_child(int reg, unsigned value)
{
    g_edit_reg = reg;
    g_edit_value = value;
    install_info(SIGUSR1, edit_handler, 0);
    volatile int which = reg;
    raise(SIGUSR1);
    unsigned short v = 0;
    if (which == REG_DS)
        __asm__ volatile("mov %%ds, %0" : "=r"(v));
    else if (which == REG_ES)
        __asm__ volatile("mov %%es, %0" : "=r"(v));
    else if (which == REG_FS)
        __asm__ volatile("mov %%fs, %0" : "=r"(v));
    __asm__ volatile("int $0x80" : : "a"(SYS_exit), "b"(v & 0xFF));
}

static int run_segment(int reg, unsigned value)
{
    pid_t pid = fork();
    if (pid == 0)
        segment_child(reg, value);
    return outcome(pid);
}

static void mxcsr_child(unsigned bit)
{
    volatile double x = 1.5;
    x *= 3; /* the FPU is in use: the frame holds its state */
    (void)x;
    g_mxcsr_bit = bit;
    install_info(SIGUSR1, edit_handler, 0);
    raise(SIGUSR1);
    uint32_t mxcsr;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    _exit(mxcsr & bit ? 0 : 1);
}

static void test_sigreturn_frames(void)
{
    unsigned short cs, ds;
    __asm__("mov %%cs, %0\n\tmov %%ds, %1" : "=r"(cs), "=r"(ds));
    /* A data register may hold null, a user data segment or the readable
     * user code segment; anything else comes back null (the program faults
     * only when it uses the register). */
    CHECK_EQ(run_segment(REG_DS, 0x10), 0); /* a kernel segment on both systems */
    CHECK_EQ(run_segment(REG_DS, cs), cs & 0xFF);
    /* (A write through such a DS faults on Linux's CPU, not under QEMU,
     * which checks no segment on a data access: not checked here.) */
    CHECK_EQ(run_segment(REG_ES, 0xFFFF), 0); /* past the GDT */
    CHECK_EQ(run_segment(REG_FS, 0x0F), 0);   /* the LDT: there is none */
    CHECK_EQ(run_segment(REG_FS, cs), cs & 0xFF);
    /* CS and SS that cannot be resumed: SIGSEGV. */
    CHECK_EQ(run_segment(REG_CS, ds), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_segment(REG_SS, cs), KILLED_BY(SIGSEGV));
    /* MXCSR: a reserved bit is a bad frame (SIGSEGV); FZ is restored. */
    static const unsigned reserved[] = {1u << 16, 1u << 31};
    for (unsigned i = 0; i < sizeof reserved / sizeof reserved[0]; ++i) {
        pid_t pid = fork();
        if (pid == 0)
            mxcsr_child(reserved[i]);
        CHECK_EQ(outcome(pid), KILLED_BY(SIGSEGV));
    }
    pid_t pid = fork();
    if (pid == 0)
        mxcsr_child(1u << 15);
    CHECK_EQ(outcome(pid), 0);
}

/* rt_sigreturn with the stack pointer on an unmapped page. */
static void sigreturn_unmapped(void)
{
    __asm__ volatile("movl $0x1000, %%esp\n\tint $0x80" : : "a"(SYS_rt_sigreturn) : "memory");
}
#elif defined(__aarch64__)
static volatile uint64_t g_pstate_set;

static void pstate_handler(int sig, siginfo_t* si, void* ctx)
{
    (void)sig;
    (void)si;
    ucontext_t* uc = ctx;
    uc->uc_mcontext.pstate |= g_pstate_set;
}

static int run_pstate(uint64_t set)
{
    pid_t pid = fork();
    if (pid == 0) {
        g_pstate_set = set;
        install_info(SIGUSR1, pstate_handler, 0);
        raise(SIGUSR1);
        _exit(0);
    }
    return outcome(pid);
}

static void test_sigreturn_frames(void)
{
    /* Arm ARM, SPSR_EL1: a mode other than EL0t or a D/A/I/F mask is a
     * frame Linux refuses (SIGSEGV); N, Z, C, V are the program's own. */
    CHECK_EQ(run_pstate(0x80), KILLED_BY(SIGSEGV));  /* I */
    CHECK_EQ(run_pstate(0x200), KILLED_BY(SIGSEGV)); /* D */
    CHECK_EQ(run_pstate(0x5), KILLED_BY(SIGSEGV));   /* EL1h */
    CHECK_EQ(run_pstate(0x10), KILLED_BY(SIGSEGV));  /* AArch32 */
    CHECK_EQ(run_pstate(0x20000000), 0);             /* C */
}

static void sigreturn_unmapped(void)
{
    __asm__ volatile("mov x9, #0x10000\n\tmov sp, x9\n\tmov x8, %0\n\tsvc #0"
                     :
                     : "i"(SYS_rt_sigreturn)
                     : "x8", "x9", "memory");
}
#endif

void test_bad_sigreturn(void)
{
#if defined(__i386__) || defined(__aarch64__)
    test_sigreturn_frames();
    pid_t pid = fork();
    if (pid == 0) {
        sigreturn_unmapped();
        _exit(0);
    }
    CHECK_EQ(outcome(pid), KILLED_BY(SIGSEGV)); /* not an error return */
#endif
}
