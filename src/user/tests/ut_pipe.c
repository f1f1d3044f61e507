/* ut_pipe: pipes. A read blocks until data arrives, end of file comes only
 * when every writer has closed, a write with no reader left fails with EPIPE,
 * and 256 KB pass through in odd-sized pieces without a byte lost or changed. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_delay_ms = 100,              /* how long a child waits before it writes */
    k_min_blocked_ms = 50,         /* a read that returned sooner did not block */
    k_transfer_bytes = 256 * 1024, /* the large transfer */
    k_piece_sizes = 7,
};

/* Sizes that straddle any power-of-two buffer inside the kernel. */
static const size_t k_pieces[k_piece_sizes] = {1, 511, 4096, 4097, 3, 65536, 12345};

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Milliseconds on the monotonic clock, or -1 if the kernel has no clock. */
static long long now_ms(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
        return -1;
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The byte at offset @i of the large transfer. */
static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + (i >> 10));
}

/* Reap @pid; returns 1 if it exited with status 0. */
static int reaped_ok(pid_t pid)
{
    int status = 0;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_blocking_read(void)
{
    int fds[2];
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    long long before = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        sleep_ms(k_delay_ms);
        _exit(write(fds[1], "late", 4) == 4 ? 0 : 1);
    }
    close(fds[1]); /* the child is now the only writer */
    char buf[8] = {0};
    CHECK_EQ(read(fds[0], buf, sizeof buf), 4); /* waits for the child */
    CHECK_MSG(memcmp(buf, "late", 4) == 0, "the blocked read returns the child's data");
    long long waited = now_ms() - before;
    if (before < 0)
        SKIP("the read blocked until the write", "no clock_gettime");
    else
        utest_reportf(waited >= k_min_blocked_ms, __FILE__, __LINE__,
                      "the read blocked until the write", "returned after %lld ms", waited);
    CHECK_EQ(read(fds[0], buf, sizeof buf), 0); /* the writer exited: end of file */
    CHECK(reaped_ok(pid));
    close(fds[0]);
}

static void test_end_of_file(void)
{
    int fds[2];
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    /* Two writers: a duplicate in this process, and a child's copy. */
    int second = dup(fds[1]);
    CHECK(second >= 0);
    close(fds[1]);
    pid_t pid = fork();
    if (pid == 0) {
        sleep_ms(k_delay_ms);
        _exit(write(second, "b", 1) == 1 ? 0 : 1);
    }
    CHECK_EQ(write(second, "a", 1), 1);
    close(second); /* the child still writes: no end of file yet */
    char buf[4] = {0};
    CHECK_EQ(read(fds[0], buf, sizeof buf), 1);
    CHECK_EQ(buf[0], 'a');
    CHECK_EQ(read(fds[0], buf, sizeof buf), 1); /* not 0: waits for the child */
    CHECK_EQ(buf[0], 'b');
    CHECK_EQ(read(fds[0], buf, sizeof buf), 0); /* every writer gone */
    CHECK_EQ(read(fds[0], buf, sizeof buf), 0); /* and it stays at end of file */
    CHECK(reaped_ok(pid));
    close(fds[0]);
}

static void test_broken_pipe(void)
{
    int fds[2];
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    close(fds[0]);
    CHECK_ERR(write(fds[1], "x", 1), EPIPE);
    close(fds[1]);

    /* The last reader is a child that exits; data left unread is dropped. */
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        char c;
        _exit(read(fds[0], &c, 1) == 1 && c == 'r' ? 0 : 1);
    }
    close(fds[0]);
    CHECK_EQ(write(fds[1], "rest", 4), 4);
    CHECK(reaped_ok(pid));
    CHECK_ERR(write(fds[1], "x", 1), EPIPE);
    close(fds[1]);
}

static void test_large_transfer(void)
{
    int fds[2];
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        static unsigned char out[k_transfer_bytes];
        for (size_t i = 0; i < sizeof out; ++i)
            out[i] = pattern(i);
        /* Half in odd pieces, then the rest in one write, which must block
         * until the reader has made room, and still return the full count. */
        size_t sent = 0;
        for (int p = 0; sent < sizeof out / 2; p = (p + 1) % k_piece_sizes) {
            size_t n = k_pieces[p];
            if (write(fds[1], out + sent, n) != (ssize_t)n)
                _exit(1);
            sent += n;
        }
        size_t rest = sizeof out - sent;
        _exit(write(fds[1], out + sent, rest) == (ssize_t)rest ? 0 : 2);
    }
    close(fds[1]);
    static unsigned char in[k_transfer_bytes + 1];
    size_t got = 0;
    ssize_t n = 0;
    for (int p = 3; got < sizeof in; p = (p + 1) % k_piece_sizes) {
        size_t want = k_pieces[p] < sizeof in - got ? k_pieces[p] : sizeof in - got;
        n = read(fds[0], in + got, want);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    CHECK_EQ(got, k_transfer_bytes);
    CHECK_EQ(n, 0); /* the transfer ended with end of file, nothing more */
    size_t bad = 0;
    for (size_t i = 0; i < got && i < k_transfer_bytes; ++i)
        bad += in[i] != pattern(i);
    CHECK_MSG(got == k_transfer_bytes && bad == 0, "256 KB arrive intact and in order");
    CHECK(reaped_ok(pid));
}

int main(void)
{
    /* Linux kills a writer to a broken pipe with SIGPIPE; Toll sends no
     * signal. Ignoring it makes both return EPIPE. */
    signal(SIGPIPE, SIG_IGN);
    test_blocking_read();
    test_end_of_file();
    test_broken_pipe();
    test_large_transfer();
    return utest_done();
}
