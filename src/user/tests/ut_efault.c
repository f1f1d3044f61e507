/* ut_efault: bad pointers, numbers, flags and descriptors handed to system
 * calls. Each call must fail with the right errno and the kernel must carry
 * on, and so must this process. Raw syscall() is used throughout, so that
 * musl cannot check, round or dereference an argument first. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_huge_nsec = 2000000000 };

static long g_page; /* the page size, from the kernel (arm64 may use 16 KB) */

/* The calls by the numbers of each architecture: i386 keeps Linux's old
 * calls (open, pipe, dup2, mmap2, a 32-bit and a 64-bit clock_gettime);
 * arm64 has only the generic table (openat, pipe2, dup3, mmap, one clock). */
static long sys_open(const void* path, int flags)
{
#ifdef SYS_open
    return syscall(SYS_open, path, flags);
#else
    return syscall(SYS_openat, AT_FDCWD, path, flags);
#endif
}

static long sys_pipe(void* fds)
{
#ifdef SYS_pipe
    return syscall(SYS_pipe, fds);
#else
    return syscall(SYS_pipe2, fds, 0);
#endif
}

static long sys_dup2(int from, int to)
{
#ifdef SYS_dup2
    return syscall(SYS_dup2, from, to);
#else
    return syscall(SYS_dup3, from, to, 0);
#endif
}

#ifndef SYS_mmap2
#define SYS_mmap2 SYS_mmap /* same arguments for the flags test below */
#endif

/* The clock_gettime calls; those the kernel lacks (ENOSYS) are not tested. */
struct ClockCall {
    long number;
    const char* name;
    size_t timespec_size;
    int present;
};

static struct ClockCall g_clocks[] = {
#ifdef SYS_clock_gettime64
    {SYS_clock_gettime64, "clock_gettime64", 16, 0},
    {SYS_clock_gettime32, "clock_gettime (32-bit)", 8, 0},
#else
    {SYS_clock_gettime, "clock_gettime", sizeof(struct timespec), 0},
#endif
};
enum { k_clock_count = sizeof g_clocks / sizeof g_clocks[0] };

/* Addresses no system call may use: named for the check lines. */
struct BadAddress {
    uintptr_t addr; /* 0 for "the unmapped page", filled in by main() */
    const char* name;
};

static struct BadAddress g_bad[] = {
    {0, "NULL"},
    /* Toll's kernel half (3/1 split): physical memory from 0 and the kernel
     * text at 1 MB are mapped there, so a kernel that forgets to check the
     * range would read or write them without any fault. */
    {0xC0000000u, "0xC0000000"},
    {0xC0100000u, "0xC0100000"},
    {0xFFFFF000u, "0xFFFFF000"},
    {0, "an unmapped page"},
};
enum { k_bad_count = sizeof g_bad / sizeof g_bad[0], k_unmapped = k_bad_count - 1 };

static char g_desc[200];

/* Format the description of the next check. */
static const char* desc(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static const char* desc(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_desc, sizeof g_desc, fmt, ap);
    va_end(ap);
    return g_desc;
}

/* Check that @r (a syscall() result, errno as it left it) is -1 with @err. */
#define EXPECT_ERR(r, err, description)                                                            \
    __extension__({                                                                                \
        long r_ = (r);                                                                             \
        int e_ = errno;                                                                            \
        char d_[sizeof g_desc + 32];                                                               \
        snprintf(d_, sizeof d_, "%s fails with %s", (description), #err);                          \
        utest_reportf(r_ == -1 && e_ == (err), __FILE__, __LINE__, d_,                             \
                      "returned %ld, errno %d (%s)", r_, e_, strerror(e_));                        \
    })

/* Run execve(@path, @argv, NULL) in a child, which exits with the errno the
 * call returned. Were the exec to succeed, /bin/true would exit 0 instead. */
static int exec_errno(const char* path, char* const* argv)
{
    pid_t pid = fork();
    if (pid == 0) {
        errno = 0;
        syscall(SYS_execve, path, argv, NULL);
        _exit(errno);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* A zombie child to wait for. */
static pid_t zombie(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(3);
    /* Give it time to exit: wait4 must then copy a status out. */
    struct timespec t = {0, 20 * 1000 * 1000};
    nanosleep(&t, NULL);
    return pid;
}

/* Check that the pipe @fds holds exactly @want, read in one go. */
static void check_pipe_holds(int fds[2], const char* want, const char* what)
{
    char buf[64] = {0};
    write(fds[1], "|", 1); /* an end marker: the read below never blocks */
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    size_t len = strlen(want);
    utest_reportf(n == (ssize_t)len + 1 && memcmp(buf, want, len) == 0 && buf[len] == '|', __FILE__,
                  __LINE__, what, "pipe held %zd bytes: \"%.*s\"", n, (int)n, buf);
}

/* Every pointer-taking call, given one bad address. */
static void test_bad_address(const struct BadAddress* bad)
{
    void* p = (void*)bad->addr;
    int fds[2];
    if (sys_pipe(fds) != 0)
        return;

    write(fds[1], "abc", 3);
    EXPECT_ERR(syscall(SYS_read, fds[0], p, 3), EFAULT, desc("read(pipe, %s)", bad->name));
    check_pipe_holds(fds, "abc", desc("the failed read into %s consumed nothing", bad->name));
    EXPECT_ERR(syscall(SYS_write, fds[1], p, 3), EFAULT, desc("write(pipe, %s)", bad->name));
    check_pipe_holds(fds, "", desc("the failed write from %s wrote nothing", bad->name));

    EXPECT_ERR(syscall(SYS_writev, fds[1], p, 1), EFAULT, desc("writev(pipe, iov=%s)", bad->name));
    struct iovec iov[2] = {{"ok", 2}, {p, 3}};
    EXPECT_ERR(syscall(SYS_writev, fds[1], iov + 1, 1), EFAULT,
               desc("writev(pipe, iov_base=%s)", bad->name));
    check_pipe_holds(fds, "", desc("the failed writev calls from %s wrote nothing", bad->name));
    close(fds[0]);
    close(fds[1]);

    EXPECT_ERR(sys_open(p, O_RDONLY), EFAULT, desc("open(%s)", bad->name));
    EXPECT_ERR(sys_pipe(p), EFAULT, desc("pipe(%s)", bad->name));
    for (int c = 0; c < k_clock_count; ++c)
        if (g_clocks[c].present)
            EXPECT_ERR(syscall(g_clocks[c].number, CLOCK_MONOTONIC, p), EFAULT,
                       desc("%s(MONOTONIC, %s)", g_clocks[c].name, bad->name));
    EXPECT_ERR(syscall(SYS_nanosleep, p, NULL), EFAULT, desc("nanosleep(%s)", bad->name));
#ifdef SYS_set_thread_area
    EXPECT_ERR(syscall(SYS_set_thread_area, p), EFAULT, desc("set_thread_area(%s)", bad->name));
#endif

    errno = exec_errno(p, (char*[]){"true", NULL});
    EXPECT_ERR(-1, EFAULT, desc("execve(path=%s)", bad->name));
    if (p != NULL) {
        char* argv[] = {"true", p, NULL};
        errno = exec_errno(utest_bin("true"), argv);
        EXPECT_ERR(-1, EFAULT, desc("execve(/bin/true, argv[1]=%s)", bad->name));
        /* Linux takes a NULL argv (or status pointer, below) as "none". */
        errno = exec_errno(utest_bin("true"), p);
        EXPECT_ERR(-1, EFAULT, desc("execve(/bin/true, argv=%s)", bad->name));
        pid_t pid = zombie();
        EXPECT_ERR(syscall(SYS_wait4, pid, p, 0, NULL), EFAULT,
                   desc("wait4(child, status=%s)", bad->name));
        /* Linux reaps the child even so; a kernel may also keep it. */
        waitpid(pid, NULL, 0);
    }

    unsigned long long value;
    errno = 0;
    long r = counter_get(p, &value);
    if (r == -1 && errno == ENOSYS) {
        SKIP(desc("counter_get(name=%s) fails with EFAULT", bad->name), "no counter_get (Linux)");
    } else {
        EXPECT_ERR(r, EFAULT, desc("counter_get(name=%s)", bad->name));
        EXPECT_ERR(counter_get("cpu.syscalls", p), EFAULT,
                   desc("counter_get(value=%s)", bad->name));
        EXPECT_ERR(counter_list(p, 64), EFAULT, desc("counter_list(%s)", bad->name));
    }
}

/* Buffers that begin on a mapped page and run into the unmapped one. */
static void test_crossing(char* page_end)
{
    int fds[2];
    if (sys_pipe(fds) != 0)
        return;
    char* cross = page_end - 16; /* 16 valid bytes, then the hole */
    memset(cross, 'x', 16);
    EXPECT_ERR(syscall(SYS_write, fds[1], cross, 32), EFAULT, "write(pipe, 16 of 32 bytes mapped)");
    check_pipe_holds(fds, "", "the failed crossing write wrote nothing (Linux)");
    write(fds[1], "0123456789abcdefghijklmnopqrstuv", 32);
    EXPECT_ERR(syscall(SYS_read, fds[0], cross, 32), EFAULT, "read(pipe, 16 of 32 bytes mapped)");
    check_pipe_holds(fds, "0123456789abcdefghijklmnopqrstuv",
                     "the failed crossing read consumed nothing (Linux)");

    struct iovec* iov = (struct iovec*)(page_end - sizeof(struct iovec) / 2);
    EXPECT_ERR(syscall(SYS_writev, fds[1], iov, 1), EFAULT, "writev(pipe, iovec half mapped)");
    EXPECT_ERR(sys_open(cross, O_RDONLY), EFAULT, "open(path running into the hole)");
    /* A path whose NUL is the last mapped byte is fine: the kernel must stop
     * reading at the NUL. */
    const char* path = utest_bin("true");
    size_t size = strlen(path) + 1;
    memcpy(page_end - size, path, size);
    long fd = sys_open(page_end - size, O_RDONLY);
    CHECK_MSG(fd >= 0, "open(path ending on the last mapped byte) succeeds");
    if (fd >= 0)
        close(fd);
    EXPECT_ERR(sys_pipe(page_end - 4), EFAULT, "pipe(fds half mapped)");
    for (int c = 0; c < k_clock_count; ++c)
        if (g_clocks[c].present)
            EXPECT_ERR(syscall(g_clocks[c].number, CLOCK_MONOTONIC,
                               page_end - g_clocks[c].timespec_size / 2),
                       EFAULT, desc("%s(timespec half mapped)", g_clocks[c].name));
    EXPECT_ERR(syscall(SYS_nanosleep, page_end - sizeof(long), NULL), EFAULT,
               "nanosleep(timespec half mapped)");
    char** argv = (char**)(page_end - sizeof(char*));
    argv[0] = "true"; /* argv[1] would lie in the hole */
    errno = exec_errno(utest_bin("true"), argv);
    EXPECT_ERR(-1, EFAULT, "execve(/bin/true, argv running into the hole)");
    close(fds[0]);
    close(fds[1]);
}

/* Lengths that make pointer + length wrap past 4 GB. */
static void test_wrap(char* page)
{
    int fds[2];
    if (sys_pipe(fds) != 0)
        return;
    EXPECT_ERR(syscall(SYS_write, fds[1], (uintptr_t)0 - 0x100, 0x200), EFAULT,
               "write(pipe, top of memory - 0x100, 0x200): the range wraps to 0x100");

    /* page + len wraps to 16. A native kernel (Toll) refuses the range:
     * EFAULT. Linux on x86-64 runs i386 programs with 64-bit range checks,
     * so it sees no wrap, copies the one valid page and returns that short
     * count. Either is safe; more than the valid page is not. */
    size_t wrap = (size_t)0 - (uintptr_t)page + 16;
    memset(page, 'w', g_page);
    errno = 0;
    long r = syscall(SYS_write, fds[1], page, wrap);
    utest_reportf((r == -1 && errno == EFAULT) || (r >= 0 && r <= g_page), __FILE__, __LINE__,
                  "write(pipe, page, length wrapping past 4 GB): EFAULT or the valid part",
                  "returned %ld, errno %d", r, errno);
    for (long left = r; left > 0;) { /* drain what Linux wrote */
        long n = read(fds[0], page, left < g_page ? left : g_page);
        if (n <= 0)
            break;
        left -= n;
    }
    write(fds[1], "xyz", 3);
    errno = 0;
    r = syscall(SYS_read, fds[0], page, wrap);
    utest_reportf((r == -1 && errno == EFAULT) || (r == 3 && memcmp(page, "xyz", 3) == 0), __FILE__,
                  __LINE__, "read(pipe, page, length wrapping past 4 GB): EFAULT or 3",
                  "returned %ld, errno %d", r, errno);
    close(fds[0]);
    close(fds[1]);
}

static void test_bad_numbers_flags_fds(void)
{
    EXPECT_ERR(syscall(9999), ENOSYS, "system call 9999");
    EXPECT_ERR(syscall(-1), ENOSYS, "system call -1");
    EXPECT_ERR(syscall(0x7fffffff), ENOSYS, "system call 0x7fffffff");

    EXPECT_ERR(syscall(SYS_wait4, -1, NULL, 0x12345678, NULL), EINVAL, "wait4(options=0x12345678)");
    EXPECT_ERR(syscall(SYS_mmap2, 0, g_page, PROT_READ, MAP_ANONYMOUS, -1, 0), EINVAL,
               "mmap2(neither MAP_PRIVATE nor MAP_SHARED)");
    char* page = mmap(NULL, g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_ERR(syscall(SYS_munmap, page + 1, g_page), EINVAL, "munmap(unaligned)");
    EXPECT_ERR(syscall(SYS_mprotect, page + 1, g_page, PROT_READ), EINVAL, "mprotect(unaligned)");
    munmap(page, g_page);
    struct {
        long sec, nsec;
    } bad_time = {0, k_huge_nsec};
    EXPECT_ERR(syscall(SYS_nanosleep, &bad_time, NULL), EINVAL, "nanosleep(tv_nsec=2e9)");

    char buf[4];
    int fds[2];
    if (sys_pipe(fds) != 0)
        return;
    EXPECT_ERR(syscall(SYS_read, -1, buf, 1), EBADF, "read(fd -1)");
    EXPECT_ERR(syscall(SYS_write, 999, buf, 1), EBADF, "write(fd 999)");
    EXPECT_ERR(syscall(SYS_close, 999), EBADF, "close(fd 999)");
    EXPECT_ERR(sys_dup2(999, 5), EBADF, "dup2(fd 999)");
    struct iovec iov = {buf, 1};
    EXPECT_ERR(syscall(SYS_writev, 999, &iov, 1), EBADF, "writev(fd 999)");
    EXPECT_ERR(syscall(SYS_read, fds[1], buf, 1), EBADF, "read(write end of a pipe)");
    EXPECT_ERR(syscall(SYS_write, fds[0], buf, 1), EBADF, "write(read end of a pipe)");
    close(fds[1]);
    EXPECT_ERR(syscall(SYS_close, fds[1]), EBADF, "close(a closed fd)");
    close(fds[0]);
}

int main(void)
{
    g_page = sysconf(_SC_PAGESIZE);
    int clocks = 0;
    for (int c = 0; c < k_clock_count; ++c) {
        long long now[2];
        errno = 0;
        g_clocks[c].present =
            syscall(g_clocks[c].number, CLOCK_MONOTONIC, now) == 0 || errno != ENOSYS;
        clocks += g_clocks[c].present;
    }
    CHECK_MSG(clocks > 0, "clock_gettime is implemented");

    /* Two pages, the second unmapped again: a hole just after valid memory. */
    char* pages =
        mmap(NULL, 2 * g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!CHECK_MSG(pages != MAP_FAILED && munmap(pages + g_page, g_page) == 0,
                   "a mapped page followed by a hole"))
        return utest_done();
    g_bad[k_unmapped].addr = (uintptr_t)(pages + g_page);

    for (int i = 0; i < k_bad_count; ++i)
        test_bad_address(&g_bad[i]);
    test_crossing(pages + g_page);
    test_wrap(pages);
    test_bad_numbers_flags_fds();

    /* After all that, the kernel and this process still work. */
    int fds[2];
    char c = 0;
    CHECK_MSG(pipe(fds) == 0 && write(fds[1], "!", 1) == 1 && read(fds[0], &c, 1) == 1 && c == '!',
              "a pipe still works afterwards");
    return utest_done();
}
