/* disk_workload: works an ext2 file system mounted at /mnt through the
 * Linux calls (files of every indirect depth, directories, hard and
 * symbolic links, rename, unlink, truncate, fsync, sync) and checks each
 * answer, so that the host's e2fsck can then judge what reached the disk.
 *
 *   disk_workload          the workload (the image holds /hello from mke2fs -d)
 *   disk_workload hostile  on a damaged image: every read of damage fails
 *                          with an error, and the kernel lives on
 *   disk_workload absent   on an image the kernel refused: /mnt is not there
 *   disk_workload exec-child  what the copy of this program on the disk runs
 *                          as: exits with status 42
 *   disk_workload crash N  N files, each written, fsynced, renamed into place
 *                          and fsynced again, then announced on a line
 *                          "SYNCED name size" (the crash tests cut the power
 *                          at some point and check every announced file)
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>

/* The byte at offset i of file number n: a pattern no two files share. */
static unsigned char pattern(int n, size_t i)
{
    return (unsigned char)(i * 7 + n * 13 + (i >> 10));
}

static int write_file(const char* path, int n, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    static unsigned char buf[4096];
    for (size_t done = 0; done < size;) {
        size_t chunk = size - done < sizeof buf ? size - done : sizeof buf;
        for (size_t i = 0; i < chunk; ++i)
            buf[i] = pattern(n, done + i);
        if (write(fd, buf, chunk) != (ssize_t)chunk) {
            close(fd);
            return -1;
        }
        done += chunk;
    }
    int r = fsync(fd);
    close(fd);
    return r;
}

/* 1 if @p path holds exactly @p size bytes of pattern @p n. */
static int file_matches(const char* path, int n, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    static unsigned char buf[4096];
    size_t done = 0;
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0) {
            close(fd);
            return 0;
        }
        if (got == 0)
            break;
        for (ssize_t i = 0; i < got; ++i)
            if (buf[i] != pattern(n, done + (size_t)i)) {
                close(fd);
                return 0;
            }
        done += (size_t)got;
    }
    close(fd);
    return done == size;
}

static int count_entries(const char* path)
{
    DIR* d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    errno = 0;
    while (readdir(d))
        ++n;
    int failed = errno != 0; /* readdir's NULL is an error, not the end */
    closedir(d);
    return failed ? -1 : n;
}

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    if (counter_get(name, &v) != 0)
        return 0;
    return v;
}

/* Copies the ramdisk's /bin/disk_workload to @p path with mode 0755. */
static int copy_self(const char* path)
{
    int in = open("/bin/disk_workload", O_RDONLY);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (in < 0 || out < 0)
        return -1;
    static char buf[4096];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            return -1;
    close(in);
    return close(out) == 0 && n == 0 ? 0 : -1;
}

/* Runs @p path exec-child in a child; its exit status, or -1. */
static int run_child(const char* path)
{
    pid_t pid = fork();
    if (pid == 0) {
        char* const argv[] = {(char*)"disk_workload", (char*)"exec-child", NULL};
        char* const envp[] = {NULL};
        execve(path, argv, envp);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* The page cache, file mappings and exec from the disk. */
static void pages(void)
{
    /* A second read of a file comes from the cache: hits, no misses. */
    CHECK_EQ(write_file("/mnt/data/cached", 5, 64 * 1024), 0);
    CHECK_MSG(file_matches("/mnt/data/cached", 5, 64 * 1024), "a file reads back");
    unsigned long long hits = counter("pagecache.hits"), misses = counter("pagecache.misses");
    CHECK_MSG(file_matches("/mnt/data/cached", 5, 64 * 1024), "a cached file reads back");
    CHECK_MSG(counter("pagecache.misses") == misses, "a second read misses nothing");
    CHECK_MSG(counter("pagecache.hits") >= hits + 64 * 1024 / (unsigned long long)getpagesize(),
              "a second read hits every page");

    long page = getpagesize();
    int fd = open("/mnt/data/cached", O_RDWR);
    CHECK(fd >= 0);
    /* MAP_PRIVATE: the file's bytes; a write is the process's own. */
    unsigned char* p = mmap(NULL, 64 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(p != MAP_FAILED);
    CHECK_MSG(p[0] == pattern(5, 0) && p[40000] == pattern(5, 40000), "MAP_PRIVATE maps the file");
    p[1] = (unsigned char)~pattern(5, 1);
    unsigned char b = 0;
    CHECK_EQ(pread(fd, &b, 1, 1), 1);
    CHECK_MSG(b == pattern(5, 1), "a write to MAP_PRIVATE leaves the file alone");
    CHECK_EQ(munmap(p, 64 * 1024), 0);
    /* MAP_SHARED: a write is the file's at once (the same page), and
     * another process's; msync makes it durable (the host checks). */
    p = mmap(NULL, 64 * 1024, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
    CHECK(p != MAP_FAILED);
    CHECK_MSG(p[0] == pattern(5, (size_t)page), "MAP_SHARED at an offset maps the file there");
    memcpy(p + 100, "shared write", 12);
    char text[12];
    CHECK_EQ(pread(fd, text, 12, page + 100), 12);
    CHECK_MSG(memcmp(text, "shared write", 12) == 0, "read sees a MAP_SHARED write at once");
    pid_t pid = fork();
    if (pid == 0)
        _exit(memcmp(p + 100, "shared write", 12) == 0 && (p[200] = 'C') == 'C' ? 0 : 1);
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid && status == 0);
    CHECK_MSG(p[200] == 'C', "a child's write to MAP_SHARED is the parent's");
    CHECK_EQ(pwrite(fd, "by write", 8, page + 300), 8);
    CHECK_MSG(memcmp(p + 300, "by write", 8) == 0, "a mapping sees write() at once");
    unsigned long long writebacks = counter("pagecache.writebacks");
    CHECK_EQ(msync(p, 64 * 1024, MS_SYNC), 0);
    CHECK_MSG(counter("pagecache.writebacks") > writebacks, "msync writes the shared pages back");
    CHECK_ERR(msync(p + 1, 100, MS_SYNC), EINVAL);
    CHECK_ERR(msync(p, 100, MS_SYNC | MS_ASYNC), EINVAL);
    CHECK_EQ(munmap(p, 64 * 1024), 0);
    close(fd);
    /* statfs and /proc/mounts (what df and mount read). */
    struct statfs sf;
    CHECK_EQ(statfs("/mnt/data", &sf), 0);
    CHECK_MSG(sf.f_type == 0xEF53 && sf.f_bsize == 1024 && sf.f_blocks > sf.f_bfree &&
                  sf.f_bfree > 0 && sf.f_files > sf.f_ffree,
              "statfs reports ext2's magic and the superblock's counts");
    int mounts = open("/proc/mounts", O_RDONLY);
    char table[256] = {0};
    CHECK(mounts >= 0 && read(mounts, table, sizeof table - 1) > 0);
    CHECK_MSG(strstr(table, " /mnt ext2 rw") != NULL, "/proc/mounts lists the disk");
    close(mounts);
    /* Linux's refusals. */
    fd = open("/mnt/data/cached", O_RDONLY);
    CHECK_ERR((long)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
    CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) != MAP_FAILED);
    close(fd);
    fd = open("/mnt/data/cached", O_WRONLY);
    CHECK_ERR((long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0), EACCES);
    close(fd);
    CHECK_ERR((long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 99, 0), EBADF);

    /* exec of a program stored on the disk: its text mapped from the page
     * cache (not copied); a second exec maps the cached pages again and,
     * on arm64, syncs no instruction-cache page a first exec synced. */
    CHECK_EQ(mkdir("/mnt/bin", 0755), 0);
    CHECK_EQ(copy_self("/mnt/bin/dw"), 0);
    unsigned long long mapped = counter("proc.exec.file_pages_mapped");
    unsigned long long syncs0 = counter("vm.pmap.icache_syncs");
    CHECK_EQ(run_child("/mnt/bin/dw"), 42);
    unsigned long long syncs1 = counter("vm.pmap.icache_syncs");
    CHECK_MSG(counter("proc.exec.file_pages_mapped") > mapped, "exec maps the disk's text pages");
    misses = counter("pagecache.misses");
    CHECK_EQ(run_child("/mnt/bin/dw"), 42);
    unsigned long long syncs2 = counter("vm.pmap.icache_syncs");
    CHECK_MSG(counter("pagecache.misses") == misses, "a second exec reads nothing from the disk");
    CHECK_MSG(syncs2 - syncs1 < syncs1 - syncs0 || syncs1 == syncs0,
              "a second exec syncs fewer instruction-cache pages");
    CHECK_EQ(run_child("/mnt/data/cached"), 127); /* mode 0644, no execute bit: EACCES */
    utest_line("pages: syncs %llu then %llu", syncs1 - syncs0, syncs2 - syncs1);

    /* A working directory on the disk: relative paths are the disk's. */
    char cwd[64];
    CHECK_EQ(chdir("/mnt/data"), 0);
    CHECK_MSG(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/mnt/data") == 0, "getcwd on the disk");
    struct stat st;
    CHECK_EQ(stat("cached", &st), 0);
    CHECK_MSG(S_ISREG(st.st_mode) && st.st_size == 64 * 1024, "stat of a relative path on the disk");
    CHECK_EQ(mkdir("sub", 0755), 0);
    CHECK_EQ(chdir("./sub/"), 0);
    CHECK_MSG(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/mnt/data/sub") == 0, "chdir goes down");
    fd = open("here", O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1);
    close(fd);
    CHECK_EQ(access("/mnt/data/sub/here", F_OK), 0);
    CHECK_EQ(chdir(".."), 0);
    CHECK_MSG(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/mnt/data") == 0, "chdir .. comes up");
    CHECK_EQ(run_child("../bin/dw"), 42);
    CHECK_EQ(unlink("sub/here"), 0);
    CHECK_EQ(rmdir("sub"), 0);
    CHECK_ERR(chdir("cached"), ENOTDIR);
    CHECK_ERR(chdir("absent"), ENOENT);
    CHECK_EQ(chdir("/"), 0);
    CHECK_MSG(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0, "chdir / is the tree again");
    CHECK_ERR(stat("cached", &st), ENOENT);
}

static int workload(void)
{
    char buf[128];
    int fd = open("/mnt/hello", O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, buf, sizeof buf);
    CHECK_MSG(n == 16 && memcmp(buf, "hello from ext2\n", 16) == 0, "mke2fs -d's file reads back");
    close(fd);

    /* Sizes through direct, single, double indirect blocks (1 KB blocks:
     * 12 direct, 256 single, then double). */
    CHECK_EQ(mkdir("/mnt/data", 0755), 0);
    CHECK_ERR(mkdir("/mnt/data", 0755), EEXIST);
    CHECK_EQ(write_file("/mnt/data/small", 1, 100), 0);
    CHECK_EQ(write_file("/mnt/data/medium", 2, 40 * 1024), 0);
    CHECK_EQ(write_file("/mnt/data/large", 3, 400 * 1024), 0);
    CHECK_MSG(file_matches("/mnt/data/small", 1, 100), "small file reads back");
    CHECK_MSG(file_matches("/mnt/data/medium", 2, 40 * 1024), "single-indirect file reads back");
    CHECK_MSG(file_matches("/mnt/data/large", 3, 400 * 1024), "double-indirect file reads back");

    /* A sparse file: a hole reads as zeros. */
    fd = open("/mnt/data/sparse", O_RDWR | O_CREAT, 0644);
    CHECK(fd >= 0);
    CHECK_EQ(lseek(fd, 300 * 1024, SEEK_SET), 300 * 1024);
    CHECK_EQ(write(fd, "end", 3), 3);
    CHECK_EQ(lseek(fd, 1000, SEEK_SET), 1000);
    memset(buf, 1, sizeof buf);
    CHECK_EQ(read(fd, buf, 16), 16);
    CHECK_MSG(buf[0] == 0 && buf[15] == 0, "a hole reads as zeros");
    close(fd);

    /* O_APPEND, O_EXCL. */
    fd = open("/mnt/data/log", O_WRONLY | O_CREAT | O_APPEND, 0644);
    CHECK(fd >= 0);
    CHECK_EQ(write(fd, "one\n", 4), 4);
    close(fd);
    fd = open("/mnt/data/log", O_WRONLY | O_APPEND);
    CHECK_EQ(write(fd, "two\n", 4), 4);
    close(fd);
    fd = open("/mnt/data/log", O_RDONLY);
    CHECK_EQ(read(fd, buf, sizeof buf), 8);
    CHECK_MSG(memcmp(buf, "one\ntwo\n", 8) == 0, "O_APPEND appends");
    close(fd);
    CHECK_ERR(open("/mnt/data/log", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
    CHECK_ERR(open("/mnt/nothing/here", O_RDONLY), ENOENT);
    CHECK_ERR(open("/mnt/data/log/x", O_RDONLY), ENOTDIR);
    CHECK_ERR(open("/mnt/data", O_WRONLY), EISDIR);

    /* Links. */
    CHECK_EQ(link("/mnt/data/small", "/mnt/data/small.link"), 0);
    CHECK_MSG(file_matches("/mnt/data/small.link", 1, 100), "a hard link names the same data");
    CHECK_ERR(link("/mnt/data", "/mnt/data2"), EPERM);
    CHECK_EQ(symlink("small", "/mnt/data/short.sym"), 0);
    static const char k_long[] = "../data/./././././././././././././././././././././././././medium";
    CHECK_EQ(symlink(k_long, "/mnt/data/long.sym"), 0);
    CHECK_MSG(file_matches("/mnt/data/short.sym", 1, 100), "a fast symbolic link is followed");
    CHECK_MSG(file_matches("/mnt/data/long.sym", 2, 40 * 1024), "a slow symbolic link is followed");
    CHECK_EQ(readlink("/mnt/data/long.sym", buf, sizeof buf), (ssize_t)strlen(k_long));
    CHECK_MSG(memcmp(buf, k_long, strlen(k_long)) == 0, "readlink gives the target");
    /* stat, lstat, fstat of the disk's files. */
    struct stat st, fst;
    CHECK_EQ(lstat("/mnt/data/short.sym", &st), 0);
    CHECK_MSG(S_ISLNK(st.st_mode) && st.st_size == 5, "lstat sees the symbolic link");
    CHECK_EQ(stat("/mnt/data/short.sym", &st), 0);
    CHECK_MSG(S_ISREG(st.st_mode) && st.st_size == 100 && st.st_nlink == 2,
              "stat follows it to the file, with its two names");
    fd = open("/mnt/data/small", O_RDONLY);
    CHECK_EQ(fstat(fd, &fst), 0);
    CHECK_MSG(fst.st_ino == st.st_ino && fst.st_dev == st.st_dev && fst.st_size == 100,
              "fstat names the same inode");
    close(fd);
    CHECK_EQ(stat("/mnt/data", &st), 0);
    CHECK_MSG(S_ISDIR(st.st_mode), "a directory of the disk stats as one");
    CHECK_ERR(stat("/mnt/data/absent", &st), ENOENT);
    CHECK_EQ(symlink("loop.b", "/mnt/data/loop.a"), 0);
    CHECK_EQ(symlink("loop.a", "/mnt/data/loop.b"), 0);
    CHECK_ERR(open("/mnt/data/loop.a", O_RDONLY), ELOOP);

    /* Many names: the directory grows past one block; half go again. */
    CHECK_EQ(mkdir("/mnt/many", 0755), 0);
    int made = 0;
    for (int i = 0; i < 120; ++i) {
        snprintf(buf, sizeof buf, "/mnt/many/file-with-a-longish-name-%03d", i);
        made += write_file(buf, i, (size_t)i * 37) == 0;
    }
    CHECK_EQ(made, 120);
    CHECK_EQ(count_entries("/mnt/many"), 122);
    int gone = 0;
    for (int i = 0; i < 120; i += 2) {
        snprintf(buf, sizeof buf, "/mnt/many/file-with-a-longish-name-%03d", i);
        gone += unlink(buf) == 0;
    }
    CHECK_EQ(gone, 60);
    CHECK_EQ(count_entries("/mnt/many"), 62);
    CHECK_MSG(file_matches("/mnt/many/file-with-a-longish-name-077", 77, 77 * 37),
              "a file beside removed ones is intact");

    /* Rename: in place, over a file, a directory across directories. */
    CHECK_EQ(rename("/mnt/data/log", "/mnt/data/log.old"), 0);
    CHECK_ERR(open("/mnt/data/log", O_RDONLY), ENOENT);
    CHECK_EQ(write_file("/mnt/data/victim", 9, 5000), 0);
    CHECK_EQ(rename("/mnt/data/medium", "/mnt/data/victim"), 0);
    CHECK_MSG(file_matches("/mnt/data/victim", 2, 40 * 1024), "rename over a file replaces it");
    CHECK_EQ(mkdir("/mnt/data/inner", 0755), 0);
    CHECK_EQ(write_file("/mnt/data/inner/f", 5, 3000), 0);
    CHECK_EQ(rename("/mnt/data/inner", "/mnt/many/moved"), 0);
    CHECK_MSG(file_matches("/mnt/many/moved/f", 5, 3000), "a moved directory keeps its files");
    fd = open("/mnt/many/moved/../moved/f", O_RDONLY);
    CHECK_MSG(fd >= 0, "'..' of a moved directory is its new parent");
    close(fd);
    CHECK_ERR(rename("/mnt/many", "/mnt/many/moved/under"), EINVAL);

    /* rmdir, unlink errors. */
    CHECK_ERR(rmdir("/mnt/many"), ENOTEMPTY);
    CHECK_ERR(unlink("/mnt/many"), EISDIR);
    CHECK_ERR(rmdir("/mnt/data/small"), ENOTDIR);
    CHECK_EQ(unlink("/mnt/many/moved/f"), 0);
    CHECK_EQ(rmdir("/mnt/many/moved"), 0);
    CHECK_ERR(rmdir("/mnt/many/moved"), ENOENT);

    /* Truncate the large file into its direct blocks: its indirect blocks go. */
    fd = open("/mnt/data/large", O_RDWR);
    CHECK_EQ(ftruncate(fd, 5000), 0);
    close(fd);
    CHECK_MSG(file_matches("/mnt/data/large", 3, 5000), "a truncated file keeps its start");

    /* An unlinked file stays readable while open, and goes at its close. */
    fd = open("/mnt/data/small.link", O_RDONLY);
    CHECK_EQ(unlink("/mnt/data/small.link"), 0);
    CHECK_EQ(unlink("/mnt/data/small"), 0);
    CHECK_EQ(read(fd, buf, 10), 10);
    CHECK_MSG(buf[3] == pattern(1, 3), "an unlinked open file still reads");
    close(fd);

    pages();
    sync();
    utest_line("workload done");
    return utest_done();
}

static int hostile(void)
{
    char buf[64];
    /* Each damaged object answers with an error; nothing else breaks. */
    int fd = open("/mnt/pointer/file", O_RDONLY);
    if (fd >= 0) {
        CHECK_ERR(read(fd, buf, sizeof buf), EIO);
        close(fd);
    } else {
        CHECK_MSG(errno == EIO, "the damaged file fails with EIO");
    }
    CHECK_ERR(open("/mnt/looped/anything", O_RDONLY), EIO);
    CHECK(count_entries("/mnt/looped") < 0);
    CHECK_ERR(open("/mnt/looped/x", O_WRONLY | O_CREAT, 0644), EIO);
    /* A directory linked into itself: paths through it end; moving it
     * under itself is refused. */
    fd = open("/mnt/cycle/self/self/self/f", O_RDONLY);
    CHECK_MSG(fd >= 0, "a path through a directory cycle resolves");
    close(fd);
    CHECK_ERR(rename("/mnt/cycle", "/mnt/cycle/self/moved"), EINVAL);
    /* Climbing a ".." that names itself ends with an error. */
    CHECK_ERR(rename("/mnt/elsewhere", "/mnt/dotdot/moved"), EIO);
    /* An undamaged file beside them still reads. */
    fd = open("/mnt/hello", O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ(read(fd, buf, sizeof buf), 16);
    close(fd);
    return utest_done();
}

static int absent(void)
{
    CHECK_ERR(open("/mnt/hello", O_RDONLY), ENOENT);
    /* The root is the writable file tree, which has no /mnt of its own. */
    CHECK_ERR(mkdir("/mnt/x", 0755), ENOENT);
    return utest_done();
}

static int crash(int files)
{
    char tmp[64], name[64], line[96];
    if (mkdir("/mnt/c", 0755) != 0)
        return 1;
    for (int i = 0; i < files; ++i) {
        size_t size = 1000 + (size_t)(i * 2749) % 30000;
        snprintf(tmp, sizeof tmp, "/mnt/c/f%d.tmp", i);
        snprintf(name, sizeof name, "/mnt/c/f%d", i);
        if (write_file(tmp, i, size) != 0 || rename(tmp, name) != 0)
            return 1;
        int fd = open(name, O_RDONLY);
        if (fd < 0 || fsync(fd) != 0)
            return 1;
        close(fd);
        int n = snprintf(line, sizeof line, "SYNCED f%d %zu\n", i, size);
        if (write(1, line, (size_t)n) != n)
            return 1;
        /* Churn that no fsync covers: a file made and removed again. */
        if (write_file("/mnt/c/scratch", i + 1000, 5000) != 0 || unlink("/mnt/c/scratch") != 0)
            return 1;
    }
    utest_line("crash workload done");
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 2 && strcmp(argv[1], "crash") == 0)
        return crash(atoi(argv[2]));
    if (argc > 1 && strcmp(argv[1], "hostile") == 0)
        return hostile();
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0)
        return 42;
    if (argc > 1 && strcmp(argv[1], "absent") == 0)
        return absent();
    return workload();
}
