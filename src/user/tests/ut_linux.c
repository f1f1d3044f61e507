/* ut_linux: calls where Linux gives one exact answer, checked against it:
 * process groups and sessions (setpgid, getpgrp, getpgid, setsid, getsid,
 * kill and waitpid of a group), kill of a zombie, the si_code of kill, tkill
 * and raise, sigaltstack and SA_ONSTACK delivery, pause, nanosleep's time
 * left, writev's clamped total, getdents64 with room for exactly one entry,
 * and what sigreturn does with a frame a program may not resume (segment
 * selectors and MXCSR on i386, PSTATE on arm64). The i386 build runs on an
 * x86-64 Linux host too, and gives the same answers there. */
#define _GNU_SOURCE /* REG_DS and kin in <ucontext.h> */
#include "toll/utest.h"
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>

/* Linux's own values, which the C library does not all spell. */
#define MAX_RW_COUNT 0x7ffff000L /* include/linux/fs.h: INT_MAX & PAGE_MASK */
#define UIO_MAXIOV_COUNT 1024    /* include/uapi/linux/uio.h: UIO_MAXIOV */
#if defined(__aarch64__)
#define KERNEL_MINSIGSTKSZ 5120 /* arch/arm64/include/uapi/asm/signal.h */
#else
#define KERNEL_MINSIGSTKSZ 2048 /* arch/x86/include/uapi/asm/signal.h */
#endif
#define KILLED_BY(sig) (1000 + (sig))

/* The kernel's struct timespec for nanosleep and ppoll (i386: two 32-bit
 * longs, not musl's 64-bit time_t). */
struct ktimespec {
    long tv_sec;
    long tv_nsec;
};

static volatile sig_atomic_t g_hits;

static void count_handler(int sig)
{
    (void)sig;
    ++g_hits;
}

static void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa = {0};
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void install_info(int sig, void (*fn)(int, siginfo_t*, void*), int flags)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* Waits for @p pid: its exit code, or KILLED_BY(signal). */
static int outcome(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFSIGNALED(status) ? KILLED_BY(WTERMSIG(status)) : WEXITSTATUS(status);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* A pid that no process has: a child's, once it has been waited for. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

/* A child that waits until the write end of @p gate closes, then exits 0. */
static pid_t blocked_child(int gate[2], pid_t group)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (group >= 0)
            setpgid(0, group);
        close(gate[1]);
        char c;
        read(gate[0], &c, 1);
        _exit(0);
    }
    if (group >= 0)
        setpgid(pid, group ? group : pid); /* both sides, as a shell does */
    return pid;
}

/* --- process groups and sessions ------------------------------------------ */

static void test_group_ids(void)
{
    pid_t me = getpid(), dead = dead_pid();
    CHECK_EQ(getpgrp(), getpgid(0));
    CHECK_EQ(getpgid(me), getpgrp());
    CHECK_EQ(getsid(0), getsid(me));
    CHECK(getsid(0) > 0);
    CHECK_ERR(getpgid(dead), ESRCH);
    CHECK_ERR(getsid(dead), ESRCH);
    CHECK_ERR(setpgid(0, -1), EINVAL);
    CHECK_ERR(setpgid(dead, 0), ESRCH);

    /* The parent moves a child between groups of its session. */
    int gate[2];
    pipe(gate);
    pid_t a = blocked_child(gate, -1);
    CHECK_EQ(setpgid(a, a), 0);
    CHECK_EQ(getpgid(a), a);
    CHECK_EQ(getsid(a), getsid(0));
    CHECK_ERR(setpgid(a, dead), EPERM); /* no group of that number */
    CHECK_EQ(setpgid(a, getpgrp()), 0);
    CHECK_EQ(getpgid(a), getpgrp());
    close(gate[0]);
    close(gate[1]);
    CHECK_EQ(outcome(a), 0);
}

/* A grandchild is not the caller's to move. */
static void test_group_not_a_child(void)
{
    int report[2], gate[2];
    pipe(report);
    pipe(gate);
    pid_t middle = fork();
    if (middle == 0) {
        pid_t grandchild = blocked_child(gate, -1);
        close(gate[1]); /* the grandchild waits for the test's copy alone */
        write(report[1], &grandchild, sizeof grandchild);
        waitpid(grandchild, NULL, 0);
        _exit(0);
    }
    pid_t grandchild = 0;
    read(report[0], &grandchild, sizeof grandchild);
    CHECK_ERR(setpgid(grandchild, grandchild), ESRCH);
    CHECK_EQ(getpgid(grandchild), getpgrp());
    close(gate[0]);
    close(gate[1]);
    CHECK_EQ(outcome(middle), 0);
    close(report[0]);
    close(report[1]);
}

/* setsid in a child: it leads a new session and group, and then can be
 * moved neither by itself nor by its parent. Says on @p ready that it is
 * set up, waits for @p gate to close, and exits 0 when each of its own calls
 * gave Linux's answer, else the number of the first that did not. */
static void session_child(int gate[2], int ready)
{
    close(gate[1]);
    pid_t me = getpid();
    int failed = 0;
    if (setsid() != me)
        failed = 1;
    else if (getsid(0) != me || getpgrp() != me)
        failed = 2;
    else if (setsid() != -1 || errno != EPERM) /* already a group leader */
        failed = 3;
    else if (setpgid(0, 0) != -1 || errno != EPERM) /* a session leader stays */
        failed = 4;
    write(ready, "r", 1);
    char c;
    read(gate[0], &c, 1);
    _exit(failed);
}

static void test_sessions(void)
{
    int gate[2], ready[2];
    pipe(gate);
    pipe(ready);
    pid_t s = fork();
    if (s == 0) {
        close(ready[0]);
        session_child(gate, ready[1]);
    }
    close(ready[1]);
    char c;
    CHECK_EQ(read(ready[0], &c, 1), 1);
    close(ready[0]);
    CHECK_EQ(getsid(s), s);
    CHECK_EQ(getpgid(s), s);
    CHECK_ERR(setpgid(s, getpgrp()), EPERM); /* it is in another session */
    close(gate[0]);
    close(gate[1]);
    CHECK_EQ(outcome(s), 0);

    /* A process group leader cannot start a session. */
    pid_t g = fork();
    if (g == 0) {
        setpgid(0, 0);
        _exit(setsid() == -1 ? errno : 0);
    }
    CHECK_EQ(outcome(g), EPERM);

    /* A child that ran execve cannot be moved by its parent (EACCES). */
    int ready2[2];
    pipe(ready2);
    pipe(gate);
    pid_t e = fork();
    if (e == 0) {
        char rfd[16], wfd[16];
        snprintf(rfd, sizeof rfd, "%d", gate[0]);
        snprintf(wfd, sizeof wfd, "%d", ready2[1]);
        close(gate[1]);
        execl(utest_bin("ut_linux"), "ut_linux", "--wait", rfd, wfd, (char*)0);
        _exit(127);
    }
    close(ready2[1]);
    CHECK_EQ(read(ready2[0], &c, 1), 1);
    CHECK_ERR(setpgid(e, e), EACCES);
    close(gate[0]);
    close(gate[1]);
    close(ready2[0]);
    CHECK_EQ(outcome(e), 0);
}

/* kill(0, sig) from a child that leads its own group: the child and its two
 * children get it, the test (another group) does not. Exit 0 when so. */
static void kill_own_group(void)
{
    setpgid(0, 0);
    signal(SIGUSR1, SIG_DFL); /* the children die of it */
    pid_t kids[2];
    for (int i = 0; i < 2; ++i) {
        kids[i] = fork();
        if (kids[i] == 0)
            for (;;)
                pause();
    }
    install(SIGUSR1, count_handler, 0);
    g_hits = 0;
    if (kill(0, SIGUSR1) != 0) {
        kill(kids[0], SIGKILL); /* so that a kernel without groups fails, not hangs */
        kill(kids[1], SIGKILL);
        _exit(1);
    }
    if (g_hits != 1)
        _exit(2);
    for (int i = 0; i < 2; ++i)
        if (outcome(kids[i]) != KILLED_BY(SIGUSR1))
            _exit(3 + i);
    _exit(0);
}

static void test_kill_groups(void)
{
    g_hits = 0;
    install(SIGUSR1, count_handler, 0);
    pid_t k = fork();
    if (k == 0)
        kill_own_group();
    CHECK_EQ(outcome(k), 0);
    CHECK_EQ(g_hits, 0); /* the caller of kill(0) was in another group */

    /* kill(-pgrp) and waitpid(-pgrp): two children in a group of their own,
     * a third in the test's group. */
    int gate[2], gate3[2];
    pipe(gate);
    pipe(gate3);
    pid_t c1 = blocked_child(gate, 0);
    pid_t c2 = blocked_child(gate, c1);
    pid_t c3 = blocked_child(gate3, -1);
    CHECK_EQ(getpgid(c2), c1);
    int status;
    CHECK_EQ(waitpid(-c1, &status, WNOHANG), 0);
    CHECK_EQ(kill(-c1, 0), 0);
    int sent = kill(-c1, SIGTERM);
    CHECK_EQ(sent, 0);
    if (sent != 0) { /* end them anyway: the waits below must not hang */
        kill(c1, SIGTERM);
        kill(c2, SIGTERM);
    }
    pid_t first = waitpid(-c1, &status, 0);
    CHECK_MSG((first == c1 || first == c2) && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
              "waitpid(-pgrp) reaps a member of the group, killed by kill(-pgrp)");
    pid_t second = waitpid(-c1, &status, 0);
    CHECK_MSG(second == (first == c1 ? c2 : c1) && WIFSIGNALED(status) &&
                  WTERMSIG(status) == SIGTERM,
              "and then the other member");
    CHECK_ERR(waitpid(-c1, &status, WNOHANG), ECHILD); /* c3 is not in it */
    CHECK_ERR(kill(-c1, 0), ESRCH);
    CHECK_EQ(waitpid(c3, &status, WNOHANG), 0); /* c3 was spared */
    close(gate3[0]);
    close(gate3[1]);
    CHECK_EQ(waitpid(0, &status, 0), c3); /* the caller's own group */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(gate[0]);
    close(gate[1]);
    CHECK_ERR(kill(INT_MIN, 0), ESRCH);
    CHECK_ERR(waitpid(INT_MIN, &status, WNOHANG), ESRCH);
    CHECK_ERR(kill(-dead_pid(), 0), ESRCH);
    signal(SIGUSR1, SIG_DFL);
}

/* --- kill of a zombie ------------------------------------------------------- */

static volatile sig_atomic_t g_chld;

static void chld_handler(int sig)
{
    (void)sig;
    g_chld = 1;
}

static void test_kill_zombie(void)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    install(SIGCHLD, chld_handler, 0);
    sigprocmask(SIG_BLOCK, &block, &old);
    g_chld = 0;
    pid_t z = fork();
    if (z == 0)
        _exit(7);
    sigset_t wait_mask = old;
    sigdelset(&wait_mask, SIGCHLD);
    while (!g_chld) /* SIGCHLD comes once the child is a zombie */
        sigsuspend(&wait_mask);
    sigprocmask(SIG_SETMASK, &old, NULL);
    CHECK_EQ(kill(z, 0), 0);
    CHECK_EQ(kill(z, SIGKILL), 0);
    CHECK_EQ(syscall(SYS_tkill, z, SIGTERM), 0);
    int status;
    CHECK_EQ(waitpid(z, &status, 0), z);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 7,
              "the signals sent to the zombie changed nothing");
    CHECK_ERR(kill(z, 0), ESRCH);
    signal(SIGCHLD, SIG_DFL);
}

/* --- si_code ---------------------------------------------------------------- */

static volatile int g_code, g_pid;

static void code_handler(int sig, siginfo_t* si, void* uc)
{
    (void)sig;
    (void)uc;
    g_code = si->si_code;
    g_pid = si->si_pid;
}

static void test_si_code(void)
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
static int altstack_is(int expect_kept)
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

static void test_sigaltstack(void)
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

/* --- pause, nanosleep, ppoll ------------------------------------------------ */

static void test_pause(void)
{
    int ready[2];
    pipe(ready);
    pid_t p = fork();
    if (p == 0) {
        install(SIGUSR1, count_handler, 0);
        g_hits = 0;
        write(ready[1], "r", 1);
        int r = pause();
        _exit(r == -1 && errno == EINTR && g_hits == 1 ? 0 : 1);
    }
    char c;
    read(ready[0], &c, 1);
    sleep_ms(50);
    int status;
    CHECK_EQ(waitpid(p, &status, WNOHANG), 0); /* pause() waits */
    kill(p, SIGUSR1);
    CHECK_EQ(outcome(p), 0); /* then returns EINTR after the handler */
    close(ready[0]);
    close(ready[1]);
}

/* A child that signals its parent with SIGUSR1 after @p ms. */
static pid_t signal_me_in(long ms)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        sleep_ms(ms);
        kill(parent, SIGUSR1);
        _exit(0);
    }
    return pid;
}

static void test_nanosleep(void)
{
    install(SIGUSR1, count_handler, 0);
    struct ktimespec req = {2, 0}, rem = {-1, -1};
    pid_t k = signal_me_in(100);
    errno = 0;
    long r = syscall(SYS_nanosleep, &req, &rem);
    int e = errno;
    CHECK_EQ(r, -1);
    CHECK_EQ(e, EINTR);
    long long left_ms = (long long)rem.tv_sec * 1000 + rem.tv_nsec / 1000000;
    NOTE("nanosleep(2 s) interrupted after about 100 ms: %lld ms left", left_ms);
    CHECK_MSG(rem.tv_nsec >= 0 && rem.tv_nsec < 1000000000 && left_ms > 500 && left_ms < 2000,
              "nanosleep writes the time left to rem when a signal interrupts it");
    outcome(k);

    struct ktimespec tiny = {0, 1000000};
    rem.tv_sec = rem.tv_nsec = -1;
    CHECK_EQ(syscall(SYS_nanosleep, &tiny, &rem), 0);
    CHECK_MSG(rem.tv_sec == -1 && rem.tv_nsec == -1, "an uninterrupted nanosleep leaves rem alone");

    k = signal_me_in(50);
    CHECK_ERR(syscall(SYS_nanosleep, &req, (void*)8), EFAULT); /* rem cannot be written */
    outcome(k);

#if defined(SYS_ppoll)
    /* ppoll without descriptors: a sleep that the timeout ends (and then
     * reads back as 0 left), or a signal (EINTR). */
    struct ktimespec t = {0, 20000000};
    CHECK_EQ(syscall(SYS_ppoll, NULL, 0, &t, NULL, 8), 0);
    CHECK_MSG(t.tv_sec == 0 && t.tv_nsec == 0, "ppoll writes back the time left: none");
    sigset_t none;
    sigemptyset(&none);
    CHECK_ERR(syscall(SYS_ppoll, NULL, 0, &t, &none, 4), EINVAL);
    k = signal_me_in(50);
    g_hits = 0;
    CHECK_ERR(syscall(SYS_ppoll, NULL, 0, NULL, NULL, 8), EINTR);
    CHECK_EQ(g_hits, 1);
    outcome(k);
#endif
    signal(SIGUSR1, SIG_DFL);
}

/* --- writev's total, getdents64 -------------------------------------------- */

/* Low in the address space (the program's data), so that 2 GB past it is
 * still user space on every layout. */
static char g_buf[16];
static struct iovec g_many[UIO_MAXIOV_COUNT + 1];

static void test_writev(void)
{
    int null = open("/dev/null", O_WRONLY);
    struct iovec two[2] = {{g_buf, MAX_RW_COUNT}, {g_buf, MAX_RW_COUNT}};
    CHECK_EQ(writev(null, two, 2), MAX_RW_COUNT);
    struct iovec three[3] = {{g_buf, 5}, {g_buf, MAX_RW_COUNT}, {g_buf, MAX_RW_COUNT}};
    CHECK_EQ(writev(null, three, 3), MAX_RW_COUNT);
    /* A negative length is found before a bad address in an earlier vector. */
    struct iovec negative[2] = {{(void*)8, 1}, {g_buf, (size_t)-1}};
    CHECK_ERR(writev(null, negative, 2), EINVAL);
    CHECK_EQ(writev(null, g_many, UIO_MAXIOV_COUNT), 0);
    CHECK_ERR(writev(null, g_many, UIO_MAXIOV_COUNT + 1), EINVAL);
    close(null);
}

/* Linux's struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name. */
static unsigned short reclen_at(const char* p)
{
    unsigned short n;
    memcpy(&n, p + 16, sizeof n);
    return n;
}

static void test_getdents_one_entry(void)
{
    int fd = open("/", O_RDONLY | O_DIRECTORY);
    static char all[16384], one[512];
    long total = syscall(SYS_getdents64, fd, all, sizeof all);
    CHECK(total > 0);
    lseek(fd, 0, SEEK_SET);
    CHECK_ERR(syscall(SYS_getdents64, fd, one, reclen_at(all) - 1), EINVAL);
    int entries = 0, exact = 0;
    for (long at = 0; at < total; at += reclen_at(all + at)) {
        unsigned short want = reclen_at(all + at);
        long got = syscall(SYS_getdents64, fd, one, want);
        ++entries;
        exact += got == want && strcmp(one + 19, all + at + 19) == 0;
    }
    CHECK_EQ(exact, entries); /* a buffer of one record's size holds that record */
    CHECK_EQ(syscall(SYS_getdents64, fd, one, sizeof one), 0);
    close(fd);
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

static void test_bad_sigreturn(void)
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

int main(int argc, char** argv)
{
    if (argc > 3 && strcmp(argv[1], "--wait") == 0) {
        /* The exec'd child of test_sessions: says it runs, waits for EOF. */
        int rfd = atoi(argv[2]), wfd = atoi(argv[3]);
        write(wfd, "e", 1);
        char c;
        read(rfd, &c, 1);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--altstack-gone") == 0)
        return altstack_is(0);
    test_group_ids();
    test_group_not_a_child();
    test_sessions();
    test_kill_groups();
    test_kill_zombie();
    test_si_code();
    test_sigaltstack();
    test_pause();
    test_nanosleep();
    test_writev();
    test_getdents_one_entry();
    test_bad_sigreturn();
    return utest_done();
}
