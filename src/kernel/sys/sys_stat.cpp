// The stat family: what a node (or an open file that is no node) reports,
// statx (one layout on every port), and statfs's numbers. The ports lay
// out their own struct stat and struct statfs from FileStat and FsStat.
#include "kernel/fs/mount.h"
#include "kernel/proc/process.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/phys.h"

namespace toll::sys {
namespace {

// Linux, include/uapi/linux/fcntl.h.
constexpr int k_at_fdcwd = -100;
constexpr uintptr_t k_at_symlink_nofollow = 0x100, k_at_no_automount = 0x800,
                    k_at_empty_path = 0x1000, k_at_statx_sync_type = 0x6000;
// Linux, include/uapi/linux/magic.h: TMPFS_MAGIC and PROC_SUPER_MAGIC.
constexpr uint64_t k_tmpfs_magic = 0x01021994, k_proc_magic = 0x9fa0;
// Made-up device numbers: the tree (1), /proc (2), the rest (3).
constexpr uint64_t k_dev_tree = 1, k_dev_proc = 2, k_dev_other = 3;
constexpr uint32_t k_block_size = 4096;

void fill(const Node* n, FileStat* out)
{
    out->dev = n->proc != ProcKind::none ? k_dev_proc : k_dev_tree;
    out->ino = n->ino;
    out->mode = n->mode;
    out->nlink = (n->mode & k_s_ifmt) == k_s_ifdir ? 2 + n->subdirs : n->links;
    if (n->proc != ProcKind::none)
        out->nlink = 1;
    out->uid = n->uid;
    out->gid = n->gid;
    out->size = static_cast<int64_t>(n->size);
    out->blksize = k_block_size;
    out->blocks = (n->capacity + 511) / 512;
    out->atime = n->atime;
    out->mtime = n->mtime;
    out->ctime = n->ctime;
}

// Linux, include/uapi/linux/stat.h: struct statx.
struct StatxTimestamp {
    int64_t seconds;
    uint32_t nanoseconds;
    int32_t reserved;
};
struct Statx {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, spare0;
    uint64_t ino, size, blocks, attributes_mask;
    StatxTimestamp atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t mnt_id, spare2, spare3[12];
};
static_assert(sizeof(Statx) == 256, "Linux's struct statx is 256 bytes");
// STATX_BASIC_STATS: type, mode, nlink, uid, gid, atime, mtime, ctime,
// ino, size, blocks; STATX__RESERVED must be clear.
constexpr uint32_t k_statx_basic = 0x7ff, k_statx_reserved = 0x80000000u;

StatxTimestamp stamp(const Timestamp& t)
{
    return StatxTimestamp{t.seconds, t.nanoseconds, 0};
}

} // namespace

Errno stat_fd(uintptr_t fd, FileStat* out)
{
    File* f = fd_get(static_cast<int>(fd));
    if (!f)
        return k_ebadf;
    if (Node* n = file_node(*f)) {
        fill(n, out);
        return k_ok;
    }
    if (fs::mount_claims_fd(fd))
        return fs::mount_stat_fd(static_cast<int>(fd), out);
    // A pipe, or a device opened at boot: its type and a made-up number.
    *out = FileStat{};
    out->dev = k_dev_other;
    out->ino = file_made_up_ino(*f);
    out->mode = static_cast<uint32_t>(f->ops->mode) | 0600;
    out->nlink = 1;
    out->blksize = k_block_size;
    return k_ok;
}

Errno stat_at(uintptr_t dirfd, uintptr_t user_path, uintptr_t flags, FileStat* out)
{
    if (flags &
        ~(k_at_symlink_nofollow | k_at_no_automount | k_at_empty_path | k_at_statx_sync_type))
        return k_einval;
    char* path = static_cast<char*>(vm::kmalloc(k_path_max));
    if (!path)
        return k_enomem;
    Errno e = k_ok;
    bool by_fd = false;
    if (Result<size_t> n = copyinstr(path, user_path, k_path_max); !n)
        e = n.error();
    else if (!*path && (flags & k_at_empty_path) && static_cast<int>(dirfd) != k_at_fdcwd)
        by_fd = true;
    Node* base = nullptr;
    if (e == k_ok && !by_fd && static_cast<int>(dirfd) != k_at_fdcwd && path[0] != '/') {
        File* f = fd_get(static_cast<int>(dirfd));
        base = f ? file_node(*f) : nullptr;
        if (!f)
            e = k_ebadf;
        else if (!base || (base->mode & k_s_ifmt) != k_s_ifdir)
            e = k_enotdir;
    }
    if (e == k_ok && by_fd) {
        e = stat_fd(dirfd, out);
    } else if (e == k_ok) {
        // AT_EMPTY_PATH with AT_FDCWD: the working directory.
        const char* what = *path || !(flags & k_at_empty_path) ? path : ".";
        bool on_disk =
            what[0] == '/' ? fs::mount_owns(what) : !base && fs::mount_cwd_on_disk() && *path;
        if (on_disk) {
            char* full = static_cast<char*>(vm::kmalloc(k_path_max));
            e = full ? fs::mount_absolute(what, full, k_path_max) : k_enomem;
            if (e == k_ok)
                e = fs::mount_stat_path(full, !(flags & k_at_symlink_nofollow), out);
            vm::kfree(full);
            vm::kfree(path);
            return e;
        }
        Result<NodeRef> n = vfs_lookup(base, what, (flags & k_at_symlink_nofollow) ? 0 : k_follow);
        if (n)
            fill(n.value().get(), out);
        else
            e = n.error();
    }
    vm::kfree(path);
    return e;
}

long sys_statx(const SyscallArgs& a)
{
    // statx(dirfd, path, flags, mask, buffer)
    if (a.a[3] & k_statx_reserved)
        return -k_einval;
    FileStat st;
    if (Errno e = stat_at(a.a[0], a.a[1], a.a[2], &st); e != k_ok)
        return -e;
    Statx x{};
    x.mask = k_statx_basic;
    x.blksize = st.blksize;
    x.nlink = st.nlink;
    x.uid = st.uid;
    x.gid = st.gid;
    x.mode = static_cast<uint16_t>(st.mode);
    x.ino = st.ino;
    x.size = static_cast<uint64_t>(st.size);
    x.blocks = st.blocks;
    x.atime = stamp(st.atime);
    x.mtime = stamp(st.mtime);
    x.ctime = stamp(st.ctime);
    x.dev_minor = static_cast<uint32_t>(st.dev);
    return -copyout(a.a[4], &x, sizeof x);
}

Errno statfs_of(uintptr_t user_path, long fd, FsStat* out)
{
    bool proc = false;
    if (fd >= 0) {
        File* f = fd_get(static_cast<int>(fd));
        if (!f)
            return k_ebadf;
        if (fs::mount_claims_fd(static_cast<uintptr_t>(fd))) {
            fs::mount_statfs(out);
            return k_ok;
        }
        Node* n = file_node(*f);
        proc = n && n->proc != ProcKind::none;
    } else {
        char* path = static_cast<char*>(vm::kmalloc(k_path_max));
        if (!path)
            return k_enomem;
        Errno e = k_ok;
        if (Result<size_t> n = copyinstr(path, user_path, k_path_max); !n)
            e = n.error();
        if (e == k_ok && path[0] == '/' && fs::mount_owns(path)) {
            FileStat st;
            e = fs::mount_stat_path(path, true, &st);
            vm::kfree(path);
            if (e != k_ok)
                return e;
            fs::mount_statfs(out);
            return k_ok;
        }
        if (e == k_ok) {
            Result<NodeRef> n = vfs_lookup(nullptr, path, k_follow);
            if (n)
                proc = n.value()->proc != ProcKind::none;
            else
                e = n.error();
        }
        vm::kfree(path);
        if (e != k_ok)
            return e;
    }
    *out = FsStat{};
    out->type = proc ? k_proc_magic : k_tmpfs_magic;
    out->bsize = out->frsize = k_block_size;
    out->namelen = k_name_max;
    if (!proc) {
        // The tree lives in memory: its size is the machine's, its use the
        // bytes its files hold (as tmpfs reports).
        vm::PhysAllocator& phys = vm::phys_allocator();
        uint64_t page_blocks = vm::k_page_size / k_block_size;
        uint64_t used = (vfs_bytes_used() + k_block_size - 1) / k_block_size;
        out->blocks = phys.total_pages() * page_blocks;
        out->bfree = out->bavail = phys.free_pages() * page_blocks;
        if (out->blocks < used + out->bfree)
            out->blocks = used + out->bfree;
        out->files = out->blocks;
        out->ffree = out->bfree;
    }
    return k_ok;
}

} // namespace toll::sys
