/* ut_procs64: 64 processes alive at once. Each child waits for a start
 * signal (end of file on a pipe), writes its own value into one shared pipe
 * and exits with its own status; the parent must collect all 64 values once
 * each and reap every child with the status it chose. */
#include <errno.h>
#include <sys/wait.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_children = 64,
    k_value_base = 0x70110000, /* child i writes k_value_base + i */
};

int main(void)
{
    int start[2], results[2];
    if (!CHECK_EQ(pipe(start), 0) || !CHECK_EQ(pipe(results), 0))
        return utest_done();

    pid_t pids[k_children];
    int forked = 0;
    for (int i = 0; i < k_children; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            close(start[1]);
            close(results[0]);
            char c;
            /* Every child blocks here until the parent closes start[1]:
             * all 64 exist at the same time. */
            if (read(start[0], &c, 1) != 0)
                _exit(255);
            int value = k_value_base + i;
            /* A write of at most PIPE_BUF bytes is atomic (POSIX write()):
             * the values of different children never interleave. */
            if (write(results[1], &value, sizeof value) != sizeof value)
                _exit(254);
            _exit(i);
        }
        if (pid < 0)
            break;
        pids[forked++] = pid;
    }
    CHECK_EQ(forked, k_children);
    close(start[0]);
    close(start[1]); /* go */
    close(results[1]);

    int seen[k_children] = {0};
    int received = 0, strays = 0;
    int value;
    ssize_t n;
    while ((n = read(results[0], &value, sizeof value)) == sizeof value) {
        int i = value - k_value_base;
        if (i >= 0 && i < k_children && seen[i] == 0) {
            seen[i] = 1;
            ++received;
        } else {
            ++strays;
        }
    }
    close(results[0]);
    CHECK_EQ(n, 0); /* end of file once every child has exited */
    CHECK_EQ(received, forked);
    CHECK_EQ(strays, 0);

    int right_status = 0;
    for (int i = 0; i < forked; ++i) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
            WEXITSTATUS(status) == i)
            ++right_status;
        else
            NOTE("child %d (pid %d): wait status 0x%x", i, pids[i], status);
    }
    CHECK_EQ(right_status, forked);
    int status;
    CHECK_ERR(wait(&status), ECHILD); /* nothing left over */
    return utest_done();
}
