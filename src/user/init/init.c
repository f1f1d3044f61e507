/* init: the first user process. It starts /bin/sh on the console, restarts
 * the shell whenever it ends, and meanwhile reaps every orphan the kernel
 * hands to it (a process whose parent died becomes init's child). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char k_shell[] = "/bin/sh";
static const char k_console[] = "/dev/console";
/* A shell that lives shorter than this is restarted only after a pause. */
enum { k_min_shell_life_ms = 1000 };

/* Give init fds 0, 1 and 2 on the console if it was started without them. */
static void open_console(void)
{
    if (fcntl(0, F_GETFD) >= 0)
        return;
    int fd = open(k_console, O_RDWR);
    if (fd < 0)
        return; /* nothing to print the error on */
    while (fd >= 0 && fd < 2)
        fd = dup(fd);
}

/* Pause for @ms milliseconds. */
static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Milliseconds on the monotonic clock. */
static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Start the shell in a child process. Returns its pid, or -1. */
static pid_t start_shell(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char* argv[] = {"sh", NULL};
        char* envp[] = {"PATH=/bin", NULL};
        execve(k_shell, argv, envp);
        fprintf(stderr, "init: cannot run %s: %s\n", k_shell, strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        fprintf(stderr, "init: fork: %s\n", strerror(errno));
    return pid;
}

int main(void)
{
    open_console();
    printf("init: Toll is up (pid %d), starting %s\n", getpid(), k_shell);
    fflush(stdout);

    pid_t shell = -1;
    long long started = 0;
    for (;;) {
        if (shell < 0) {
            started = now_ms();
            shell = start_shell();
            if (shell < 0) {
                pause_ms(1000);
                continue;
            }
        }
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            /* ECHILD cannot happen while the shell runs; do not spin. */
            pause_ms(1000);
            shell = -1;
            continue;
        }
        if (pid != shell)
            continue; /* an orphan, now laid to rest */
        if (now_ms() - started < k_min_shell_life_ms) {
            /* A shell that cannot start, or finds its input at end of file,
             * ends at once: restarting it at full speed would flood. */
            pause_ms(k_min_shell_life_ms);
        }
        printf("init: %s ended, starting a new one\n", k_shell);
        fflush(stdout);
        shell = -1;
    }
}
