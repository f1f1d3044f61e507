/* ut_forkexec: fork, execve and wait. Exit statuses travel from child to
 * parent, exec replaces the program and passes its arguments, a chain of
 * nested forks unwinds in order, and getpid/getppid agree with fork. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_chain_depth = 10,
    k_status_bad_parent = 99, /* a child whose getppid() was wrong */
    k_status_exec_failed = 127,
};

/* Fork a child that execs @path with @argv; returns its wait status, or -1. */
static int run(const char* path, char* const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execve(path, argv, NULL);
        _exit(k_status_exec_failed);
    }
    if (pid < 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

/* Nested forks: each level forks the next and waits for it, then exits with
 * one more than its child's status. The deepest level exits 0, so the top
 * sees k_chain_depth when every level ran, in order, with the right parent. */
static void chain(int depth)
{
    if (depth == 0)
        _exit(0);
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (getppid() != me)
            _exit(k_status_bad_parent);
        chain(depth - 1);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        _exit(k_status_bad_parent);
    if (WEXITSTATUS(status) == k_status_bad_parent)
        _exit(k_status_bad_parent);
    _exit(WEXITSTATUS(status) + 1);
}

static void test_exit_status(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(42);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 42);
}

static void test_exec(void)
{
    char* true_argv[] = {"true", NULL};
    int status = run(utest_bin("true"), true_argv);
    CHECK_MSG(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "child execs /bin/true: exit 0");
    char* false_argv[] = {"false", NULL};
    status = run(utest_bin("false"), false_argv);
    CHECK_MSG(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1,
              "child execs /bin/false: exit 1");
    char* missing_argv[] = {"no-such-program", NULL};
    status = run(utest_bin("no-such-program"), missing_argv);
    CHECK_MSG(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == k_status_exec_failed,
              "exec of a missing file fails and the child carries on");
    errno = 0;
    CHECK_ERR(execve(utest_bin("no-such-program"), missing_argv, NULL), ENOENT);
}

/* /bin/echo's output comes back through a pipe: exec passed argv intact. */
static void test_exec_arguments(void)
{
    int fds[2];
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        char* argv[] = {"echo", "hello", "from  exec", NULL};
        execve(utest_bin("echo"), argv, NULL);
        _exit(k_status_exec_failed);
    }
    close(fds[1]);
    char got[64] = {0};
    size_t len = 0;
    ssize_t n;
    while (len < sizeof got - 1 && (n = read(fds[0], got + len, sizeof got - 1 - len)) > 0)
        len += (size_t)n;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "/bin/echo exits 0");
    CHECK_MSG(strcmp(got, "hello from  exec\n") == 0, "/bin/echo printed its arguments");
}

static void test_chain(void)
{
    pid_t pid = fork();
    if (pid == 0)
        chain(k_chain_depth);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), k_chain_depth);
}

/* The child sends getpid() and getppid() through a pipe. */
static void test_pids(void)
{
    int fds[2];
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        pid_t ids[2] = {getpid(), getppid()};
        _exit(write(fds[1], ids, sizeof ids) == sizeof ids ? 0 : 1);
    }
    CHECK(pid > 0);
    CHECK(pid != me);
    pid_t ids[2] = {0, 0};
    CHECK_EQ(read(fds[0], ids, sizeof ids), sizeof ids);
    CHECK_EQ(ids[0], pid); /* fork() returned the child's own pid */
    CHECK_EQ(ids[1], me);  /* and the child's parent is this process */
    int status = 0;
    CHECK_EQ(wait(&status), pid); /* wait() for any child finds it */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(fds[0]);
    close(fds[1]);
}

static void test_no_children(void)
{
    int status;
    CHECK_ERR(wait(&status), ECHILD);
    CHECK_ERR(waitpid(getpid(), &status, 0), ECHILD); /* not a child of itself */
    CHECK_ERR(waitpid(-1, &status, WNOHANG), ECHILD);
}

/* WNOHANG returns 0 while the child lives; a blocking wait then finds it. */
static void test_wnohang(void)
{
    int fds[2];
    if (!CHECK_EQ(pipe(fds), 0))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(fds[1]);
        _exit(read(fds[0], &c, 1) == 0 ? 7 : 1); /* waits for end of file */
    }
    close(fds[0]);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, WNOHANG), 0);
    close(fds[1]);
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
}

int main(void)
{
    test_exit_status();
    test_exec();
    test_exec_arguments();
    test_chain();
    test_pids();
    test_wnohang();
    test_no_children();
    return utest_done();
}
