/* yes: print a line ("y", or the arguments) over and over until the output
 * fails, for instance because the reading end of a pipe was closed. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

enum { k_buffer_size = 4096 };

int main(int argc, char** argv)
{
    /* Fill a buffer with as many copies of the line as fit, then write the
     * buffer again and again: one system call moves many lines. */
    char line[k_buffer_size / 2];
    size_t len = 0;
    if (argc < 2) {
        line[len++] = 'y';
    } else {
        for (int i = 1; i < argc; ++i) {
            size_t n = strlen(argv[i]);
            if (len + n + 2 > sizeof line)
                n = sizeof line - len - 2;
            memcpy(line + len, argv[i], n);
            len += n;
            if (i + 1 < argc)
                line[len++] = ' ';
        }
    }
    line[len++] = '\n';
    char buf[k_buffer_size];
    size_t filled = 0;
    while (filled + len <= sizeof buf) {
        memcpy(buf + filled, line, len);
        filled += len;
    }
    for (;;) {
        ssize_t w = write(1, buf, filled);
        /* Toll sends no SIGPIPE, so EPIPE comes back here: stop on any error.
         * A short count would cut a line; the next write carries on anyway. */
        if (w < 0 && errno != EINTR)
            return errno == EPIPE ? 0 : 1;
    }
}
