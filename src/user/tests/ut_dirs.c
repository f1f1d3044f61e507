/* ut_dirs: directories of the ramdisk. open() with O_DIRECTORY, the
 * getdents64 system call (records, d_type, offsets that carry across calls
 * with a small buffer, lseek to rewind or resume) and its errors, then
 * musl's opendir/readdir on top. getdents64 is called raw (syscall()) so
 * that every argument reaches the kernel as written. Unlike most tests here
 * it is Toll's alone: it expects the ramdisk's tree (a root holding only
 * /bin, this program in /bin), which no Linux host has. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <toll/utest.h>
#include <unistd.h>

enum { k_max_entries = 256, k_name_max = 64 };

/* One directory entry as the kernel wrote it. */
struct entry {
    uint64_t ino;
    int64_t off;
    unsigned reclen;
    unsigned type;
    char name[k_name_max];
};

static long raw_getdents64(int fd, void* buf, unsigned long count)
{
    return syscall(SYS_getdents64, fd, buf, count);
}

/* Parses @n bytes of records at @buf into @out (from index @at). Returns
 * the new count, or -1 if a record is malformed (checked here). */
static int parse(const char* buf, long n, struct entry* out, int at)
{
    long pos = 0;
    while (pos < n && at < k_max_entries) {
        struct entry* e = &out[at];
        unsigned short reclen;
        memcpy(&e->ino, buf + pos, 8);
        memcpy(&e->off, buf + pos + 8, 8);
        memcpy(&reclen, buf + pos + 16, 2);
        e->reclen = reclen;
        e->type = (unsigned char)buf[pos + 18];
        size_t length = strnlen(buf + pos + 19, reclen > 19 ? reclen - 19 : 0);
        if (reclen % 8 != 0 || reclen < 19 + length + 1 || pos + reclen > n ||
            length >= k_name_max || e->ino == 0)
            return -1;
        memcpy(e->name, buf + pos + 19, length + 1);
        pos += reclen;
        ++at;
    }
    return pos == n ? at : -1;
}

/* Reads directory @fd to its end with a buffer of @size bytes. Returns the
 * number of entries (or -1), and the number of calls that returned data. */
static int read_all(int fd, size_t size, struct entry* out, int* calls)
{
    char buf[4096];
    int count = 0;
    *calls = 0;
    for (;;) {
        long n = raw_getdents64(fd, buf, size);
        if (n <= 0)
            return n == 0 ? count : -1;
        ++*calls;
        count = parse(buf, n, out, count);
        if (count < 0)
            return -1;
    }
}

static int find(const struct entry* e, int count, const char* name)
{
    for (int i = 0; i < count; ++i)
        if (strcmp(e[i].name, name) == 0)
            return i;
    return -1;
}

static struct entry g_big[k_max_entries], g_small[k_max_entries];

static void check_root(void)
{
    int fd = open("/", O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    int calls;
    int n = read_all(fd, 4096, g_big, &calls);
    /* The ramdisk holds only /bin/...; the tree adds /dev, /tmp and /proc:
     * the root has ".", "..", "bin", "dev", "tmp" and "proc". */
    CHECK_EQ(n, 6);
    CHECK(n == 6 && strcmp(g_big[0].name, ".") == 0 && strcmp(g_big[1].name, "..") == 0);
    CHECK(find(g_big, n, "dev") >= 0 && find(g_big, n, "tmp") >= 0 && find(g_big, n, "proc") >= 0);
    int bin = find(g_big, n, "bin");
    CHECK(bin >= 0);
    CHECK_EQ(bin >= 0 ? g_big[bin].type : 0, DT_DIR);
    CHECK_EQ(g_big[0].type, DT_DIR);
    char buf[256];
    CHECK_EQ(raw_getdents64(fd, buf, sizeof buf), 0); /* at the end it stays there */
    close(fd);
    /* A trailing slash names the same directory. */
    fd = open("/bin/", O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    CHECK(raw_getdents64(fd, buf, sizeof buf) > 0);
    close(fd);
}

static void check_bin(void)
{
    int fd = open("/bin", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(fd >= 0);
    int calls;
    int n = read_all(fd, 4096, g_big, &calls);
    CHECK(n > 10);
    NOTE("/bin: %d entries in %d call(s) of 4096 bytes", n, calls);
    int sh = find(g_big, n, "sh"), ls = find(g_big, n, "ls"), me = find(g_big, n, "ut_dirs");
    CHECK(sh >= 0 && ls >= 0 && me >= 0);
    CHECK_EQ(sh >= 0 ? g_big[sh].type : 0, DT_REG);
    int regular = 0, increasing = 1, unique = 1;
    for (int i = 0; i < n; ++i) {
        regular += g_big[i].type == DT_REG;
        if (i > 0 && g_big[i].off <= g_big[i - 1].off)
            increasing = 0;
        if (find(g_big, i, g_big[i].name) >= 0)
            unique = 0;
    }
    CHECK_EQ(regular, n - 2); /* all but "." and ".." are files */
    CHECK_MSG(increasing, "d_off grows from entry to entry");
    CHECK_MSG(unique, "no name is listed twice");

    /* Rewind, then read again through a buffer that holds one or two
     * records: the offset carries across the calls, nothing is lost or
     * repeated. */
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    int m = read_all(fd, 96, g_small, &calls);
    CHECK_EQ(m, n);
    CHECK_MSG(calls >= n / 4, "a 96-byte buffer takes many calls"); /* 1 to 3 records each */
    int same = m == n;
    for (int i = 0; same && i < n; ++i)
        same = strcmp(g_big[i].name, g_small[i].name) == 0 && g_big[i].off == g_small[i].off &&
               g_big[i].type == g_small[i].type;
    CHECK_MSG(same, "the small-buffer pass lists the same entries in the same order");

    /* Seek to an entry's d_off: reading resumes at the entry after it. */
    if (n > 5) {
        CHECK_EQ(lseek(fd, g_big[4].off, SEEK_SET), g_big[4].off);
        char buf[256];
        long got = raw_getdents64(fd, buf, sizeof buf);
        struct entry e[k_max_entries];
        CHECK(got > 0 && parse(buf, got, e, 0) > 0 && strcmp(e[0].name, g_big[5].name) == 0);
    }

    /* A buffer too small for the next record: EINVAL, and the offset stays. */
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    char tiny[24];
    CHECK_ERR(raw_getdents64(fd, tiny, 19), EINVAL);
    CHECK_ERR(raw_getdents64(fd, tiny, 0), EINVAL);
    CHECK_EQ(raw_getdents64(fd, tiny, sizeof tiny), 24); /* "." fits in 24 bytes */
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 1);
    CHECK_ERR(lseek(fd, 0, SEEK_END), EINVAL);

    /* A directory is not a stream of bytes. */
    CHECK_ERR(read(fd, tiny, sizeof tiny), EISDIR);
    close(fd);
}

static void check_errors(void)
{
    char buf[256];
    CHECK_ERR(raw_getdents64(-1, buf, sizeof buf), EBADF);
    CHECK_ERR(raw_getdents64(999, buf, sizeof buf), EBADF);
    int dir = open("/bin", O_RDONLY | O_DIRECTORY);
    CHECK(dir >= 0);
    CHECK_ERR(raw_getdents64(dir, NULL, sizeof buf), EFAULT);
    CHECK_ERR(raw_getdents64(dir, (void*)(uintptr_t)-4096, 4096), EFAULT);
    CHECK_EQ(lseek(dir, 0, SEEK_CUR), 0); /* nothing was consumed */
    close(dir);

    int file = open("/bin/sh", O_RDONLY);
    CHECK(file >= 0);
    CHECK_ERR(raw_getdents64(file, buf, sizeof buf), ENOTDIR);
    close(file);
    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    CHECK_ERR(raw_getdents64(fds[0], buf, sizeof buf), ENOTDIR);
    close(fds[0]);
    close(fds[1]);

    CHECK_ERR(open("/bin/sh", O_RDONLY | O_DIRECTORY), ENOTDIR);
    CHECK_ERR(open("/bin/sh/", O_RDONLY), ENOTDIR);
    CHECK_ERR(open("/dev/null", O_RDONLY | O_DIRECTORY), ENOTDIR);
    CHECK_ERR(open("/no/such/dir", O_RDONLY | O_DIRECTORY), ENOENT);
    CHECK_ERR(open("/bi", O_RDONLY | O_DIRECTORY), ENOENT); /* a prefix, not a directory */
    CHECK_ERR(open("/bin", O_WRONLY), EISDIR);
    CHECK_ERR(open("/bin", O_RDWR), EISDIR);
    CHECK_ERR(open("/bin", O_RDONLY | O_CREAT, 0644), EISDIR);
    /* The tree is writable, and Toll's one user is root. */
    CHECK_EQ(access("/bin", R_OK | X_OK), 0);
    CHECK_EQ(access("/bin", W_OK), 0);
    /* Without O_DIRECTORY a directory still opens for reading. */
    int plain = open("/bin", O_RDONLY);
    CHECK(plain >= 0);
    close(plain);
}

static void check_readdir(void)
{
    DIR* d = opendir("/bin");
    CHECK(d != NULL);
    if (!d)
        return;
    int seen = 0, sh = 0;
    struct dirent* e;
    while ((e = readdir(d))) {
        ++seen;
        sh += strcmp(e->d_name, "sh") == 0 && e->d_type == DT_REG;
    }
    CHECK_EQ(sh, 1);
    rewinddir(d);
    int again = 0;
    while (readdir(d))
        ++again;
    CHECK_EQ(again, seen);
    closedir(d);
    errno = 0;
    CHECK(opendir("/bin/ls") == NULL && errno == ENOTDIR);
}

int main(void)
{
    check_root();
    check_bin();
    check_errors();
    check_readdir();
    return utest_done();
}
