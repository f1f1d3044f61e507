/* cat: copy each named file, or standard input when none (or "-") is named,
 * to standard output. Uses read(2) and write(2) directly: no stdio buffers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { k_buffer_size = 4096 };

/* Write all @n bytes of @buf to fd 1, however many write() calls it takes.
 * Returns 0, or -1 on an error (for example EPIPE: the reader went away). */
static int write_all(const char* buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(1, buf, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copy @fd to standard output until end of file. Returns 0 or -1. */
static int copy(int fd, const char* name)
{
    char buf[k_buffer_size];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0)
            return 0;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "cat: %s: %s\n", name, strerror(errno));
            return -1;
        }
        if (write_all(buf, (size_t)n) < 0) {
            /* Toll sends no SIGPIPE: stop quietly when the reader is gone. */
            if (errno != EPIPE)
                fprintf(stderr, "cat: write: %s\n", strerror(errno));
            return -1;
        }
    }
}

int main(int argc, char** argv)
{
    if (argc < 2)
        return copy(0, "stdin") == 0 ? 0 : 1;
    int status = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-") == 0) {
            status |= copy(0, "stdin") != 0;
            continue;
        }
        int fd = open(argv[i], O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "cat: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        status |= copy(fd, argv[i]) != 0;
        close(fd);
    }
    return status;
}
