/* ut_tmpfs: the writable tree's files, directories and links, with Linux's
 * errors. Every expected errno is Linux's: the i386 build of this program
 * runs unchanged on Linux (in a tmpfs /tmp) and gives the same answers; only
 * the memory check, which reads Toll's sys.vfs.bytes counter, is Toll's. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

#define D "/tmp/ut_tmpfs"

static void clean(void)
{
    const char* files[] = {D "/d/f", D "/d/g", D "/d/sub/x", D "/l1", D "/l2", D "/big",
                           D "/open", D "/e/x", D "/h"};
    for (unsigned i = 0; i < sizeof files / sizeof files[0]; ++i)
        unlink(files[i]);
    rmdir(D "/d/sub");
    rmdir(D "/d");
    rmdir(D "/e");
    rmdir(D "/moved");
    rmdir(D);
}

static long long vfs_bytes(void)
{
    unsigned long long v = 0;
    return counter_get("sys.vfs.bytes", &v) == 0 ? (long long)v : -1;
}

static void check_dirs(void)
{
    CHECK_EQ(mkdir(D "/d", 0755), 0);
    CHECK_ERR(mkdir(D "/d", 0755), EEXIST);
    CHECK_ERR(rmdir(D "/nothing"), ENOENT);
    int fd = open(D "/d/f", O_CREAT | O_RDWR, 0644);
    CHECK(fd >= 0);
    CHECK_EQ(write(fd, "hello", 5), 5);
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK_EQ(st.st_size, 5);
    CHECK(S_ISREG(st.st_mode) && (st.st_mode & 0777) == (0644 & ~022));
    close(fd);
    CHECK_ERR(open(D "/d", O_WRONLY), EISDIR);
    CHECK_ERR(open(D "/d/f/x", O_RDONLY), ENOTDIR);
    CHECK_ERR(mkdir(D "/d/f/x", 0755), ENOTDIR);
    CHECK_ERR(open(D "/d/f", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
    CHECK_ERR(rmdir(D "/d"), ENOTEMPTY);
    CHECK_ERR(unlink(D "/d"), EISDIR);
    CHECK_ERR(rmdir(D "/d/f"), ENOTDIR);
    CHECK_EQ(stat(D "/d", &st), 0);
    CHECK_EQ(st.st_nlink, 2); /* ".", and its name in D */
    CHECK_EQ(mkdir(D "/d/sub", 0700), 0);
    CHECK_EQ(stat(D "/d", &st), 0);
    CHECK_EQ(st.st_nlink, 3); /* and sub's ".." */
}

static void check_rename(void)
{
    CHECK_ERR(rename(D "/d", D "/d/sub/x"), EINVAL); /* into itself */
    CHECK_EQ(mkdir(D "/e", 0755), 0);
    int fd = open(D "/e/x", O_CREAT | O_WRONLY, 0644);
    close(fd);
    CHECK_ERR(rename(D "/d/sub", D "/e"), ENOTEMPTY);
    CHECK_ERR(rename(D "/d/f", D "/d/sub"), EISDIR);
    CHECK_ERR(rename(D "/d/sub", D "/d/f"), ENOTDIR);
    CHECK_ERR(rename(D "/nothing", D "/x"), ENOENT);
    CHECK_EQ(rename(D "/d/sub", D "/moved"), 0);
    struct stat st;
    CHECK_ERR(stat(D "/d/sub", &st), ENOENT);
    CHECK_EQ(stat(D "/moved", &st), 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK_EQ(rename(D "/e/x", D "/h"), 0);
    CHECK_EQ(rmdir(D "/e"), 0);
}

static void check_links(void)
{
    CHECK_EQ(link(D "/d/f", D "/d/g"), 0);
    struct stat st;
    CHECK_EQ(stat(D "/d/g", &st), 0);
    CHECK_EQ(st.st_nlink, 2);
    CHECK_ERR(link(D "/d", D "/dirlink"), EPERM);
    CHECK_ERR(link(D "/d/f", D "/d/g"), EEXIST);
    CHECK_EQ(unlink(D "/d/f"), 0);
    char buf[16] = {0};
    int fd = open(D "/d/g", O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 5 && memcmp(buf, "hello", 5) == 0);
    close(fd);
    CHECK_EQ(symlink("l2", D "/l1"), 0);
    CHECK_EQ(symlink("l1", D "/l2"), 0);
    CHECK_ERR(open(D "/l1", O_RDONLY), ELOOP);
    CHECK_ERR(stat(D "/l1", &st), ELOOP);
    CHECK_EQ(lstat(D "/l1", &st), 0);
    CHECK(S_ISLNK(st.st_mode) && st.st_size == 2);
    char target[16] = {0};
    CHECK_EQ(readlink(D "/l1", target, sizeof target), 2);
    CHECK(memcmp(target, "l2", 2) == 0);
    CHECK_ERR(readlink(D "/d/g", target, sizeof target), EINVAL);
    CHECK_ERR(symlink("x", D "/l1"), EEXIST);
    char name[300];
    memset(name, 'a', sizeof name);
    memcpy(name, "/tmp/", 5);
    name[5 + 256] = '\0'; /* a component of 256 bytes: one past NAME_MAX */
    CHECK_ERR(open(name, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
    CHECK_ERR(link("/proc/self/stat", D "/x"), EXDEV);
}

static void check_data(void)
{
    /* An unlinked file that is still open keeps its data until closed. */
    int fd = open(D "/open", O_CREAT | O_RDWR, 0600);
    CHECK(fd >= 0);
    CHECK_EQ(write(fd, "abc", 3), 3);
    CHECK_EQ(unlink(D "/open"), 0);
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK_EQ(st.st_nlink, 0);
    char buf[8] = {0};
    CHECK_EQ(pread(fd, buf, sizeof buf, 0), 3);
    close(fd);
    /* A file grown by truncate or by writing past its end reads as zeros
     * in the gap, and its memory goes back when it is unlinked. */
    long long before = vfs_bytes();
    fd = open(D "/big", O_CREAT | O_RDWR, 0600);
    CHECK(fd >= 0);
    CHECK_EQ(ftruncate(fd, 100000), 0);
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK_EQ(st.st_size, 100000);
    CHECK_EQ(pwrite(fd, "z", 1, 200000), 1);
    char mid[4] = {1, 1, 1, 1};
    CHECK_EQ(pread(fd, mid, sizeof mid, 150000), 4);
    CHECK(mid[0] == 0 && mid[3] == 0);
    CHECK_EQ(pread(fd, mid, 1, 200000), 1);
    CHECK_EQ(mid[0], 'z');
    CHECK_EQ(ftruncate(fd, 10), 0);
    CHECK_EQ(pread(fd, mid, sizeof mid, 100), 0);
    CHECK_ERR(ftruncate(fd, -1), EINVAL);
    close(fd);
    CHECK_EQ(unlink(D "/big"), 0);
    if (before >= 0)
        CHECK_MSG(vfs_bytes() == before, "an unlinked file's memory goes back");
    CHECK_ERR(truncate(D "/d", 0), EISDIR);
    /* /dev/full: zeros to read, ENOSPC to write; /dev/urandom: bytes. */
    fd = open("/dev/full", O_RDWR);
    CHECK(fd >= 0);
    CHECK_ERR(write(fd, "x", 1), ENOSPC);
    CHECK(read(fd, mid, sizeof mid) == 4 && mid[0] == 0);
    close(fd);
    fd = open("/dev/urandom", O_RDONLY);
    unsigned char r[64] = {0};
    CHECK_EQ(read(fd, r, sizeof r), 64);
    int nonzero = 0;
    for (unsigned i = 0; i < sizeof r; ++i)
        nonzero += r[i] != 0;
    CHECK_MSG(nonzero > 32, "/dev/urandom gives bytes that are not all zero");
    close(fd);
}

static void check_cwd(void)
{
    char cwd[64];
    CHECK_EQ(chdir(D "/moved"), 0);
    CHECK(getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, D "/moved") == 0);
    CHECK_ERR(getcwd(cwd, 4) == NULL ? -1 : 0, ERANGE);
    int fd = open("..", O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    CHECK_EQ(fchdir(fd), 0);
    close(fd);
    CHECK(getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, D) == 0);
    CHECK_ERR(chdir(D "/h"), ENOTDIR);
    CHECK_EQ(mkdir("rel", 0755), 0); /* relative to the working directory */
    struct stat st;
    CHECK_EQ(stat(D "/rel", &st), 0);
    CHECK_EQ(rmdir(D "/rel"), 0);
    CHECK_EQ(umask(077), 022);
    CHECK_EQ(umask(022), 077);
    CHECK_EQ(chdir("/"), 0);
}

int main(void)
{
    clean();
    CHECK_EQ(mkdir(D, 0755), 0);
    check_dirs();
    check_rename();
    check_links();
    check_data();
    check_cwd();
    clean();
    struct stat st;
    CHECK_ERR(stat(D, &st), ENOENT);
    return utest_done();
}
