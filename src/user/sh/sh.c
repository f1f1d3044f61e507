/* sh: a small shell. It reads command lines, runs each program (found in the
 * folders of $PATH, /bin by default) with its arguments, joins "a | b | c"
 * with pipes, and says how a failed command ended. "a ; b" runs one after
 * the other, "a &" does not wait, "< f", "> f" and ">> f" redirect, and $?
 * is the last status. Builtin: exit [N]. Quotes '...' and "..." group
 * words ($? is not expanded inside '...'); # starts a comment.
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

/** One command: argv[0] is the program, the array ends with NULL; @in and
 * @out name the files its input and output are redirected to (NULL: none),
 * @append says ">>". */
struct Command {
    char* argv[k_max_args + 1];
    char* in;
    char* out;
    int append;
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

/* Split @line into commands and words; $? becomes @status. Returns 0 (count
 * 0 for an empty line) or -1 after printing what is wrong. */
static int parse(const char* line, struct Pipeline* p, int status)
{
    const char* r = line;
    char* w = p->words;
    char* end = p->words + sizeof p->words - 12; /* room for one expansion */
    int argc = 0;
    p->count = 0;
    memset(&p->commands[0], 0, sizeof p->commands[0]);
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
            memset(&p->commands[p->count], 0, sizeof p->commands[0]);
            argc = 0;
            ++r;
            continue;
        }
        char** target = NULL; /* a redirection's file name goes here */
        if (*r == '<' || *r == '>') {
            struct Command* c = &p->commands[p->count];
            target = *r == '<' ? &c->in : &c->out;
            if (r[0] == '>' && r[1] == '>') {
                c->append = 1;
                ++r;
            } else if (*r == '>') {
                c->append = 0;
            }
            ++r;
            while (*r == ' ' || *r == '\t')
                ++r;
            if (*r == '\0' || *r == '|' || *r == '<' || *r == '>')
                return syntax_error("a redirection names no file");
        } else if (argc == k_max_args) {
            return syntax_error("too many arguments");
        }
        char* word = w;
        while (*r != '\0' && *r != ' ' && *r != '\t' && *r != '|' && *r != '<' && *r != '>') {
            if (w >= end)
                return syntax_error("line too long");
            if (*r == '\'' || *r == '"') {
                char quote = *r++;
                while (*r != '\0' && *r != quote && w < end) {
                    if (quote == '"' && r[0] == '$' && r[1] == '?') {
                        w += sprintf(w, "%d", status);
                        r += 2;
                    } else {
                        *w++ = *r++;
                    }
                }
                if (*r != quote)
                    return syntax_error("unterminated quote");
                ++r;
            } else if (r[0] == '$' && r[1] == '?') {
                w += sprintf(w, "%d", status);
                r += 2;
            } else {
                *w++ = *r++;
            }
        }
        *w++ = '\0';
        if (target)
            *target = word;
        else
            p->commands[p->count].argv[argc++] = word;
    }
    if (argc > 0) {
        p->commands[p->count++].argv[argc] = NULL;
    } else if (p->count > 0 || p->commands[0].in || p->commands[0].out) {
        return syntax_error("empty command");
    }
    return 0;
}

/* In a child: open @c's redirections onto descriptors 0 and 1. */
static void redirect(const struct Command* c)
{
    const char* names[2] = {c->in, c->out};
    for (int fd = 0; fd < 2; ++fd) {
        if (!names[fd])
            continue;
        int flags = fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (c->append ? O_APPEND : O_TRUNC);
        int opened = open(names[fd], flags, 0666);
        if (opened < 0) {
            fprintf(stderr, "sh: %s: %s\n", names[fd], strerror(errno));
            _exit(1);
        }
        dup2(opened, fd);
        close(opened);
    }
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
 * one's input. Returns the status of the last command, or 0 at once with
 * @background (the commands go on; the shell collects them later). */
static int run(struct Pipeline* p, int background)
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
            redirect(&p->commands[i]);
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
    if (background) {
        if (started > 0)
            fprintf(stderr, "[%d]\n", (int)pids[started - 1]);
        return 0;
    }

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

/* Run one pipeline (@line up to @length bytes), in the background with
 * @background. Sets *@exiting when it was "exit". Returns its status. */
static int run_pipeline(const char* line, size_t length, int background, int last, int* exiting)
{
    static struct Pipeline p;
    static char one[k_max_line + 1];
    snprintf(one, sizeof one, "%.*s", (int)length, line);
    if (parse(one, &p, last) < 0)
        return 2;
    if (p.count == 0)
        return last;
    char** argv = p.commands[0].argv;
    if (p.count == 1 && strcmp(argv[0], "exit") == 0) {
        *exiting = 1;
        return argv[1] != NULL ? atoi(argv[1]) : last;
    }
    return run(&p, background);
}

/* Run one command line: pipelines separated by ';' (one after the other)
 * or ended by '&' (not waited for). Returns the last status. */
static int run_line(const char* line, int last, int* exiting)
{
    /* Collect the background commands that have ended. */
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    const char* start = line;
    char quote = 0;
    for (const char* r = line; !*exiting; ++r) {
        if (quote) {
            if (*r == quote)
                quote = 0;
            else if (*r == '\0')
                return run_pipeline(start, (size_t)(r - start), 0, last, exiting);
            continue;
        }
        if (*r == '\'' || *r == '"') {
            quote = *r;
        } else if (*r == '\0' || *r == ';' || *r == '&' ||
                   (*r == '#' && (r == line || r[-1] == ' ' || r[-1] == '\t'))) {
            int background = *r == '&';
            last = run_pipeline(start, (size_t)(r - start), background, last, exiting);
            if (*r == '#' || *r == '\0')
                break;
            start = r + 1;
        }
    }
    return last;
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
