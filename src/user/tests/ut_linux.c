/* ut_linux: calls where Linux gives one exact answer, checked against it:
 * process groups and sessions (setpgid, getpgrp, getpgid, setsid, getsid,
 * kill and waitpid of a group), kill of a zombie, pause, nanosleep's time
 * left, the clocks each form of clock_gettime knows, writev's clamped total
 * and getdents64 with room for exactly one entry here; the si_code of kill,
 * tkill and raise, sigaltstack and SA_ONSTACK delivery, and what sigreturn
 * does with a frame a program may not resume (segment selectors and MXCSR
 * on i386, PSTATE on arm64) in linux_signals.c. The i386 build runs on an
 * x86-64 Linux host too, and gives the same answers there. */
#include "install_info.h"
#include "toll/utest.h"
#include "ut_linux.h"
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

/* Linux's own values, which the C library does not all spell. */
#define MAX_RW_COUNT 0x7ffff000L /* include/linux/fs.h: INT_MAX & PAGE_MASK */
#define UIO_MAXIOV_COUNT 1024    /* include/uapi/linux/uio.h: UIO_MAXIOV */

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

void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa = {0};
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

int outcome(pid_t pid)
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

/* --- the clocks ------------------------------------------------------------ */

/* Every clock id Linux's clock_gettime knows up to CLOCK_BOOTTIME (0 to 7:
 * REALTIME, MONOTONIC, PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID, MONOTONIC_RAW,
 * REALTIME_COARSE, MONOTONIC_COARSE, BOOTTIME) reads in the native form
 * (two longs) and, on i386, in the 64-bit one, with normalised nanoseconds;
 * an id Linux lacks is EINVAL in both. */
static void test_clocks(void)
{
#ifdef SYS_clock_gettime64
    const long native = SYS_clock_gettime32;
#else
    const long native = SYS_clock_gettime;
#endif
    for (int clock = 0; clock <= 7; ++clock) {
        struct ktimespec ts = {-1, -1};
        CHECK_EQ(syscall(native, clock, &ts), 0);
        CHECK_MSG(ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000,
                  "every clock reads as a normalised native timespec");
#ifdef SYS_clock_gettime64
        int64_t wide[2] = {-1, -1};
        CHECK_EQ(syscall(SYS_clock_gettime64, clock, wide), 0);
        CHECK_MSG(wide[0] >= 0 && wide[1] >= 0 && wide[1] < 1000000000,
                  "every clock reads as a normalised 64-bit timespec");
#endif
    }
    struct ktimespec ts;
    CHECK_ERR(syscall(native, 100, &ts), EINVAL);
#ifdef SYS_clock_gettime64
    int64_t wide[2];
    CHECK_ERR(syscall(SYS_clock_gettime64, 100, wide), EINVAL);
#endif
    /* A time to sleep must be normalised: nanoseconds in [0, 1e9), no
     * negative seconds. */
    struct ktimespec too_many_ns = {0, 1000000000}, negative = {-1, 0};
    CHECK_ERR(syscall(SYS_nanosleep, &too_many_ns, NULL), EINVAL);
    CHECK_ERR(syscall(SYS_nanosleep, &negative, NULL), EINVAL);
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
    test_clocks();
    test_writev();
    test_getdents_one_entry();
    test_bad_sigreturn();
    return utest_done();
}
