/* echo: print the arguments separated by spaces, then a newline (none with -n). */
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv)
{
    int newline = 1;
    int i = 1;
    if (i < argc && strcmp(argv[i], "-n") == 0) {
        newline = 0;
        ++i;
    }
    for (int first = i; i < argc; ++i) {
        if (i > first)
            putchar(' ');
        fputs(argv[i], stdout);
    }
    if (newline)
        putchar('\n');
    /* A write error (a closed pipe, a full disk) must show in the status. */
    return fflush(stdout) == 0 ? 0 : 1;
}
