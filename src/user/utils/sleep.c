/* sleep: pause for the number of seconds given (fractions allowed: "0.25"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { k_nanoseconds_per_second = 1000000000 };

int main(int argc, char** argv)
{
    char* end = NULL;
    double seconds = argc == 2 ? strtod(argv[1], &end) : -1;
    if (argc != 2 || end == argv[1] || *end != '\0' || seconds < 0) {
        fprintf(stderr, "usage: sleep SECONDS\n");
        return 2;
    }
    struct timespec left;
    left.tv_sec = (time_t)seconds;
    left.tv_nsec = (long)((seconds - (double)left.tv_sec) * k_nanoseconds_per_second);
    /* nanosleep() stores the time still to sleep when a signal cuts it short. */
    while (nanosleep(&left, &left) != 0) {
        if (errno != EINTR) {
            perror("sleep: nanosleep");
            return 1;
        }
    }
    return 0;
}
