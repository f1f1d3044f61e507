/* wc: count the lines, words and bytes of each named file, or of standard
 * input when none (or "-") is named; a total follows when there are several.
 * -l, -w and -c choose which counts to print (all three by default). The
 * output is POSIX's: the counts separated by single spaces, then the name. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct counts {
    unsigned long lines, words, bytes;
};

static int g_lines, g_words, g_bytes;

/* Adds @fd's counts to @c. Returns 0, or -1 on a read error (reported). */
static int count(int fd, const char* name, struct counts* c)
{
    char buf[4096];
    int in_word = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0)
            return 0;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "wc: %s: %s\n", name, strerror(errno));
            return -1;
        }
        c->bytes += (unsigned long)n;
        for (ssize_t i = 0; i < n; ++i) {
            unsigned char ch = (unsigned char)buf[i];
            c->lines += ch == '\n';
            if (isspace(ch)) {
                in_word = 0;
            } else if (!in_word) {
                in_word = 1;
                ++c->words;
            }
        }
    }
}

static void print(const struct counts* c, const char* name)
{
    const char* sep = "";
    if (g_lines) {
        printf("%lu", c->lines);
        sep = " ";
    }
    if (g_words) {
        printf("%s%lu", sep, c->words);
        sep = " ";
    }
    if (g_bytes)
        printf("%s%lu", sep, c->bytes);
    printf(name ? " %s\n" : "\n", name);
}

int main(int argc, char** argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; ++i) {
        for (const char* o = argv[i] + 1; *o; ++o) {
            if (*o == 'l') {
                g_lines = 1;
            } else if (*o == 'w') {
                g_words = 1;
            } else if (*o == 'c') {
                g_bytes = 1;
            } else {
                fprintf(stderr, "wc: unknown option -%c (usage: wc [-lwc] [file...])\n", *o);
                return 2;
            }
        }
    }
    if (!g_lines && !g_words && !g_bytes)
        g_lines = g_words = g_bytes = 1;
    struct counts total = {0, 0, 0};
    int status = 0, files = argc - i;
    if (files == 0) {
        status = count(0, "stdin", &total) != 0;
        print(&total, NULL);
        return status;
    }
    for (; i < argc; ++i) {
        struct counts c = {0, 0, 0};
        int is_stdin = strcmp(argv[i], "-") == 0;
        int fd = is_stdin ? 0 : open(argv[i], O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "wc: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        if (count(fd, argv[i], &c) != 0)
            status = 1;
        if (!is_stdin)
            close(fd);
        print(&c, argv[i]);
        total.lines += c.lines;
        total.words += c.words;
        total.bytes += c.bytes;
    }
    if (files > 1)
        print(&total, "total");
    if (fflush(stdout) != 0)
        status = 1;
    return status;
}
