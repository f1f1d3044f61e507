// /mnt: the mounted ext2 file system's Files, and the system calls on names
// and on the disk (mkdir, rmdir, unlink, link, symlink, readlink, rename,
// fsync, sync, ftruncate), in their i386 forms and arm64's *at forms.
#include "kernel/fs/mount.h"
#include "kernel/arch/disk.h"
#include "kernel/fs/ext2.h"
#include "kernel/kern/console.h"
#include "kernel/proc/process.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmalloc.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll::fs {
namespace {

Ext2Fs* g_fs;
constexpr size_t k_path_max = 512;
// Linux, include/uapi/asm-generic/fcntl.h: O_EXCL.
constexpr int k_o_excl = 0200;
constexpr int k_s_ifreg = 0100000, k_s_ifdir = 040000;

struct MountFile {
    uint32_t ino;
};

uint32_t ino_of(const sys::File& f)
{
    return static_cast<const MountFile*>(f.object)->ino;
}

long file_read(sys::File& f, uintptr_t buffer, size_t count)
{
    long n = ext2_read(*g_fs, ino_of(f), f.offset, buffer, count);
    if (n > 0)
        f.offset += static_cast<uint64_t>(n);
    return n;
}

long file_write(sys::File& f, uintptr_t buffer, size_t count)
{
    if (f.flags & sys::k_o_append) {
        Ext2Stat st;
        if (Errno e = ext2_stat(*g_fs, ino_of(f), &st); e != k_ok)
            return -e;
        f.offset = st.size;
    }
    long n = ext2_write(*g_fs, ino_of(f), f.offset, buffer, count);
    if (n > 0) {
        f.offset += static_cast<uint64_t>(n);
        if (f.offset > f.size)
            f.size = f.offset;
    }
    return n;
}

long dir_read(sys::File&, uintptr_t, size_t)
{
    return -k_eisdir;
}

long dir_write(sys::File&, uintptr_t, size_t)
{
    return -k_ebadf;
}

void release(sys::File& f)
{
    auto* mf = static_cast<MountFile*>(f.object);
    ext2_open_count(*g_fs, mf->ino, -1);
    destroy(mf);
}

const sys::FileOps k_file_ops = {file_read, file_write, nullptr, release, k_s_ifreg};
const sys::FileOps k_dir_ops = {dir_read, dir_write, nullptr, release, k_s_ifdir};

// The path inside the file system: what follows "/mnt".
const char* inner(const char* path)
{
    return path + sizeof k_mount_point - 1;
}

// Copies a user path and checks it lies under /mnt: the inner path, or an
// error (k_exdev-free: a path elsewhere is the ramdisk's, read-only: k_erofs).
Errno user_path(uintptr_t user, char* out, const char** in)
{
    if (Result<size_t> n = sys::copyinstr(out, user, k_path_max); !n)
        return n.error();
    if (out[0] == '\0')
        return k_enoent;
    if (out[0] != '/' && mount_cwd_on_disk()) {
        char* joined = static_cast<char*>(vm::kmalloc(k_path_max));
        if (!joined)
            return k_enomem;
        Errno e = mount_absolute(out, joined, k_path_max);
        if (e == k_ok)
            memcpy(out, joined, k_path_max);
        vm::kfree(joined);
        TRY(e);
    }
    if (!mount_owns(out))
        return k_erofs; // the rest of the tree is the read-only ramdisk
    *in = inner(out);
    return k_ok;
}

// Linux, include/uapi/linux/fcntl.h: AT_FDCWD and AT_REMOVEDIR.
constexpr int k_at_fdcwd = -100, k_at_removedir = 0x200;

Errno check_dirfd(uintptr_t dirfd)
{
    // Paths under /mnt are absolute: dirfd matters only for a relative one,
    // which user_path refuses anyway; any descriptor is accepted for an
    // absolute path, as Linux does.
    (void)dirfd;
    (void)k_at_fdcwd;
    return k_ok;
}

template <typename Op>
long one_path(uintptr_t user, Op&& op)
{
    char path[k_path_max];
    const char* in = nullptr;
    if (Errno e = user_path(user, path, &in); e != k_ok)
        return -e;
    return -op(in);
}

template <typename Op>
long two_paths(uintptr_t first, uintptr_t second, Op&& op)
{
    char a[k_path_max], b[k_path_max];
    const char *ia = nullptr, *ib = nullptr;
    if (Errno e = user_path(first, a, &ia); e != k_ok)
        return -e;
    if (Errno e = user_path(second, b, &ib); e != k_ok)
        return -e;
    return -op(ia, ib);
}

} // namespace

void mount_init()
{
    arch::disks_init();
    for (size_t i = 0; BlockDevice* d = block_device(i); ++i) {
        Result<Ext2Fs*> fs = ext2_mount(*d);
        if (fs) {
            g_fs = fs.value();
            kprintf("mounted %s (%s) on %s\n", d->name, ext2_journaled(*g_fs) ? "ext3" : "ext2",
                    k_mount_point);
            return;
        }
    }
}

void mount_sync()
{
    if (g_fs) {
        (void)ext2_sync(*g_fs); // the pages shared mappings changed, too
        (void)ext2_shutdown(*g_fs);
    }
}

bool mount_owns(const char* path)
{
    size_t n = sizeof k_mount_point - 1;
    return g_fs && strncmp(path, k_mount_point, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

Result<sys::FileRef> mount_open(const char* path, int flags, uint32_t mode)
{
    const char* in = inner(path);
    int access = flags & sys::k_o_accmode;
    proc::Process* p = proc::current_process();
    auto perms = static_cast<uint16_t>(mode & ~(p ? p->umask : 0u) & 07777);
    Result<uint32_t> ino = (flags & sys::k_o_creat)
                               ? ext2_create(*g_fs, in, perms, (flags & k_o_excl) != 0)
                               : ext2_lookup(*g_fs, in, true);
    if (!ino)
        return ino.error();
    Ext2Stat st;
    TRY(ext2_stat(*g_fs, ino.value(), &st));
    bool directory = (st.mode & 0170000) == static_cast<uint16_t>(k_s_ifdir);
    if (directory && (access != sys::k_o_rdonly || (flags & sys::k_o_trunc)))
        return k_eisdir;
    if (!directory && (flags & sys::k_o_directory))
        return k_enotdir;
    if (!directory && (flags & sys::k_o_trunc) && access != sys::k_o_rdonly) {
        TRY(ext2_truncate(*g_fs, ino.value(), 0));
        st.size = 0;
    }
    MountFile* mf = make<MountFile>();
    if (!mf)
        return k_enomem;
    mf->ino = ino.value();
    sys::FileRef f =
        sys::file_new(directory ? &k_dir_ops : &k_file_ops,
                      flags & (sys::k_o_accmode | sys::k_o_nonblock | sys::k_o_append));
    if (!f) {
        destroy(mf);
        return k_enomem;
    }
    f->object = mf;
    f->size = static_cast<size_t>(st.size);
    ext2_open_count(*g_fs, mf->ino, +1);
    return f;
}

bool mount_is_dir(const sys::File& file)
{
    return file.ops == &k_dir_ops;
}

long mount_getdents(sys::File& file, uintptr_t buffer, size_t count)
{
    return ext2_getdents(*g_fs, ino_of(file), &file.offset, buffer, count);
}

} // namespace toll::fs

namespace toll::fs {

using namespace toll::sys;

long mnt_mkdir(const SyscallArgs& a)
{
    return one_path(
        a.a[0], [&](const char* p) { return ext2_mkdir(*g_fs, p, static_cast<uint16_t>(a.a[1])); });
}

long mnt_mkdirat(const SyscallArgs& a)
{
    (void)check_dirfd(a.a[0]);
    return one_path(
        a.a[1], [&](const char* p) { return ext2_mkdir(*g_fs, p, static_cast<uint16_t>(a.a[2])); });
}

long mnt_rmdir(const SyscallArgs& a)
{
    return one_path(a.a[0], [](const char* p) { return ext2_rmdir(*g_fs, p); });
}

long mnt_unlink(const SyscallArgs& a)
{
    return one_path(a.a[0], [](const char* p) { return ext2_unlink(*g_fs, p); });
}

long mnt_unlinkat(const SyscallArgs& a)
{
    if (a.a[2] & ~uintptr_t(k_at_removedir))
        return -k_einval;
    bool dir = a.a[2] & k_at_removedir;
    return one_path(a.a[1], [dir](const char* p) {
        return dir ? ext2_rmdir(*g_fs, p) : ext2_unlink(*g_fs, p);
    });
}

long mnt_link(const SyscallArgs& a)
{
    return two_paths(a.a[0], a.a[1],
                     [](const char* x, const char* y) { return ext2_link(*g_fs, x, y); });
}

long mnt_linkat(const SyscallArgs& a)
{
    return two_paths(a.a[1], a.a[3],
                     [](const char* x, const char* y) { return ext2_link(*g_fs, x, y); });
}

long mnt_rename(const SyscallArgs& a)
{
    return two_paths(a.a[0], a.a[1],
                     [](const char* x, const char* y) { return ext2_rename(*g_fs, x, y); });
}

long mnt_renameat(const SyscallArgs& a)
{
    return two_paths(a.a[1], a.a[3],
                     [](const char* x, const char* y) { return ext2_rename(*g_fs, x, y); });
}

namespace {
// symlink(target, path): the target is any string, not a path under /mnt.
long symlink_common(uintptr_t target, uintptr_t path)
{
    char t[k_path_max];
    if (Result<size_t> n = copyinstr(t, target, sizeof t); !n)
        return -n.error();
    return one_path(path, [&](const char* p) { return ext2_symlink(*g_fs, t, p); });
}

long readlink_common(uintptr_t path, uintptr_t buffer, uintptr_t size)
{
    if (static_cast<long>(size) <= 0)
        return -k_einval;
    char p[k_path_max];
    const char* in = nullptr;
    if (Errno e = user_path(path, p, &in); e != k_ok)
        return -(e == k_erofs ? k_einval : e);
    return ext2_readlink(*g_fs, in, buffer, size);
}

// The mounted File behind descriptor @p fd: k_ebadf if none, k_einval for
// a File of another kind (a pipe, the console: nothing to sync).
Errno mounted_fd(uintptr_t fd, File** out)
{
    File* f = fd_get(static_cast<int>(fd));
    if (!f)
        return k_ebadf;
    if (f->ops != &k_file_ops && f->ops != &k_dir_ops)
        return k_einval;
    *out = f;
    return k_ok;
}
} // namespace

long mnt_symlink(const SyscallArgs& a)
{
    return symlink_common(a.a[0], a.a[1]);
}

long mnt_symlinkat(const SyscallArgs& a)
{
    return symlink_common(a.a[0], a.a[2]);
}

long mnt_readlink(const SyscallArgs& a)
{
    return readlink_common(a.a[0], a.a[1], a.a[2]);
}

long mnt_readlinkat(const SyscallArgs& a)
{
    return readlink_common(a.a[1], a.a[2], a.a[3]);
}

long mnt_fsync(const SyscallArgs& a)
{
    File* f = nullptr;
    if (Errno e = mounted_fd(a.a[0], &f); e != k_ok)
        return -e;
    return -ext2_sync(*g_fs);
}

long mnt_sync(const SyscallArgs&)
{
    if (g_fs)
        (void)ext2_sync(*g_fs);
    return 0;
}

long mnt_ftruncate(const SyscallArgs& a)
{
    File* f = nullptr;
    if (Errno e = mounted_fd(a.a[0], &f); e != k_ok)
        return -e;
    if (f->ops != &k_file_ops || (f->flags & k_o_accmode) == k_o_rdonly)
        return -k_einval;
    if (static_cast<long>(a.a[1]) < 0)
        return -k_einval;
    if (Errno e = ext2_truncate(*g_fs, ino_of(*f), a.a[1]); e != k_ok)
        return -e;
    f->size = a.a[1];
    return 0;
}

Result<vm::VmObject*> mount_map_fd(int fd, uint64_t first_page, size_t count, bool shared,
                                   bool writable)
{
    File* f = fd_get(fd);
    if (!f)
        return k_ebadf;
    if (!g_fs || (f->ops != &k_file_ops && f->ops != &k_dir_ops))
        return k_enodev;
    if (f->ops == &k_dir_ops)
        return k_enodev; // as Linux: a directory has no mmap
    int access = f->flags & k_o_accmode;
    if (access == k_o_wronly || (shared && writable && access != k_o_rdwr))
        return k_eacces;
    return ext2_object(*g_fs, ino_of(*f), first_page, count, shared && writable);
}

Result<vm::VmObject*> mount_exec_object(const char* path, uint64_t* size)
{
    Result<uint32_t> ino = ext2_lookup(*g_fs, inner(path), true);
    if (!ino)
        return ino.error();
    Ext2Stat st;
    TRY(ext2_stat(*g_fs, ino.value(), &st));
    if ((st.mode & 0170000) != k_s_ifreg || !(st.mode & 0111))
        return k_eacces;
    *size = st.size;
    size_t pages = static_cast<size_t>((st.size + arch::k_page_size - 1) / arch::k_page_size);
    return ext2_object(*g_fs, ino.value(), 0, pages, false);
}

namespace {
// Made-up device number of the disk (the tree's are 1 to 3, sys_stat.cpp).
constexpr uint64_t k_dev_disk = 4;
// Linux, include/uapi/linux/magic.h: EXT2_SUPER_MAGIC (ext3's too).
constexpr uint64_t k_ext2_magic = 0xEF53;
constexpr uint64_t k_ext2_name_max = 255;

Errno stat_ino(uint32_t ino, FileStat* out)
{
    Ext2Stat st;
    TRY(ext2_stat(*g_fs, ino, &st));
    *out = FileStat{};
    out->dev = k_dev_disk;
    out->ino = st.ino;
    out->mode = st.mode;
    out->nlink = st.links;
    out->size = static_cast<int64_t>(st.size);
    out->blksize = arch::k_page_size; // what the page cache moves
    out->blocks = st.blocks;
    out->atime.seconds = st.atime;
    out->mtime.seconds = st.mtime;
    out->ctime.seconds = st.ctime;
    return k_ok;
}
} // namespace

Errno mount_stat_path(const char* path, bool follow, FileStat* out)
{
    Result<uint32_t> ino = ext2_lookup(*g_fs, inner(path), follow);
    if (!ino)
        return ino.error();
    return stat_ino(ino.value(), out);
}

Errno mount_stat_fd(int fd, FileStat* out)
{
    File* f = nullptr;
    TRY(mounted_fd(static_cast<uintptr_t>(fd), &f));
    return stat_ino(ino_of(*f), out);
}

void mount_statfs(FsStat* out)
{
    Ext2FsStat st;
    ext2_statfs(*g_fs, &st);
    *out = FsStat{};
    out->type = k_ext2_magic;
    out->bsize = out->frsize = st.block_size;
    out->blocks = st.blocks;
    out->bfree = st.free_blocks;
    out->bavail = st.free_blocks > st.reserved_blocks ? st.free_blocks - st.reserved_blocks : 0;
    out->files = st.inodes;
    out->ffree = st.free_inodes;
    out->namelen = k_ext2_name_max;
}

size_t mount_describe(char* out, size_t size)
{
    if (!g_fs || size == 0)
        return 0;
    BlockDevice* d = nullptr;
    for (size_t i = 0; (d = block_device(i)); ++i)
        if (d == ext2_device(*g_fs))
            break;
    return lib::snformat(out, size, "/dev/%s %s %s rw 0 0\n", d ? d->name : "disk", k_mount_point,
                         ext2_journaled(*g_fs) ? "ext3" : "ext2");
}

bool mount_claims_path(uintptr_t user)
{
    if (!g_fs)
        return false;
    char path[k_path_max];
    if (Result<size_t> n = copyinstr(path, user, k_path_max); !n)
        return false; // the file tree's own call gives the error
    return mount_owns(path) || (path[0] && path[0] != '/' && mount_cwd_on_disk());
}

bool mount_cwd_on_disk()
{
    proc::Process* p = proc::current_process();
    return g_fs && p && p->disk_cwd[0];
}

Errno mount_absolute(const char* path, char* out, size_t size)
{
    const char* cwd = path[0] == '/' ? "" : proc::current_process()->disk_cwd;
    size_t n = lib::snformat(out, size, "%s%s%s", cwd, *cwd ? "/" : "", path);
    return n + 1 > size ? k_enametoolong : k_ok;
}

Result<sys::FileRef> mount_open_at_cwd(const char* path, int flags, uint32_t mode)
{
    char* joined = static_cast<char*>(vm::kmalloc(k_path_max));
    if (!joined)
        return k_enomem;
    Errno e = mount_absolute(path, joined, k_path_max);
    Result<sys::FileRef> f = e == k_ok ? mount_open(joined, flags, mode) : Result<FileRef>(e);
    vm::kfree(joined);
    return f;
}

namespace {
// Rewrites absolute path @p path in place without "." and ".." components
// and repeated slashes; ".." of /mnt stays at /mnt (the disk's root is its
// own parent: the tree above is not reachable through the disk).
void normalize(char* path)
{
    size_t root = sizeof k_mount_point - 1, out = root;
    const char* in = path + root;
    while (*in) {
        while (*in == '/')
            ++in;
        const char* end = in;
        while (*end && *end != '/')
            ++end;
        size_t n = static_cast<size_t>(end - in);
        if (n == 1 && in[0] == '.') {
        } else if (n == 2 && in[0] == '.' && in[1] == '.') {
            while (out > root && path[out - 1] != '/')
                --out;
            if (out > root)
                --out;
        } else if (n) {
            path[out++] = '/';
            memmove(path + out, in, n);
            out += n;
        }
        in = end;
    }
    path[out] = '\0';
}
} // namespace

long mnt_chdir(const SyscallArgs& a)
{
    char* path = static_cast<char*>(vm::kmalloc(k_path_max));
    if (!path)
        return -k_enomem;
    const char* in = nullptr;
    Errno e = user_path(a.a[0], path, &in);
    Result<uint32_t> ino = e == k_ok ? ext2_lookup(*g_fs, in, true) : Result<uint32_t>(e);
    Ext2Stat st;
    if (ino)
        e = ext2_stat(*g_fs, ino.value(), &st);
    else
        e = ino.error();
    if (e == k_ok && (st.mode & 0170000) != k_s_ifdir)
        e = k_enotdir;
    proc::Process* p = proc::current_process();
    if (e == k_ok) {
        normalize(path);
        if (strlen(path) + 1 > sizeof p->disk_cwd)
            e = k_enametoolong;
        else
            memcpy(p->disk_cwd, path, strlen(path) + 1);
    }
    vm::kfree(path);
    return -e;
}

long mnt_faccessat2(const SyscallArgs& a)
{
    constexpr uintptr_t k_x_ok = 1, k_at_symlink_nofollow = 0x100;
    bool follow = !(a.a[3] & k_at_symlink_nofollow);
    return one_path(a.a[1], [&](const char* p) {
        Result<uint32_t> ino = ext2_lookup(*g_fs, p, follow);
        if (!ino)
            return ino.error();
        Ext2Stat st;
        TRY(ext2_stat(*g_fs, ino.value(), &st));
        // As for the tree: Toll's one user is root, who may read and
        // write anything and execute what has an x bit (or a directory).
        if ((a.a[2] & k_x_ok) && (st.mode & 0170000) != k_s_ifdir && !(st.mode & 0111))
            return k_eacces;
        return k_ok;
    });
}

long mnt_getcwd(const SyscallArgs& a)
{
    const char* cwd = proc::current_process()->disk_cwd;
    size_t n = strlen(cwd) + 1;
    if (n > a.a[1])
        return -k_erange;
    if (Errno e = copyout(a.a[0], cwd, n); e != k_ok)
        return -e;
    return static_cast<long>(n);
}

bool mount_claims_fd(uintptr_t fd)
{
    File* f = nullptr;
    return g_fs && mounted_fd(fd, &f) == k_ok;
}

} // namespace toll::fs
