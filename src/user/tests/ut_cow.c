/* ut_cow: copy-on-write fork. After fork parent and child see the same
 * contents and then diverge: a write by either (from user mode, or by the
 * kernel through read(2)) is seen by the writer only. A page shared by three
 * processes is copied for the first two writers and reused in place by the
 * last; mprotect cannot make a shared page writable; a child that execs
 * gives its share back. The kernel's counters show what happened:
 * vm.fork.pages_shared, vm.cow.copies, vm.cow.reuses.
 *
 * With the argument "copy" (vm.fork=copy) it checks the same contents, and
 * that fork copied pages instead of sharing them. With "short" (booted with
 * fail.alloc=0, so that the fault injector can be steered) it also checks
 * what happens when a shared page cannot be copied for lack of memory:
 * read(2) into it fails with ENOMEM, not EFAULT (the address is good), and
 * a write from user mode ends the program with SIGKILL, as Linux's
 * out-of-memory killer would, not with SIGSEGV. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_page = 4096, k_own = 16384 };

/* Pages of their own: nothing else the program writes lives in them, under
 * any port's largest page (arm64's 16 KB granule): the checks use the first
 * k_page bytes of each. */
static unsigned char g_page[k_own] __attribute__((aligned(k_own)));
static unsigned char g_other[k_own] __attribute__((aligned(k_own)));

static int g_copy_mode; /* run under vm.fork=copy */

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    if (counter_get(name, &v) < 0)
        return ~0ull;
    return v;
}

/* The changes in the copy-on-write counters over a span. */
struct Cow {
    unsigned long long copies, reuses;
};

static void cow_now(struct Cow* c)
{
    c->copies = counter("vm.cow.copies");
    c->reuses = counter("vm.cow.reuses");
}

/* Whether the @n bytes at @p all equal @v. */
static int all_n(const unsigned char* p, int n, unsigned char v)
{
    for (int i = 0; i < n; ++i)
        if (p[i] != v)
            return 0;
    return 1;
}

static int all(const unsigned char* p, unsigned char v)
{
    return all_n(p, k_page, v);
}

/* Waits for @pid; its exit status, or -1. */
static int status_of(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static void wait_token(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        _exit(90);
}

static void send_token(int fd)
{
    if (write(fd, "x", 1) != 1)
        _exit(91);
}

/* The child writes its copy; the parent's stays. Then the parent writes
 * while the child waits, and the child still sees the old contents. */
static void test_diverge(void)
{
    memset(g_page, 'a', k_page);
    pid_t pid = fork();
    if (pid == 0) {
        if (!all(g_page, 'a'))
            _exit(1);
        memset(g_page, 'b', k_page);
        _exit(all(g_page, 'b') ? 0 : 2);
    }
    CHECK_EQ(status_of(pid), 0);
    CHECK(all(g_page, 'a'));

    int go[2];
    CHECK_EQ(pipe(go), 0);
    pid = fork();
    if (pid == 0) {
        wait_token(go[0]);
        _exit(all(g_page, 'a') ? 0 : 3);
    }
    memset(g_page, 'c', k_page);
    send_token(go[1]);
    CHECK_EQ(status_of(pid), 0);
    CHECK(all(g_page, 'c'));
    close(go[0]);
    close(go[1]);
}

/* The kernel writing into a shared page (read(2) into it) copies it too. */
static void test_kernel_write(void)
{
    memset(g_other, 'k', k_page);
    int data[2];
    CHECK_EQ(pipe(data), 0);
    pid_t pid = fork();
    if (pid == 0) {
        if (read(data[0], g_other, 100) != 100)
            _exit(4);
        if (!all_n(g_other, 100, 'r'))
            _exit(5);
        _exit(all_n(g_other + 100, k_page - 100, 'k') ? 0 : 6);
    }
    char buf[100];
    memset(buf, 'r', sizeof buf);
    CHECK_EQ(write(data[1], buf, sizeof buf), 100);
    CHECK_EQ(status_of(pid), 0);
    CHECK(all(g_other, 'k'));
    close(data[0]);
    close(data[1]);
}

/* Makes every page allocation fail from here on (@p on), or none. Before
 * that the child writes its stack and errno, so that their copy-on-write
 * copies are made while memory is still there. */
static void memory_short(int on)
{
    volatile char stack[512];
    for (unsigned i = 0; i < sizeof stack; ++i)
        stack[i] = 0;
    errno = 0;
    if (fail_alloc(on ? 1 : 0, 0) != 0)
        _exit(20);
}

/* No page for the copy of a shared page: the kernel's copy into it fails
 * with ENOMEM and leaves the page (and the pipe's data) alone; with memory
 * back the same read succeeds. A user-mode write then cannot get its copy
 * either: SIGKILL. */
static void test_short_of_memory(void)
{
    memset(g_other, 'm', k_page);
    memset(g_page, 'p', k_page);
    int data[2];
    CHECK_EQ(pipe(data), 0);
    CHECK_EQ(write(data[1], "xyz", 3), 3);
    pid_t pid = fork();
    if (pid == 0) {
        memory_short(1);
        long n = read(data[0], g_other, 3);
        int error = errno;
        memory_short(0);
        if (n != -1)
            _exit(21);
        if (error == EFAULT)
            _exit(22);
        if (error != ENOMEM)
            _exit(23);
        if (!all(g_other, 'm'))
            _exit(24);
        if (read(data[0], g_other, 3) != 3 || memcmp(g_other, "xyz", 3) != 0)
            _exit(25);
        _exit(all_n(g_other + 3, k_page - 3, 'm') ? 0 : 26);
    }
    CHECK_MSG(status_of(pid) == 0, "read(2) into a page that cannot be copied: ENOMEM");
    CHECK(all(g_other, 'm'));

    pid = fork();
    if (pid == 0) {
        memory_short(1);
        g_page[0] = 'c'; /* no page for the copy: killed here */
        memory_short(0);
        _exit(30);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_EQ(fail_alloc(0, 0), 0); /* the child could not switch it off */
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "a user-mode write that cannot get its copy: SIGKILL");
    CHECK(all(g_page, 'p'));
    close(data[0]);
    close(data[1]);
}

/* The counters are global: a check of their change over a span needs every
 * other process asleep. A child calls this first: it tells the parent it is
 * ready (its own copy-on-write faults of the stack are done by then) and
 * sleeps until the parent's token. */
static void ready_then_wait(int ready_fd, int go_fd)
{
    send_token(ready_fd);
    wait_token(go_fd);
}

/* One page, three processes: A and B write (each gets a copy), then the
 * parent writes and, being the last to map the page, reuses it. */
static void test_three(void)
{
    memset(g_page, 'p', k_page);
    int go_a[2], go_b[2], ready[2];
    CHECK_EQ(pipe(go_a), 0);
    CHECK_EQ(pipe(go_b), 0);
    CHECK_EQ(pipe(ready), 0);
    pid_t kids[2];
    for (int k = 0; k < 2; ++k) {
        kids[k] = fork();
        if (kids[k] == 0) {
            ready_then_wait(ready[1], k == 0 ? go_a[0] : go_b[0]);
            struct Cow before, after;
            cow_now(&before); /* warm-up: the stack page is private now */
            cow_now(&before);
            if (!all(g_page, 'p'))
                _exit(10);
            g_page[7] = (unsigned char)('A' + k);
            cow_now(&after);
            if (g_page[7] != 'A' + k || g_page[8] != 'p')
                _exit(11);
            if (!g_copy_mode &&
                (after.copies - before.copies != 1 || after.reuses != before.reuses))
                _exit(12);
            _exit(0);
        }
    }
    wait_token(ready[0]);
    wait_token(ready[0]);
    send_token(go_a[1]);
    CHECK_EQ(status_of(kids[0]), 0);
    send_token(go_b[1]);
    CHECK_EQ(status_of(kids[1]), 0);
    CHECK(all(g_page, 'p'));
    struct Cow before, after;
    cow_now(&before);
    g_page[7] = 'P';
    cow_now(&after);
    CHECK_EQ(g_page[7], 'P');
    if (!g_copy_mode) {
        CHECK_EQ(after.copies - before.copies, 0ull);
        CHECK_EQ(after.reuses - before.reuses, 1ull);
    }
    for (int i = 0; i < 2; ++i) {
        close(go_a[i]);
        close(go_b[i]);
        close(ready[i]);
    }
}

/* mprotect back to writable leaves a shared page read-only: the parent's
 * write still copies, and the waiting child keeps the old contents. */
static void test_mprotect(void)
{
    memset(g_page, 'm', k_page);
    int go[2], ready[2];
    CHECK_EQ(pipe(go), 0);
    CHECK_EQ(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        ready_then_wait(ready[1], go[0]);
        _exit(all(g_page, 'm') ? 0 : 20);
    }
    wait_token(ready[0]);
    CHECK_EQ(mprotect(g_page, k_page, PROT_READ), 0);
    CHECK_EQ(mprotect(g_page, k_page, PROT_READ | PROT_WRITE), 0);
    struct Cow before, after;
    cow_now(&before);
    g_page[0] = 'n';
    cow_now(&after);
    if (!g_copy_mode)
        CHECK_EQ(after.copies - before.copies, 1ull);
    send_token(go[1]);
    CHECK_EQ(status_of(pid), 0);
    CHECK_EQ(g_page[0], 'n');
    for (int i = 0; i < 2; ++i) {
        close(go[i]);
        close(ready[i]);
    }
}

/* A child that execs drops its share: afterwards the parent's write reuses
 * the page instead of copying it. */
static void test_exec(void)
{
    memset(g_page, 'e', k_page);
    pid_t pid = fork();
    if (pid == 0) {
        char* argv[] = {"ut_hello", 0};
        execve("/bin/ut_hello", argv, 0);
        _exit(127);
    }
    CHECK_EQ(status_of(pid), 0);
    struct Cow before, after;
    cow_now(&before);
    g_page[0] = 'f';
    cow_now(&after);
    CHECK(all_n(g_page + 1, k_page - 1, 'e'));
    if (!g_copy_mode) {
        CHECK_EQ(after.copies - before.copies, 0ull);
        CHECK_EQ(after.reuses - before.reuses, 1ull);
    }
}

/* What fork did with the pages: shared them (cow) or copied them (copy). */
static void test_mode(void)
{
    g_page[0] = 1; /* present in the parent */
    unsigned long long shared = counter("vm.fork.pages_shared");
    unsigned long long copied = counter("vm.fork.pages_copied");
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    CHECK_EQ(status_of(pid), 0);
    unsigned long long d_shared = counter("vm.fork.pages_shared") - shared;
    unsigned long long d_copied = counter("vm.fork.pages_copied") - copied;
    if (g_copy_mode) {
        CHECK_EQ(d_shared, 0ull);
        CHECK(d_copied > 0);
    } else {
        CHECK(d_shared > 0);
        CHECK_EQ(d_copied, 0ull);
    }
}

int main(int argc, char** argv)
{
    g_copy_mode = argc > 1 && strcmp(argv[1], "copy") == 0;
    test_mode();
    test_diverge();
    test_kernel_write();
    test_three();
    test_mprotect();
    test_exec();
    if (argc > 1 && strcmp(argv[1], "short") == 0)
        test_short_of_memory();
    return utest_done();
}
