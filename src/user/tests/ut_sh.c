/* ut_sh: the shell, seen from outside. Each case runs sh with a command line
 * (or a script on its standard input) and checks what it printed and its
 * exit status. Only behaviour POSIX shells share is checked, so the test
 * also passes against the host's /bin/sh; set TOLL_BIN to a folder of Toll's
 * programs to test Toll's shell on Linux. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_output_size = 1024 };

/* What one run of the shell produced. */
struct Run {
    char out[k_output_size]; /* standard output */
    char err[k_output_size]; /* standard error */
    int status;              /* wait status, -1 if it could not run */
};

/* Read @fd to end of file into @buf (NUL-terminated, cut at @size - 1). */
static void slurp(int fd, char* buf, size_t size)
{
    size_t len = 0;
    ssize_t n;
    char drop[256];
    while ((n = read(fd, len < size - 1 ? buf + len : drop,
                     len < size - 1 ? size - 1 - len : sizeof drop)) > 0) {
        if (len < size - 1)
            len += (size_t)n;
    }
    buf[len] = '\0';
    close(fd);
}

/* Run sh with @line as "-c LINE", or with @input on standard input when
 * @line is NULL. The outputs are small enough to sit in the pipes until the
 * shell ends, so they are read one after the other. */
static void run_sh(struct Run* r, const char* line, const char* input)
{
    int in[2], out[2], err[2];
    r->status = -1;
    r->out[0] = r->err[0] = '\0';
    if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        for (int i = 0; i < 2; ++i) {
            close(in[i]);
            close(out[i]);
            close(err[i]);
        }
        const char* dir = getenv("TOLL_BIN");
        char path[300];
        snprintf(path, sizeof path, "PATH=%s", dir != NULL && dir[0] ? dir : "/bin");
        char* envp[] = {path, NULL};
        char* argv[] = {"sh", "-c", (char*)line, NULL};
        if (line == NULL)
            argv[1] = NULL;
        execve(utest_bin("sh"), argv, envp);
        _exit(126);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (input != NULL)
        write(in[1], input, strlen(input));
    close(in[1]);
    slurp(out[0], r->out, sizeof r->out);
    slurp(err[0], r->err, sizeof r->err);
    if (pid > 0)
        waitpid(pid, &r->status, 0);
}

/* Check the output and exit status of one run. */
#define CHECK_RUN(r, want_out, want_code, description)                                             \
    utest_reportf(strcmp((r).out, (want_out)) == 0 && WIFEXITED((r).status) &&                     \
                      WEXITSTATUS((r).status) == (want_code),                                      \
                  __FILE__, __LINE__, (description),                                               \
                  "printed \"%s\", wait status 0x%x, stderr \"%s\"", (r).out, (r).status, (r).err)

int main(void)
{
    /* Toll sends no SIGPIPE; the shell's children inherit the same here. */
    signal(SIGPIPE, SIG_IGN);
    static struct Run r;

    run_sh(&r, "echo hello   world", NULL);
    CHECK_RUN(r, "hello world\n", 0, "sh -c 'echo hello   world'");
    run_sh(&r, "echo 'a  b' | cat | cat", NULL);
    CHECK_RUN(r, "a  b\n", 0, "a three-stage pipeline passes quoted text");
    run_sh(&r, "true", NULL);
    CHECK_RUN(r, "", 0, "true: exit status 0");
    run_sh(&r, "false", NULL);
    CHECK_RUN(r, "", 1, "false: exit status 1");
    run_sh(&r, "exit 5", NULL);
    CHECK_RUN(r, "", 5, "exit 5");
    run_sh(&r, "no-such-program", NULL);
    CHECK_RUN(r, "", 127, "an unknown program: exit status 127");
    CHECK_MSG(strstr(r.err, "not found") != NULL, "and the shell says it was not found");
    run_sh(&r, "echo x | false", NULL);
    CHECK_RUN(r, "", 1, "a pipeline's status is its last command's");
    run_sh(&r, "yes | true", NULL);
    CHECK_RUN(r, "", 0, "yes | true ends: yes stops when its reader has gone");

    run_sh(&r, "echo a; echo b;echo c", NULL);
    CHECK_RUN(r, "a\nb\nc\n", 0, "';' runs one command after the other");
    run_sh(&r, "false; echo $? \"$?\" '$?'; true; echo $?", NULL);
    CHECK_RUN(r, "1 1 $?\n0\n", 0, "$? is the last status, but not inside '...'");
    run_sh(&r, "echo one > /tmp/ut_sh_r; echo two >> /tmp/ut_sh_r; cat < /tmp/ut_sh_r", NULL);
    CHECK_RUN(r, "one\ntwo\n", 0, "> writes a file, >> appends, < reads it");
    run_sh(&r, "echo gone >/tmp/ut_sh_r; cat </tmp/ut_sh_r | cat", NULL);
    CHECK_RUN(r, "gone\n", 0, "redirections without spaces, inside a pipeline");
    run_sh(&r, "cat < /no/such/file", NULL);
    CHECK_MSG(WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0 &&
                  strstr(r.err, "/no/such/file") != NULL,
              "a redirection from a missing file fails and names it");
    run_sh(&r, "echo back & echo front; exit 0", NULL);
    CHECK_MSG(strstr(r.out, "front") != NULL && strstr(r.err, "[") != NULL,
              "'&' starts a command without waiting and says its pid");
    run_sh(&r, "echo a#b # a comment", NULL);
    CHECK_RUN(r, "a#b\n", 0, "# starts a comment only at the start of a word");

    run_sh(&r, NULL, "echo one\necho two | cat\n\nexit 3\necho never\n");
    CHECK_RUN(r, "one\ntwo\n", 3, "a script on standard input runs line by line until exit 3");
    run_sh(&r, NULL, "echo first\n");
    CHECK_RUN(r, "first\n", 0, "at end of input the shell exits with status 0");
    /* The shell must not read ahead: the line after "cat" is cat's input.
     * Debian's dash (the host's /bin/sh) does read ahead from a pipe, so this
     * is checked only for Toll's shell: on Toll, or with TOLL_BIN set. */
    unsigned long long value;
    errno = 0;
    int on_linux = counter_get("sched.switches", &value) == -1 && errno == ENOSYS;
    if (on_linux && getenv("TOLL_BIN") == NULL) {
        SKIP("a program the shell runs reads the rest of its input", "host /bin/sh reads ahead");
    } else {
        run_sh(&r, NULL, "cat\nthis line is for cat\n");
        CHECK_RUN(r, "this line is for cat\n", 0,
                  "a program the shell runs reads the rest of its input");
    }
    return utest_done();
}
