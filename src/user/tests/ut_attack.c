/* ut_attack: a hostile program. Each attack goes after a class of kernel
 * mistake rather than one example of it: every size a system call adds up
 * (read, write, writev's vectors), every result pointer (wait4's rusage),
 * every length in an ELF file (crafted programs in /bin/badelf_*), every
 * value the kernel restores into a user frame (segment registers, EFLAGS,
 * PSTATE, FPU control words, through set_thread_area and forged sigreturn
 * frames), every alternate signal stack a frame cannot be written to (in the
 * kernel, wrapping around zero, read-only), process groups named by
 * numbers no group has, a trip into virtual-8086 mode, page 0, signals aimed at init,
 * and flags that must not be accepted and ignored (O_NONBLOCK, O_CLOEXEC,
 * PIPE_BUF's atomicity).
 * Children do the dangerous parts; the parent checks how they ended and
 * that the kernel still runs programs afterwards. */
#define _GNU_SOURCE
#include "attack_frames.h"
#include "toll/utest.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

/* How a child ended: its exit status, or 1000 + the signal that killed it. */
static int outcome(pid_t pid)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

static int run_child(void (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    return outcome(pid);
}

#define KILLED_BY(sig) (1000 + (sig))

/* --- sizes and pointers of system calls ---------------------------------- */

/* Low in the address space (the program's data), so that a count clamped to
 * Linux's 2 GB maximum would still end inside user space. */
static char buf[16] = "abc";

static void attack_sizes(void)
{
    /* The whole range is checked before any clamping: a huge count over a
     * small buffer is EFAULT, never "some of the memory after it". */
    CHECK_ERR(write(1, buf, (size_t)-1), EFAULT);
    int zero = open("/dev/zero", O_RDONLY);
    CHECK_ERR(read(zero, buf, (size_t)-1), EFAULT);
    close(zero);
    int null = open("/dev/null", O_WRONLY);
    /* writev: two lengths whose sum overflows ssize_t, a negative length.
     * Linux cuts the total to MAX_RW_COUNT (0x7ffff000) instead of refusing
     * it; on arm64 each range already runs past user space (EFAULT). */
    struct iovec two[2] = {{buf, (size_t)-1 / 2 - 0xFFF}, {buf, (size_t)-1 / 2 - 0xFFF}};
#if defined(__i386__)
    CHECK_EQ(writev(null, two, 2), 0x7ffff000);
#else
    CHECK_ERR(writev(null, two, 2), EFAULT);
#endif
    struct iovec negative[2] = {{buf, 3}, {buf, (size_t)-1}};
    CHECK_ERR(writev(null, negative, 2), EINVAL);
    struct iovec bad_base[2] = {{buf, 3}, {(void*)-4096, 16}};
    CHECK_ERR(writev(null, bad_base, 2), EFAULT);
    CHECK_ERR(writev(null, (struct iovec*)-64, 2), EFAULT);
    CHECK_ERR(writev(null, two, -1), EINVAL);
    struct iovec good[3] = {{buf, 3}, {buf, 0}, {buf, 5}};
    CHECK_EQ(writev(null, good, 3), 8);
    close(null);

    /* wait4 checks its rusage pointer before reaping: the child is not lost. */
    pid_t pid = fork();
    if (pid == 0)
        _exit(4);
    int status;
    CHECK_ERR(syscall(SYS_wait4, pid, &status, 0, (void*)-4096), EFAULT);
    struct rusage ru;
    memset(&ru, 0xAA, sizeof ru);
    CHECK_EQ(wait4(pid, &status, 0, &ru), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 4 && ru.ru_utime.tv_sec == 0,
              "after EFAULT the child is still there to reap, and rusage is written");

    /* Page 0, and everything up to mmap_min_addr, cannot be mapped. */
    const int map = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
    CHECK_MSG(mmap((void*)0, 4096, PROT_READ | PROT_WRITE, map, -1, 0) == MAP_FAILED &&
                  errno == EPERM,
              "MAP_FIXED at address 0 fails with EPERM");
    uintptr_t page = (uintptr_t)getpagesize();
    CHECK_MSG(mmap((void*)page, page, PROT_READ, map, -1, 0) == MAP_FAILED && errno == EPERM,
              "MAP_FIXED at the second page fails with EPERM");
    CHECK_MSG(mmap((void*)(0x100000 - page), 2 * page, PROT_READ, map, -1, 0) == MAP_FAILED &&
                  errno == EPERM,
              "MAP_FIXED across the first megabyte fails with EPERM");
    void* ok = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK_MSG(ok != MAP_FAILED && (uintptr_t)ok >= 0x110000, "a plain mmap still works, high up");

    /* faccessat and faccessat2 exist and check their mode and flags. */
    CHECK_EQ(syscall(SYS_faccessat, AT_FDCWD, "/dev/null", R_OK), 0);
    CHECK_ERR(syscall(SYS_faccessat, AT_FDCWD, "/dev/null", 0x100), EINVAL);
    CHECK_ERR(syscall(SYS_faccessat, AT_FDCWD, "/no/such/file", R_OK), ENOENT);
    CHECK_ERR(syscall(439 /* faccessat2 */, AT_FDCWD, "/dev/null", R_OK, 0x8000), EINVAL);
    CHECK_ERR(syscall(SYS_faccessat, AT_FDCWD, (char*)-4096, R_OK), EFAULT);

    /* rt_sigaction and rt_sigprocmask read what they are given. */
    CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, (void*)-4096, 0, 8), EFAULT);
    CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, 0, 0, 4), EINVAL);
    CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, 0, 0, 16), EINVAL);
    CHECK_ERR(syscall(SYS_rt_sigaction, 65, 0, 0, 8), EINVAL);
    CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void*)-4096, 0, 8), EFAULT);
    CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, 0, 0, 128), EINVAL);
    uint64_t set = 1ull << (SIGUSR2 - 1), old = 0;
    CHECK_ERR(syscall(SYS_rt_sigprocmask, 7, &set, 0, 8), EINVAL);
    CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, 0, 8), 0);
    CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, &old, 8), 0);
    CHECK_MSG(old & set, "rt_sigprocmask blocked the set it read");
}

/* --- flags that must do what they say ------------------------------------ */

/* Waits up to about a second for @pid; kills it if it is still running
 * (a call that should not block did), and returns how it ended. */
static int outcome_within_a_second(pid_t pid)
{
    for (int i = 0; i < 100; ++i) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
        struct timespec t = {0, 10 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    kill(pid, SIGKILL);
    outcome(pid);
    return -2; /* it blocked */
}

static void nonblocking_read_of_empty_pipe(void)
{
    int fds[2];
    if (pipe2(fds, O_NONBLOCK) != 0)
        _exit(2);
    char c;
    _exit(read(fds[0], &c, 1) == -1 && errno == EAGAIN ? 0 : 3);
}

static void nonblocking_write_to_full_pipe(void)
{
    int fds[2];
    if (pipe(fds) != 0 || fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0)
        _exit(2);
    if (!(fcntl(fds[1], F_GETFL) & O_NONBLOCK))
        _exit(4);
    static char chunk[1000];
    long total = 0, n;
    while ((n = write(fds[1], chunk, sizeof chunk)) > 0)
        total += n;
    /* Filled up, then EAGAIN, never a block. */
    _exit(n == -1 && errno == EAGAIN && total > 0 ? 0 : 3);
}

enum { k_record = 3000, k_records = 100 };

static void write_records(int fd, char fill)
{
    static char record[k_record];
    memset(record, fill, sizeof record);
    for (int i = 0; i < k_records; ++i)
        if (write(fd, record, sizeof record) != k_record)
            _exit(3);
    _exit(0);
}

/* Two writers of 3000-byte records (under PIPE_BUF) into one pipe: the
 * reader must find every record whole, never one writer's bytes inside the
 * other's record. */
static void attack_pipe_buf(void)
{
    int fds[2];
    pipe(fds);
    pid_t a = fork();
    if (a == 0)
        write_records(fds[1], 'a');
    pid_t b = fork();
    if (b == 0)
        write_records(fds[1], 'b');
    close(fds[1]);
    static char stream[2 * k_records * k_record];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof stream && (n = read(fds[0], stream + got, 1717)) > 0)
        got += (size_t)n;
    close(fds[0]);
    int torn = 0;
    for (size_t r = 0; r + k_record <= got; r += k_record)
        for (size_t i = 1; i < k_record; ++i)
            if (stream[r + i] != stream[r]) {
                ++torn;
                break;
            }
    CHECK_EQ(got, sizeof stream);
    CHECK_EQ(torn, 0);
    CHECK_EQ(outcome(a), 0);
    CHECK_EQ(outcome(b), 0);
}

/* MAP_SHARED anonymous memory is one memory for parent and child, pages
 * touched before the fork or not; MAP_PRIVATE stays private. */
static void attack_map_shared(void)
{
    size_t page = (size_t)getpagesize();
    volatile char* shared =
        mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    volatile char* private =
        mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!CHECK(shared != MAP_FAILED && private != MAP_FAILED))
        return;
    shared[0] = 'p';
    private[0] = 'p';
    int go[2];
    pipe(go);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        read(go[0], &c, 1); /* the parent wrote page 2 after the fork */
        int saw_parent = shared[0] == 'p' && shared[2 * page] == 'P';
        shared[0] = 'c';
        shared[page] = 'c'; /* a page nobody touched before the fork */
        private[0] = 'c';
        _exit(saw_parent ? 0 : 3);
    }
    shared[2 * page] = 'P';
    write(go[1], "g", 1);
    CHECK_MSG(outcome(pid) == 0,
              "the child sees the parent's MAP_SHARED writes, before and after fork");
    CHECK_MSG(shared[0] == 'c' && shared[page] == 'c',
              "the parent sees the child's MAP_SHARED writes");
    CHECK_MSG(private[0] == 'p', "MAP_PRIVATE memory stays the parent's own");
    close(go[0]);
    close(go[1]);
    munmap((void*)shared, 3 * page);
    munmap((void*)private, page);
}

static void attack_flags(const char* self)
{
    attack_map_shared();
    pid_t pid = fork();
    if (pid == 0)
        nonblocking_read_of_empty_pipe();
    CHECK_MSG(outcome_within_a_second(pid) == 0, "O_NONBLOCK: reading an empty pipe is EAGAIN");
    pid = fork();
    if (pid == 0)
        nonblocking_write_to_full_pipe();
    CHECK_MSG(outcome_within_a_second(pid) == 0,
              "O_NONBLOCK (F_SETFL): writing a full pipe is EAGAIN");
    attack_pipe_buf();

    /* Close-on-exec, however it is asked for, and only where asked. */
    int keep = open("/dev/null", O_RDONLY);
    int gone_open = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int fds[2];
    pipe2(fds, O_CLOEXEC);
    int gone_dup3 = dup3(keep, 20, O_CLOEXEC);
    int gone_dupfd = fcntl(keep, F_DUPFD_CLOEXEC, 21);
    int gone_setfd = dup(keep);
    fcntl(gone_setfd, F_SETFD, FD_CLOEXEC);
    CHECK_EQ(fcntl(gone_open, F_GETFD), FD_CLOEXEC);
    CHECK_EQ(fcntl(keep, F_GETFD), 0);
    CHECK_EQ(fcntl(gone_dupfd, F_GETFD), FD_CLOEXEC);
    int dup2_clears = dup2(gone_open, 22); /* dup2 never copies the flag */
    CHECK_EQ(fcntl(dup2_clears, F_GETFD), 0);
    pid = fork();
    if (pid == 0) {
        char list[96];
        snprintf(list, sizeof list, "%d,%d,%d,%d,%d,%d,%d,%d", keep, dup2_clears, gone_open, fds[0],
                 fds[1], gone_dup3, gone_dupfd, gone_setfd);
        execl(self, "ut_attack", "--check-fds", list, (char*)0);
        _exit(127);
    }
    CHECK_MSG(outcome(pid) == 0, "exec closes exactly the close-on-exec descriptors");
    close(keep);
    close(gone_open);
    close(fds[0]);
    close(fds[1]);
    close(gone_dup3);
    close(gone_dupfd);
    close(gone_setfd);
    close(dup2_clears);
}

/* After exec: the first two descriptors of @list are open, the rest closed. */
static int check_fds(const char* list)
{
    int index = 0, bad = 0;
    for (const char* p = list; *p; ++index) {
        int fd = atoi(p);
        int open_now = fcntl(fd, F_GETFD) != -1;
        bad |= open_now != (index < 2);
        while (*p && *p != ',')
            ++p;
        if (*p == ',')
            ++p;
    }
    return bad;
}

/* --- crafted ELF files ---------------------------------------------------- */

static void attack_elf(void)
{
    static const struct {
        const char* name;
        int err; /* 0: runs and exits 42 */
    } cases[] = {
        {"badelf_ok", 0},
        {"badelf_offset_wrap", ENOEXEC},
        {"badelf_phoff_wrap", ENOEXEC},
        {"badelf_vaddr_wrap", ENOEXEC},
        {"badelf_vaddr_round_wrap", ENOEXEC},
        {"badelf_filesz_huge", ENOEXEC},
        {"badelf_filesz_over_memsz", ENOEXEC},
        {"badelf_page_zero", EPERM},
        {"badelf_truncated", ENOEXEC},
    };
    if (access(utest_bin("badelf_ok"), F_OK) != 0) {
        SKIP("crafted ELF files", "no /bin/badelf_* (not on Toll's ramdisk)");
        return;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            execl(utest_bin(cases[i].name), cases[i].name, (char*)0);
            _exit(errno == cases[i].err ? 100 : 101); /* exec failed: say how */
        }
        int got = outcome(pid);
        utest_reportf(got == (cases[i].err ? 100 : 42), __FILE__, __LINE__, cases[i].name,
                      "child ended with %d (100: expected error, 101: another error, 42: ran)",
                      got);
    }
}

/* --- init ----------------------------------------------------------------- */

static volatile sig_atomic_t g_usr1;
static void on_usr1(int sig)
{
    (void)sig;
    g_usr1 = 1;
}

static void signal_init(void)
{
    static const int sigs[] = {SIGKILL, SIGTERM, SIGSEGV, SIGSTOP, SIGINT, SIGHUP, SIGUSR1};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i)
        if (kill(1, sigs[i]) != 0)
            _exit(3);
}

static void attack_init(void)
{
    if (getpid() != 1) {
        SKIP("init survives every signal", "this test is not init (run it as run=/bin/ut_attack)");
        return;
    }
    signal(SIGUSR1, on_usr1);
    CHECK_EQ(run_child(signal_init), 0);
    /* Still here, not stopped: SIGKILL, SIGSTOP and default actions do not
     * touch init, but a handler it installed runs. */
    CHECK_MSG(g_usr1 == 1,
              "init survived SIGKILL, SIGTERM, SIGSEGV, SIGSTOP, and ran its SIGUSR1 handler");
    signal(SIGUSR1, SIG_DFL);
}

/* --- alternate signal stacks and process groups --------------------------- */

static void on_stack_handler(int sig)
{
    (void)sig;
    _exit(5); /* reached only if the frame was written */
}

/* Sets an alternate stack of @p size bytes at @p sp (straight to the kernel:
 * musl checks nothing about the address) and raises a signal whose handler
 * runs on it. The frame cannot be written there: SIGSEGV, nothing else. */
static void raise_on_stack(uintptr_t sp, size_t size)
{
    stack_t s = {(void*)sp, 0, size};
    if (syscall(SYS_sigaltstack, &s, NULL) != 0)
        _exit(2);
    struct sigaction sa = {0};
    sa.sa_handler = on_stack_handler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    _exit(3);
}

#if defined(__aarch64__)
static const uintptr_t k_kernel_address = 0xffffff8000000000ul; /* TTBR1's half */
#else
static const uintptr_t k_kernel_address = 0xC0000000u; /* the kernel on 3/1; unmapped on 4/4 */
#endif

static void stack_in_kernel(void)
{
    raise_on_stack(k_kernel_address, 1 << 16);
}

static void stack_wraps_around_zero(void)
{
    raise_on_stack((uintptr_t)-4096, 1 << 16); /* its top is 60 KB past zero */
}

static void stack_top_at_zero(void)
{
    raise_on_stack((uintptr_t)-65536, 65536); /* sp + size is exactly 0 */
}

static void stack_read_only(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char* p = mmap(NULL, 4 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        _exit(4);
    raise_on_stack((uintptr_t)p, 4 * page);
}

static void stack_covers_everything(void)
{
    stack_t huge = {buf, 0, (size_t)-1}, q;
    if (syscall(SYS_sigaltstack, &huge, NULL) != 0)
        _exit(1);
    if (syscall(SYS_sigaltstack, NULL, &q) != 0 || q.ss_flags != SS_ONSTACK)
        _exit(2);
    huge.ss_flags = SS_DISABLE;
    if (syscall(SYS_sigaltstack, &huge, NULL) != -1 || errno != EPERM)
        _exit(3);
    _exit(0);
}

static void attack_altstack_and_groups(void)
{
    CHECK_EQ(run_child(stack_in_kernel), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_child(stack_wraps_around_zero), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_child(stack_top_at_zero), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_child(stack_read_only), KILLED_BY(SIGSEGV));
    /* A size past the address space is a stack like any other to Linux:
     * sigaltstack records it, and then the program runs "on" it (EPERM). */
    CHECK_EQ(run_child(stack_covers_everything), 0);
    /* Groups by numbers no process group has; a negative group id. */
    CHECK_ERR(kill(INT32_MIN, 0), ESRCH);
    CHECK_ERR(kill(-0x7FFFFFFF, SIGKILL), ESRCH);
    CHECK_ERR(setpgid(0, INT32_MIN), EINVAL);
    CHECK_ERR(setpgid(0, 0x7FFFFFFF), EPERM);
    CHECK_ERR(getpgid(INT32_MIN), ESRCH);
    CHECK_ERR(getsid(-1), ESRCH);
    CHECK_ERR(waitpid(INT32_MIN, NULL, WNOHANG), ESRCH);
    CHECK_ERR(waitpid(-0x7FFFFFFF, NULL, WNOHANG), ECHILD);
}

/* --- i386: segments, frames, vm86 (the children: attack_frames.c) --------- */
#if defined(__i386__)

static void attack_i386(void)
{
    CHECK_EQ(run_child(tls_refusals), 0);
    CHECK_EQ(run_child(tls_exact_limit), 0);
    CHECK_EQ(run_child(tls_pulled_from_under_ss), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_child(tls_pulled_from_under_ds), 0);
    CHECK_EQ(run_child(null_data_segments_at_syscall), 0);
    CHECK_EQ(run_child(forged_bad_data_segments), 0);
    CHECK_EQ(run_child(forged_iopl), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_child(forged_kernel_cs), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_child(forged_kernel_ss), KILLED_BY(SIGSEGV));
    CHECK_EQ(run_child(forged_mxcsr), KILLED_BY(SIGSEGV)); /* Linux: a bad frame */
    CHECK_EQ(run_child(forged_kernel_fpstate), KILLED_BY(SIGSEGV));
    int vm86 = run_child(iret_to_vm86);
    NOTE("iret to vm86 mode: %s", vm86 == 42 ? "refused by the CPU" : "entered, then killed");
    CHECK_MSG(vm86 == 42 || vm86 == KILLED_BY(SIGSEGV),
              "a program that irets into vm86 mode is refused or killed alone");
}

/* --- arm64: a forged PSTATE (the child: attack_frames.c) ------------------ */
#elif defined(__aarch64__)

static void attack_arm64(void)
{
    CHECK_EQ(run_child(forged_el1), KILLED_BY(SIGSEGV)); /* refused, as Linux does */
    CHECK_EQ(run_child(forged_no_fpsimd), KILLED_BY(SIGSEGV));
}
#endif

int main(int argc, char** argv)
{
    if (argc == 3 && strcmp(argv[1], "--check-fds") == 0)
        return check_fds(argv[2]);
    attack_sizes();
    attack_flags(utest_bin("ut_attack"));
    attack_elf();
    attack_altstack_and_groups();
#if defined(__i386__)
    attack_i386();
#elif defined(__aarch64__)
    attack_arm64();
#endif
    attack_init();
    /* The kernel took all of it: a new program still starts and ends. */
    pid_t pid = fork();
    if (pid == 0) {
        execl(utest_bin("true"), "true", (char*)0);
        _exit(127);
    }
    CHECK_EQ(outcome(pid), 0);
    return utest_done();
}
