/* ut_files: descriptors and the references behind them. open, dup, dup2,
 * dup3, fcntl(F_DUPFD), pipe and close, well and badly (a full descriptor
 * table, a pipe whose result cannot be stored), in a loop: afterwards the
 * kernel holds exactly as many open files as before (its sys.files.live
 * counter), so no path leaks a reference or drops one twice. Run under
 * ut_failsweep, the same calls meet injected allocation failures too. */
#include <errno.h>
#include <fcntl.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_rounds = 20, k_max_fds = 256 };

static long long live_files(void)
{
    unsigned long long v = 0;
    return counter_get("sys.files.live", &v) == 0 ? (long long)v : -1;
}

/* One round of every call that takes or drops a reference; returns how many
 * of them failed (each may, with allocation failures injected). */
static int one_round(void)
{
    int failed = 0;
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0)
        return 1;
    int copy = dup(fd);
    failed += copy < 0;
    failed += dup2(fd, 40) != 40;
    failed += dup2(fd, 40) != 40; /* onto itself: the old 40 is closed, the file lives */
    failed += dup3(fd, 41, O_CLOEXEC) != 41;
    int above = fcntl(fd, F_DUPFD, 50);
    failed += above < 50;
    int p[2];
    if (pipe(p) == 0) {
        failed += dup2(p[0], 40) != 40; /* replaces /dev/null in 40 */
        close(p[0]);
        close(p[1]);
    } else {
        ++failed;
    }
    failed += access("/dev/null", W_OK) != 0;
    close(above);
    close(41);
    close(40);
    close(copy);
    close(fd);
    return failed;
}

int main(void)
{
    long long start = live_files();
    if (!CHECK_MSG(start >= 0, "the kernel counts live files (sys.files.live)"))
        return utest_done();

    /* The counter counts: three opens are three files, one dup is none. */
    int a = open("/dev/null", O_RDONLY), b = open("/dev/zero", O_RDONLY);
    int p[2] = {-1, -1};
    CHECK(a >= 0 && b >= 0 && pipe(p) == 0);
    CHECK_EQ(live_files(), start + 4);
    int d = dup(a);
    CHECK_EQ(live_files(), start + 4);
    close(d);
    close(a);
    close(b);
    close(p[0]);
    CHECK_EQ(live_files(), start + 1);
    close(p[1]);
    CHECK_EQ(live_files(), start);

    int failures = 0;
    for (int round = 0; round < k_rounds; ++round)
        failures += one_round();
    CHECK_EQ(failures, 0);
    CHECK_EQ(live_files(), start);

    /* A pipe whose descriptors cannot be stored makes no descriptor and
     * keeps no file. */
    CHECK_ERR(pipe((int*)16), EFAULT);
    CHECK_EQ(live_files(), start);

    /* A full table: every call that needs a descriptor fails with EMFILE
     * and keeps no reference; a pipe with one slot free installs its read
     * end, fails on the write end, and takes the read end back. */
    int fds[k_max_fds], n = 0;
    while (n < k_max_fds && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
        ++n;
    CHECK_MSG(n > 3 && n < k_max_fds && errno == EMFILE, "open fills the table, then EMFILE");
    long long full = live_files();
    CHECK_ERR(open("/dev/zero", O_RDONLY), EMFILE);
    CHECK_ERR(dup(fds[0]), EMFILE);
    CHECK_ERR(fcntl(fds[0], F_DUPFD, 0), EMFILE);
    CHECK_ERR(pipe(p), EMFILE);
    close(fds[--n]);
    CHECK_ERR(pipe(p), EMFILE);
    CHECK_EQ(live_files(), full - 1);
    int again = open("/dev/null", O_RDONLY); /* the slot the pipe used is free */
    CHECK(again >= 0);
    if (again >= 0)
        fds[n++] = again;
    while (n > 0)
        close(fds[--n]);
    CHECK_EQ(live_files(), start);
    return utest_done();
}
