/* ut_signal: signals as Linux defines them, through musl's own sigaction,
 * raise, sigprocmask and sigsuspend: handlers run with the right arguments
 * and mask, a handler's edit of the saved registers is what the program
 * resumes with, FP registers survive a handler, default actions ignore,
 * terminate, stop and continue, SA_RESTART restarts a blocked read, SIGPIPE
 * and SIGCHLD arrive, and exec resets handlers. Runs on Linux as well. */
#define _GNU_SOURCE /* REG_EAX and kin in <ucontext.h> */
#include "install_info.h"
#include "toll/utest.h"
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>

static volatile sig_atomic_t g_hits;
static volatile int g_last_sig;
static volatile int g_si_code, g_si_pid, g_si_status;
static volatile uintptr_t g_si_addr;
static volatile int g_mask_had_self, g_mask_had_extra;
static sigjmp_buf g_jump;

static void count_handler(int sig)
{
    ++g_hits;
    g_last_sig = sig;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    g_mask_had_self = sigismember(&now, sig);
    g_mask_had_extra = sigismember(&now, SIGUSR2);
}

static void info_handler(int sig, siginfo_t* si, void* uc)
{
    (void)uc;
    ++g_hits;
    g_last_sig = sig;
    g_si_code = si->si_code;
    g_si_pid = si->si_pid;
    g_si_status = si->si_status;
}

/* Rewrites the return register the interrupted system call left, through
 * the ucontext: the call must "return" what the handler put there. */
static void rewrite_handler(int sig, siginfo_t* si, void* ctx)
{
    (void)sig;
    (void)si;
    ucontext_t* uc = ctx;
#if defined(__i386__)
    uc->uc_mcontext.gregs[REG_EAX] = 1234;
#elif defined(__aarch64__)
    uc->uc_mcontext.regs[0] = 1234;
#elif defined(__x86_64__)
    uc->uc_mcontext.gregs[REG_RAX] = 1234;
#endif
    ++g_hits;
}

static void segv_handler(int sig, siginfo_t* si, void* uc)
{
    (void)uc;
    g_last_sig = sig;
    g_si_addr = (uintptr_t)si->si_addr;
    siglongjmp(g_jump, 1);
}

/* Clobbers the first vector register, which the interrupted code holds. */
static void fp_clobber_handler(int sig)
{
    (void)sig;
#if defined(__i386__) || defined(__x86_64__)
    __asm__ volatile("pxor %%xmm0, %%xmm0" ::: "xmm0");
#elif defined(__aarch64__)
    __asm__ volatile("movi v0.2d, #0" ::: "v0");
#endif
    ++g_hits;
}

static void install(int sig, void (*fn)(int), int flags, int extra)
{
    struct sigaction sa = {0};
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (extra)
        sigaddset(&sa.sa_mask, extra);
    sigaction(sig, &sa, NULL);
}

/* Runs @fn in a child and returns its wait status. */
static int in_child(void (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    return status;
}

static void raise_ignored_by_default(void)
{
    raise(SIGCHLD);
    raise(SIGURG);
    raise(SIGWINCH);
    raise(SIGCONT);
    _exit(7);
}

static void raise_term(void)
{
    raise(SIGTERM);
    _exit(7);
}

static void write_to_closed_pipe(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        _exit(2);
    close(fds[0]);
    write(fds[1], "x", 1);
    _exit(7); /* only reached if SIGPIPE did not kill */
}

static void resethand_twice(void)
{
    g_hits = 0;
    install(SIGUSR1, count_handler, SA_RESETHAND, 0);
    raise(SIGUSR1);
    if (g_hits != 1)
        _exit(3);
    raise(SIGUSR1); /* the default action now: terminate */
    _exit(7);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* A child blocked in read() gets SIGUSR1; with @restart its handler has
 * SA_RESTART and the read goes on to return the byte the parent writes
 * next; without, the read fails with EINTR. Returns what the child saw:
 * 1 data, 2 EINTR, other values for anything else. */
static int read_interrupted(int restart)
{
    int data[2], ready[2];
    if (pipe(data) != 0 || pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        g_hits = 0;
        install(SIGUSR1, count_handler, restart ? SA_RESTART : 0, 0);
        close(data[1]);
        write(ready[1], "r", 1);
        char c;
        ssize_t n = read(data[0], &c, 1);
        if (n == 1 && c == 'd' && g_hits == 1)
            _exit(1);
        if (n == -1 && errno == EINTR && g_hits == 1)
            _exit(2);
        _exit(9);
    }
    char c;
    read(ready[0], &c, 1);
    sleep_ms(30); /* the child is in read() by now */
    kill(pid, SIGUSR1);
    sleep_ms(30);
    write(data[1], "d", 1);
    int status = 0;
    waitpid(pid, &status, 0);
    close(data[0]);
    close(data[1]);
    close(ready[0]);
    close(ready[1]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void test_handlers(void)
{
    install(SIGUSR1, count_handler, 0, SIGUSR2);
    g_hits = 0;
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_MSG(g_hits == 1 && g_last_sig == SIGUSR1, "a handler runs once, with its signal number");
    CHECK_MSG(g_mask_had_self, "the signal is blocked while its handler runs");
    CHECK_MSG(g_mask_had_extra, "sa_mask is blocked while the handler runs");
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    CHECK_MSG(!sigismember(&now, SIGUSR1) && !sigismember(&now, SIGUSR2),
              "sigreturn puts the mask back");

    install_info(SIGUSR2, info_handler, 0);
    g_hits = 0;
    kill(getpid(), SIGUSR2);
    CHECK_MSG(g_hits == 1 && g_last_sig == SIGUSR2, "an SA_SIGINFO handler runs");
    CHECK_EQ(g_si_code, SI_USER);
    CHECK_EQ(g_si_pid, getpid());

    /* Blocked: pending, not run; unblocking runs it before sigprocmask returns. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    g_hits = 0;
    raise(SIGUSR1);
    sigset_t pending;
    sigpending(&pending);
    CHECK_MSG(g_hits == 0 && sigismember(&pending, SIGUSR1), "a blocked signal stays pending");
    sigprocmask(SIG_UNBLOCK, &usr1, NULL);
    CHECK_MSG(g_hits == 1, "unblocking delivers the pending signal");

    /* sigsuspend: the handler runs, the call fails with EINTR, the mask is back. */
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    raise(SIGUSR1);
    sigset_t none;
    sigemptyset(&none);
    g_hits = 0;
    CHECK_ERR(sigsuspend(&none), EINTR);
    sigprocmask(SIG_BLOCK, NULL, &now);
    CHECK_MSG(g_hits == 1 && sigismember(&now, SIGUSR1),
              "sigsuspend ran the handler and restored the mask");
    sigprocmask(SIG_UNBLOCK, &usr1, NULL);

    /* SIG_IGN drops the signal. */
    signal(SIGUSR1, SIG_IGN);
    g_hits = 0;
    raise(SIGUSR1);
    CHECK_MSG(g_hits == 0, "SIG_IGN: nothing runs, nothing dies");
    signal(SIGUSR1, SIG_DFL);
}

static void test_context(void)
{
    /* The saved registers are the program's: a handler's edit comes back. */
    install_info(SIGUSR1, rewrite_handler, 0);
    g_hits = 0;
    long r = syscall(SYS_kill, getpid(), SIGUSR1);
    CHECK_MSG(g_hits == 1 && r == 1234,
              "the ucontext's return register, edited by the handler, is what the call returns");
    signal(SIGUSR1, SIG_DFL);

    /* FP/SIMD registers of the interrupted code survive a handler that clobbers them. */
    install(SIGUSR2, fp_clobber_handler, 0, 0);
    g_hits = 0;
    uint64_t out[2] = {0, 0};
#if defined(__i386__)
    static const uint64_t pattern[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
    long pid = getpid();
    __asm__ volatile("movdqu (%2), %%xmm0\n\t"
                     "pushl %%ebx\n\t"
                     "movl %1, %%ebx\n\t"
                     "movl $37, %%eax\n\t" /* kill */
                     "movl $12, %%ecx\n\t" /* SIGUSR2 */
                     "int $0x80\n\t"
                     "popl %%ebx\n\t"
                     "movdqu %%xmm0, (%0)"
                     :
                     : "r"(out), "r"(pid), "r"(pattern)
                     : "eax", "ecx", "edx", "xmm0", "memory");
    CHECK_MSG(g_hits == 1 && out[0] == pattern[0] && out[1] == pattern[1],
              "xmm0 is the same after a handler that cleared it");
#elif defined(__aarch64__)
    static const uint64_t pattern[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
    long pid = getpid();
    __asm__ volatile("ldr q0, [%2]\n\t"
                     "mov x0, %1\n\t"
                     "mov x1, #12\n\t"  /* SIGUSR2 */
                     "mov x8, #129\n\t" /* kill */
                     "svc #0\n\t"
                     "str q0, [%0]"
                     :
                     : "r"(out), "r"(pid), "r"(pattern)
                     : "x0", "x1", "x8", "v0", "memory");
    CHECK_MSG(g_hits == 1 && out[0] == pattern[0] && out[1] == pattern[1],
              "v0 is the same after a handler that cleared it");
#else
    SKIP("FP registers survive a handler", "no test for this architecture");
#endif
    signal(SIGUSR2, SIG_DFL);

    /* A fault's handler learns the address and can leave with siglongjmp. */
    install_info(SIGSEGV, segv_handler, 0);
    volatile int* bad = (volatile int*)16;
    g_last_sig = 0;
    if (sigsetjmp(g_jump, 1) == 0) {
        *bad = 1;
        CHECK_MSG(0, "the write to address 16 faulted");
    } else {
        CHECK_MSG(g_last_sig == SIGSEGV && g_si_addr == 16,
                  "SIGSEGV's handler runs with si_addr the faulting address");
    }
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    CHECK_MSG(!sigismember(&now, SIGSEGV), "siglongjmp out of the handler restores the mask");
    signal(SIGSEGV, SIG_DFL);
}

static void test_defaults(void)
{
    int status = in_child(raise_ignored_by_default);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 7,
              "SIGCHLD, SIGURG, SIGWINCH and SIGCONT are ignored by default");
    status = in_child(raise_term);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "SIGTERM terminates by default");
    status = in_child(write_to_closed_pipe);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE,
              "a write to a pipe with no reader raises SIGPIPE, which terminates");
    status = in_child(resethand_twice);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1,
              "SA_RESETHAND: the second SIGUSR1 takes the default action");

    signal(SIGPIPE, SIG_IGN);
    int fds[2];
    pipe(fds);
    close(fds[0]);
    CHECK_ERR(write(fds[1], "x", 1), EPIPE);
    close(fds[1]);
    signal(SIGPIPE, SIG_DFL);

    /* Stop and continue, as wait4 reports them. */
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            sleep_ms(10);
    }
    kill(pid, SIGSTOP);
    CHECK_EQ(waitpid(pid, &status, WUNTRACED), pid);
    CHECK_MSG(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP, "SIGSTOP stops, wait4 reports it");
    kill(pid, SIGCONT);
    CHECK_EQ(waitpid(pid, &status, WCONTINUED), pid);
    CHECK_MSG(WIFCONTINUED(status), "SIGCONT continues, wait4 reports it");
    kill(pid, SIGKILL);
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "SIGKILL ends it");

    /* A stopped child ends on SIGKILL too. */
    pid = fork();
    if (pid == 0) {
        for (;;)
            sleep_ms(10);
    }
    kill(pid, SIGSTOP);
    waitpid(pid, &status, WUNTRACED);
    kill(pid, SIGKILL);
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "SIGKILL ends a stopped process");
}

static void test_restart_and_chld(void)
{
    CHECK_EQ(read_interrupted(1), 1); /* SA_RESTART: the read went on */
    CHECK_EQ(read_interrupted(0), 2); /* no SA_RESTART: EINTR */

    install_info(SIGCHLD, info_handler, 0);
    g_hits = 0;
    pid_t pid = fork();
    if (pid == 0)
        _exit(5);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(g_hits == 1 && g_last_sig == SIGCHLD, "SIGCHLD's handler runs when a child exits");
    CHECK_EQ(g_si_pid, pid);
    CHECK_EQ(g_si_code, CLD_EXITED);
    CHECK_EQ(g_si_status, 5);
    signal(SIGCHLD, SIG_DFL);
}

static void test_exec_resets(const char* self)
{
    pid_t pid = fork();
    if (pid == 0) {
        install(SIGUSR1, count_handler, 0, 0);
        signal(SIGUSR2, SIG_IGN);
        execl(self, "ut_signal", "--after-exec", (char*)0);
        _exit(127);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "exec resets handlers to SIG_DFL and keeps SIG_IGN");
}

static int after_exec(void)
{
    struct sigaction a, b;
    sigaction(SIGUSR1, NULL, &a);
    sigaction(SIGUSR2, NULL, &b);
    return a.sa_handler == SIG_DFL && b.sa_handler == SIG_IGN ? 0 : 1;
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "--after-exec") == 0)
        return after_exec();
    test_handlers();
    test_context();
    test_defaults();
    test_restart_and_chld();
    test_exec_resets(utest_bin("ut_signal"));
    return utest_done();
}
