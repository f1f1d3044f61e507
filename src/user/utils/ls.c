/* ls: list each named directory's entries, sorted, one per line (a named
 * file is listed as itself). -a shows the entries that begin with a dot;
 * -F marks directories with a trailing '/'. With no name, lists "/": Toll
 * has no working directory, every process lives at the root.
 * musl's opendir/readdir open the directory with O_DIRECTORY and read it
 * with the getdents64 system call. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_all, g_classify;

struct entry {
    char* name;
    int is_dir;
};

static int by_name(const void* a, const void* b)
{
    return strcmp(((const struct entry*)a)->name, ((const struct entry*)b)->name);
}

/* Lists directory @path. Returns 0, or 1 on an error (reported). */
static int list(const char* path, int heading)
{
    DIR* dir = opendir(path);
    if (!dir) {
        if (errno == ENOTDIR) {
            puts(path); /* a file: ls names it */
            return 0;
        }
        fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
        return 1;
    }
    struct entry* entries = NULL;
    size_t count = 0, capacity = 0;
    struct dirent* d;
    errno = 0;
    while ((d = readdir(dir))) {
        if (d->d_name[0] == '.' && !g_all)
            continue;
        if (count == capacity) {
            capacity = capacity ? capacity * 2 : 32;
            struct entry* bigger = realloc(entries, capacity * sizeof *entries);
            if (!bigger) {
                fprintf(stderr, "ls: %s: out of memory\n", path);
                closedir(dir);
                return 1;
            }
            entries = bigger;
        }
        entries[count].name = strdup(d->d_name);
        entries[count].is_dir = d->d_type == DT_DIR;
        if (!entries[count].name) {
            fprintf(stderr, "ls: %s: out of memory\n", path);
            closedir(dir);
            return 1;
        }
        ++count;
    }
    int status = 0;
    if (errno) {
        fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
        status = 1;
    }
    closedir(dir);
    qsort(entries, count, sizeof *entries, by_name);
    if (heading)
        printf("%s:\n", path);
    for (size_t i = 0; i < count; ++i) {
        printf("%s%s\n", entries[i].name, g_classify && entries[i].is_dir ? "/" : "");
        free(entries[i].name);
    }
    free(entries);
    return status;
}

int main(int argc, char** argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; ++i) {
        if (strcmp(argv[i], "--") == 0) {
            ++i;
            break;
        }
        for (const char* o = argv[i] + 1; *o; ++o) {
            if (*o == 'a') {
                g_all = 1;
            } else if (*o == 'F') {
                g_classify = 1;
            } else {
                fprintf(stderr, "ls: unknown option -%c (usage: ls [-aF] [path...])\n", *o);
                return 2;
            }
        }
    }
    int status = 0;
    if (i == argc)
        status = list("/", 0);
    for (int first = i; i < argc; ++i) {
        if (i > first && argc - first > 1)
            putchar('\n');
        status |= list(argv[i], argc - first > 1);
    }
    if (fflush(stdout) != 0)
        status = 1;
    return status;
}
