/* ut_procfs: /proc/self/maps against the ranges this program maps itself
 * (their bounds, rights and names, and the sum against stat's vsize), read
 * whole, a byte at a time, past its end and into a bad buffer; then
 * /proc/self/fd, whose links say what each descriptor is (a file's path,
 * the console, pipe:[N] and socket:[N] with fstat's inode number); then a
 * child's /proc files while it is a zombie and after it is reaped. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_text_max = 16384, k_lines_max = 128 };

/* One line of maps. */
struct line {
    unsigned long start, end;
    char perms[5];
    char name[128];
};

static char g_text[k_text_max], g_bytewise[k_text_max];
static struct line g_lines[k_lines_max];

/* Reads all of @path into @out (a NUL after): the length, or -1. */
static long slurp(const char* path, char* out, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    long used = 0, n;
    while ((n = read(fd, out + used, size - 1 - used)) > 0)
        used += n;
    close(fd);
    out[used] = '\0';
    return n < 0 ? -1 : used;
}

/* Parses maps text into g_lines: the count, or -1 on a malformed line. */
static int parse_maps(char* text)
{
    int count = 0;
    for (char* s = text; *s && count < k_lines_max; ++count) {
        char* end = strchr(s, '\n');
        if (!end)
            return -1;
        *end = '\0';
        struct line* l = &g_lines[count];
        unsigned long long offset, inode;
        unsigned major, minor;
        int used = 0;
        if (sscanf(s, "%lx-%lx %4s %llx %x:%x %llu%n", &l->start, &l->end, l->perms, &offset,
                   &major, &minor, &inode, &used) != 7)
            return -1;
        const char* name = s + used;
        while (*name == ' ')
            ++name;
        snprintf(l->name, sizeof l->name, "%s", name);
        *end = '\n';
        s = end + 1;
    }
    return count;
}

/* The line whose range holds @address, or NULL. */
static const struct line* holding(int count, uintptr_t address)
{
    for (int i = 0; i < count; ++i)
        if (g_lines[i].start <= address && address < g_lines[i].end)
            return &g_lines[i];
    return NULL;
}

static void check_maps(void)
{
    long page = sysconf(_SC_PAGESIZE);
    /* Five read-only pages; the second made writable; the fifth unmapped. */
    char* p = mmap(NULL, 5 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char* shared = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED && shared != MAP_FAILED);
    CHECK_EQ(mprotect(p + page, page, PROT_READ | PROT_WRITE), 0);
    CHECK_EQ(munmap(p + 4 * page, page), 0);
    uintptr_t brk0 = (uintptr_t)syscall(SYS_brk, 0);
    uintptr_t brk1 = (uintptr_t)syscall(SYS_brk, brk0 + 3 * page);
    CHECK_EQ(brk1, brk0 + 3 * page);
    int local = 0;

    long n = slurp("/proc/self/maps", g_text, sizeof g_text);
    char stat[1024];
    long s = slurp("/proc/self/stat", stat, sizeof stat);
    CHECK(n > 0 && s > 0);
    static char copy[k_text_max];
    memcpy(copy, g_text, (size_t)n + 1);
    int count = parse_maps(copy);
    CHECK(count > 5);
    if (count <= 5)
        return;
    int ordered = 1;
    unsigned long total = 0;
    for (int i = 0; i < count; ++i) {
        total += g_lines[i].end - g_lines[i].start;
        if (g_lines[i].start >= g_lines[i].end || (i && g_lines[i].start < g_lines[i - 1].end))
            ordered = 0;
    }
    CHECK_MSG(ordered, "maps lists its ranges in order, none empty or overlapping");

    const struct line* a = holding(count, (uintptr_t)p);
    const struct line* b = holding(count, (uintptr_t)p + page);
    const struct line* c = holding(count, (uintptr_t)p + 2 * page);
    CHECK(a && b && c);
    if (a && b && c) {
        CHECK(a->end == (uintptr_t)p + page && strcmp(a->perms, "r--p") == 0);
        CHECK(b->start == (uintptr_t)p + page && b->end == (uintptr_t)p + 2 * page &&
              strcmp(b->perms, "rw-p") == 0);
        CHECK(c->start == (uintptr_t)p + 2 * page && c->end == (uintptr_t)p + 4 * page &&
              strcmp(c->perms, "r--p") == 0 && c->name[0] == '\0');
    }
    CHECK_MSG(holding(count, (uintptr_t)p + 4 * page) == NULL, "the page unmapped has no line");
    const struct line* sh = holding(count, (uintptr_t)shared);
    CHECK(sh && strcmp(sh->perms, "rw-s") == 0);
    const struct line* text = holding(count, (uintptr_t)&check_maps);
    CHECK(text && text->perms[2] == 'x' && strcmp(text->name, "/bin/ut_procfs") == 0);
    const struct line* stack = holding(count, (uintptr_t)&local);
    CHECK(stack && strcmp(stack->name, "[stack]") == 0 && strncmp(stack->perms, "rw", 2) == 0);
    const struct line* heap = holding(count, brk0 + page);
    CHECK(heap && strcmp(heap->name, "[heap]") == 0 && strncmp(heap->perms, "rw", 2) == 0);

    /* stat's vsize (field 23) is the sum of the ranges maps lists. */
    const char* after = strrchr(stat, ')');
    unsigned long vsize = 0;
    int field = 2;
    for (const char* q = after; q && *q && field < 23; ++q)
        if (*q == ' ' && ++field == 23)
            vsize = strtoul(q + 1, NULL, 10);
    CHECK_EQ(vsize, total);

    /* A byte at a time reads the same text; past the end reads nothing. */
    int fd = open("/proc/self/maps", O_RDONLY);
    long got = 0;
    while (got < k_text_max - 1 && read(fd, g_bytewise + got, 1) == 1)
        ++got;
    g_bytewise[got] = '\0';
    CHECK_EQ(got, n);
    CHECK(strcmp(g_bytewise, g_text) == 0);
    char tail[8];
    CHECK_EQ(lseek(fd, 1 << 20, SEEK_SET), 1 << 20);
    CHECK_EQ(read(fd, tail, sizeof tail), 0);
    CHECK_EQ(pread(fd, tail, 4, 0), 4);
    CHECK(memcmp(tail, g_text, 4) == 0);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    CHECK_ERR(read(fd, (void*)16, 8), EFAULT);
    close(fd);
    CHECK_ERR(open("/proc/self/maps", O_WRONLY), EACCES);
    munmap(p, 4 * page);
    munmap(shared, 2 * page);
    syscall(SYS_brk, brk0);
}

/* The link of /proc/self/fd/@fd into @out: its length, or -1. */
static long fd_link(int fd, char* out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    long n = readlink(path, out, size - 1);
    out[n < 0 ? 0 : n] = '\0';
    return n;
}

static void check_fds(void)
{
    int ends[2];
    CHECK_EQ(pipe(ends), 0);
    struct stat r, w;
    CHECK(fstat(ends[0], &r) == 0 && fstat(ends[1], &w) == 0);
    CHECK_MSG(r.st_ino == w.st_ino, "both ends of a pipe have one inode number");
    char want[64], link[256];
    snprintf(want, sizeof want, "pipe:[%llu]", (unsigned long long)r.st_ino);
    CHECK(fd_link(ends[0], link, sizeof link) > 0 && strcmp(link, want) == 0);
    CHECK(fd_link(ends[1], link, sizeof link) > 0 && strcmp(link, want) == 0);
    /* A short buffer takes the start of the link, as Linux's readlink. */
    CHECK_EQ(readlink("/proc/self/fd/0", link, 3), 3);

    int file = open("/bin/ut_procfs", O_RDONLY);
    CHECK(file >= 0);
    CHECK(fd_link(file, link, sizeof link) > 0 && strcmp(link, "/bin/ut_procfs") == 0);
    NOTE("the program's descriptor links to %s", link);
    CHECK(fd_link(0, link, sizeof link) > 0 && strcmp(link, "/dev/console") == 0);
    int null = open("/dev/null", O_RDONLY);
    CHECK(fd_link(null, link, sizeof link) > 0 && strcmp(link, "/dev/null") == 0);
    int sock = socket(AF_INET, SOCK_DGRAM, 0);
    if (sock >= 0) {
        struct stat st;
        CHECK_EQ(fstat(sock, &st), 0);
        snprintf(want, sizeof want, "socket:[%llu]", (unsigned long long)st.st_ino);
        CHECK(fd_link(sock, link, sizeof link) > 0 && strcmp(link, want) == 0);
    } else {
        SKIP("socket:[N] link", "no socket could be made");
    }

    /* Following the link opens the file itself. */
    char path[64], head[4];
    snprintf(path, sizeof path, "/proc/self/fd/%d", file);
    struct stat link_stat;
    CHECK(lstat(path, &link_stat) == 0 && S_ISLNK(link_stat.st_mode));
    int again = open(path, O_RDONLY);
    CHECK(again >= 0 && read(again, head, 4) == 4 && memcmp(head, "\177ELF", 4) == 0);
    close(again);

    /* The listing holds every open descriptor and no closed one. */
    int gone = 40;
    CHECK_EQ(dup2(file, gone), gone);
    close(gone);
    DIR* d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    int seen[64] = {0}, others = 0;
    for (struct dirent* e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int fd = atoi(e->d_name);
        if (fd >= 0 && fd < 64 && e->d_type == DT_LNK)
            seen[fd] = 1;
        else
            ++others;
    }
    CHECK(seen[0] && seen[1] && seen[2] && seen[ends[0]] && seen[ends[1]] && seen[file]);
    CHECK_MSG(!seen[gone] && others == 0, "no closed descriptor and nothing else is listed");
    /* The directory's own descriptor names the directory. */
    CHECK(d && fd_link(dirfd(d), link, sizeof link) > 0);
    snprintf(want, sizeof want, "/proc/%d/fd", getpid());
    CHECK(strcmp(link, want) == 0);
    if (d)
        closedir(d);

    CHECK_ERR(readlink("/proc/self/fd/63", link, sizeof link), ENOENT);
    CHECK_ERR(readlink("/proc/self/fd/abc", link, sizeof link), ENOENT);
    CHECK_ERR(readlink("/proc/self/fd/01", link, sizeof link), ENOENT);
    CHECK_ERR(readlink("/proc/self/fd/4294967296", link, sizeof link), ENOENT);
    char status[32];
    CHECK(slurp("/proc/self/fd/../status", status, sizeof status) > 0 &&
          strncmp(status, "Name:", 5) == 0);
    close(ends[0]);
    close(ends[1]);
    close(file);
    close(null);
    if (sock >= 0)
        close(sock);
}

/* How many descriptors the /proc/PID/fd directory @path lists. */
static int listed(const char* path)
{
    DIR* d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent* e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void check_gone(void)
{
    int go[2];
    CHECK_EQ(pipe(go), 0);
    pid_t child = fork();
    if (child == 0) {
        char c;
        close(go[1]);
        (void)!read(go[0], &c, 1);
        _exit(0);
    }
    close(go[0]);
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", child);
    int stat_fd = open(path, O_RDONLY);
    snprintf(path, sizeof path, "/proc/%d/maps", child);
    int maps_fd = open(path, O_RDONLY);
    snprintf(path, sizeof path, "/proc/%d/fd", child);
    CHECK(stat_fd >= 0 && maps_fd >= 0 && listed(path) >= 3);
    DIR* open_dir = opendir(path);
    close(go[1]); /* the child reads end of file and exits */

    /* A zombie: state Z, no address space to list, no descriptors. */
    char state = '?';
    for (int tries = 0; tries < 1000 && state != 'Z'; ++tries) {
        snprintf(path, sizeof path, "/proc/%d/stat", child);
        if (slurp(path, text, sizeof text) > 0 && strrchr(text, ')'))
            state = strrchr(text, ')')[2];
        if (state != 'Z')
            sched_yield();
    }
    CHECK_EQ(state, 'Z');
    snprintf(path, sizeof path, "/proc/%d/maps", child);
    CHECK_EQ(slurp(path, text, sizeof text), 0);
    snprintf(path, sizeof path, "/proc/%d/fd", child);
    CHECK_EQ(listed(path), 0);

    int status;
    CHECK_EQ(waitpid(child, &status, 0), child);
    /* Reaped: the names are gone; what was open before reads its snapshot
     * (Toll makes a file's text at open) or fails as Linux does. */
    snprintf(path, sizeof path, "/proc/%d/stat", child);
    CHECK_ERR(open(path, O_RDONLY), ENOENT);
    snprintf(path, sizeof path, "/proc/%d/fd/0", child);
    CHECK_ERR(readlink(path, text, sizeof text), ENOENT);
    char want[32];
    int w = snprintf(want, sizeof want, "%d (", child);
    long n = read(stat_fd, text, sizeof text - 1);
    CHECK((n > w && memcmp(text, want, (size_t)w) == 0) || (n < 0 && errno == ESRCH));
    n = read(maps_fd, text, sizeof text);
    CHECK(n > 0 || (n < 0 && errno == ESRCH));
    int entries = 0;
    for (struct dirent* e; open_dir && (e = readdir(open_dir));)
        entries += e->d_name[0] != '.';
    CHECK_MSG(open_dir && entries == 0, "an fd directory opened before lists nothing after");
    if (open_dir)
        closedir(open_dir);
    close(stat_fd);
    close(maps_fd);
}

int main(void)
{
    check_maps();
    check_fds();
    check_gone();
    return utest_done();
}
