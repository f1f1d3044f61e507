/* counters: print Toll's event counters, all of them or those named on the
 * command line, as "name value" lines. Fails on a kernel without Toll's
 * counter calls (Linux answers ENOSYS). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <toll/toll.h>
#include <unistd.h>

enum { k_list_size = 64 * 1024 };

static char g_list[k_list_size];

int main(int argc, char** argv)
{
    if (argc < 2) {
        long n = counter_list(g_list, sizeof g_list);
        if (n < 0) {
            fprintf(stderr, "counters: counter_list: %s\n", strerror(errno));
            return 1;
        }
        return write(1, g_list, (size_t)n) == n ? 0 : 1;
    }
    int status = 0;
    for (int i = 1; i < argc; ++i) {
        unsigned long long value;
        if (counter_get(argv[i], &value) < 0) {
            fprintf(stderr, "counters: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        printf("%s %llu\n", argv[i], value);
    }
    return status;
}
