/* sh: a small shell. It reads command lines, runs each program (found in the
 * folders of $PATH, /bin by default) with its arguments, joins "a | b | c"
 * with pipes, and says how a failed command ended. Builtin: exit [N].
 * Quotes '...' and "..." group words; # starts a comment.
 *   sh             read commands from standard input, prompting with "$ "
 *   sh FILE        read commands from FILE, no prompt
 *   sh -c LINE     run one command line */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
    k_max_line = 1024,  /* bytes in one command line */
    k_max_args = 64,    /* arguments of one command */
    k_max_commands = 16 /* commands in one pipeline */
};

static const char k_default_path[] = "/bin";
static const char k_prompt[] = "$ ";

/** One command: argv[0] is the program, the array ends with NULL. */
struct Command {
    char* argv[k_max_args + 1];
};

/** A parsed line: commands joined by pipes, and the words they point into. */
struct Pipeline {
    struct Command commands[k_max_commands];
    int count;
    char words[k_max_line + 1];
};

extern char** environ;

/* Read one line from @fd into @line, byte by byte: a program the shell runs
 * next must find the rest of the input still unread. Returns the length
 * (the newline dropped), or -1 at end of input. Over-long lines are cut. */
static int read_line(int fd, char* line, int size)
{
    int len = 0;
    for (;;) {
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (c == '\n') {
            line[len] = '\0';
            return len;
        }
        if (len < size - 1)
            line[len++] = c;
    }
    line[len] = '\0';
    return len > 0 ? len : -1;
}

static int syntax_error(const char* what)
{
    fprintf(stderr, "sh: %s\n", what);
    return -1;
}

/* Split @line into commands and words. Returns 0 (count 0 for an empty line)
 * or -1 after printing what is wrong. */
static int parse(const char* line, struct Pipeline* p)
{
    const char* r = line;
    char* w = p->words;
    int argc = 0;
    p->count = 0;
    for (;;) {
        while (*r == ' ' || *r == '\t')
            ++r;
        if (*r == '\0' || *r == '#')
            break;
        if (*r == '|') {
            if (argc == 0)
                return syntax_error("empty command before '|'");
            p->commands[p->count++].argv[argc] = NULL;
            if (p->count == k_max_commands)
                return syntax_error("too many commands in a pipeline");
            argc = 0;
            ++r;
            continue;
        }
        if (argc == k_max_args)
            return syntax_error("too many arguments");
        p->commands[p->count].argv[argc++] = w;
        while (*r != '\0' && *r != ' ' && *r != '\t' && *r != '|') {
            if (*r == '\'' || *r == '"') {
                char quote = *r++;
                while (*r != '\0' && *r != quote)
                    *w++ = *r++;
                if (*r != quote)
                    return syntax_error("unterminated quote");
                ++r;
            } else {
                *w++ = *r++;
            }
        }
        *w++ = '\0';
    }
    if (argc > 0) {
        p->commands[p->count++].argv[argc] = NULL;
    } else if (p->count > 0) {
        return syntax_error("empty command after '|'");
    }
    return 0;
}

/* In a child: run @argv[0]. A name without '/' is looked up in each folder
 * of $PATH in turn ("/bin" when PATH is unset), as execvp(3) does. */
static void exec_command(char** argv)
{
    if (strchr(argv[0], '/') != NULL) {
        execve(argv[0], argv, environ);
    } else {
        const char* dirs = getenv("PATH");
        if (dirs == NULL)
            dirs = k_default_path;
        int error = ENOENT;
        while (*dirs != '\0') {
            size_t len = strcspn(dirs, ":");
            char path[k_max_line];
            snprintf(path, sizeof path, "%.*s/%s", (int)len, dirs, argv[0]);
            execve(path, argv, environ);
            if (errno != ENOENT && errno != ENOTDIR)
                error = errno; /* found but not runnable: say why */
            dirs += len;
            if (*dirs == ':')
                ++dirs;
        }
        errno = error;
    }
    if (errno == ENOENT)
        fprintf(stderr, "sh: %s: not found\n", argv[0]);
    else
        fprintf(stderr, "sh: %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Say how a failed command ended; 127 was already explained by the child.
 * Returns the status as a shell sees it: N for exit N, 128+N for signal N. */
static int report(const char* name, int status)
{
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "sh: %s: killed by signal %d\n", name, WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    int code = WEXITSTATUS(status);
    if (code != 0 && code != 127)
        fprintf(stderr, "sh: %s: exit %d\n", name, code);
    return code;
}

/* Run every command of @p at once, each one's output piped into the next
 * one's input. Returns the status of the last command. */
static int run(struct Pipeline* p)
{
    pid_t pids[k_max_commands];
    int started = 0;
    int from_previous = -1; /* read end of the pipe from the command before */
    for (int i = 0; i < p->count; ++i) {
        int pipe_fds[2] = {-1, -1};
        if (i + 1 < p->count && pipe(pipe_fds) < 0) {
            fprintf(stderr, "sh: pipe: %s\n", strerror(errno));
            break;
        }
        pid_t pid = fork();
        if (pid == 0) {
            if (from_previous >= 0) {
                dup2(from_previous, 0);
                close(from_previous);
            }
            if (pipe_fds[1] >= 0) {
                dup2(pipe_fds[1], 1);
                close(pipe_fds[1]);
                close(pipe_fds[0]);
            }
            exec_command(p->commands[i].argv);
        }
        /* The parent keeps no pipe end: a reader must see end of file once
         * its writer exits, and a writer EPIPE once its reader exits. */
        if (from_previous >= 0)
            close(from_previous);
        if (pipe_fds[1] >= 0)
            close(pipe_fds[1]);
        from_previous = pipe_fds[0];
        if (pid < 0) {
            fprintf(stderr, "sh: fork: %s\n", strerror(errno));
            break;
        }
        pids[started++] = pid;
    }
    if (from_previous >= 0)
        close(from_previous);

    int last = started == p->count ? 0 : 1;
    for (int i = 0; i < started; ++i) {
        int status;
        while (waitpid(pids[i], &status, 0) < 0) {
            if (errno != EINTR) {
                status = 1 << 8; /* reported as exit 1 */
                break;
            }
        }
        int code = report(p->commands[i].argv[0], status);
        if (i == p->count - 1)
            last = code;
    }
    return last;
}

/* Run one command line. Sets *@exiting when it was "exit". Returns its status. */
static int run_line(const char* line, int last, int* exiting)
{
    static struct Pipeline p;
    if (parse(line, &p) < 0)
        return 2;
    if (p.count == 0)
        return last;
    char** argv = p.commands[0].argv;
    if (p.count == 1 && strcmp(argv[0], "exit") == 0) {
        *exiting = 1;
        return argv[1] != NULL ? atoi(argv[1]) : last;
    }
    return run(&p);
}

int main(int argc, char** argv)
{
    int exiting = 0;
    if (argc == 3 && strcmp(argv[1], "-c") == 0)
        return run_line(argv[2], 0, &exiting);

    int fd = 0;
    int prompt = 1;
    if (argc == 2) {
        fd = open(argv[1], O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "sh: %s: %s\n", argv[1], strerror(errno));
            return 127;
        }
        prompt = 0;
    } else if (argc != 1) {
        fprintf(stderr, "usage: sh [-c LINE | FILE]\n");
        return 2;
    }

    /* The prompt goes to standard error, so that the output of commands fed
     * through a pipe stays clean; on the console both are the same. */
    char line[k_max_line];
    int status = 0;
    while (!exiting) {
        if (prompt)
            write(2, k_prompt, sizeof k_prompt - 1);
        if (read_line(fd, line, sizeof line) < 0)
            break;
        status = run_line(line, status, &exiting);
    }
    return status;
}
