// System calls on names of the file tree: open and the *at family (mkdir,
// unlink, rename, link, symlink, readlink, chmod, chown, utimensat), the
// working directory, umask, truncate. Each checks its arguments in Linux's
// order and returns Linux's errors.
#include "kernel/fs/mount.h"
#include "kernel/proc/process.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

// Linux, include/uapi/linux/fcntl.h.
constexpr int k_at_fdcwd = -100;
constexpr uintptr_t k_at_symlink_nofollow = 0x100, k_at_removedir = 0x200,
                    k_at_symlink_follow = 0x400, k_at_empty_path = 0x1000;
constexpr int k_o_excl = 0200, k_o_nofollow = 0400000;
// Linux, include/uapi/linux/fs.h: renameat2's flags.
constexpr uintptr_t k_rename_noreplace = 1, k_rename_exchange = 2;

/// A path copied in from user memory into a kernel buffer of PATH_MAX.
class UserPath {
  public:
    explicit UserPath(uintptr_t user)
    {
        m_path = static_cast<char*>(vm::kmalloc(k_path_max));
        if (!m_path) {
            m_error = k_enomem;
            return;
        }
        Result<size_t> n = copyinstr(m_path, user, k_path_max);
        m_error = n ? k_ok : n.error();
    }
    ~UserPath() { vm::kfree(m_path); }
    UserPath(const UserPath&) = delete;
    UserPath& operator=(const UserPath&) = delete;
    Errno error() const { return m_error; }
    const char* get() const { return m_path; }

  private:
    char* m_path = nullptr;
    Errno m_error = k_ok;
};

// The directory @p dirfd names for an *at call on @p path: nullptr (the
// working directory) for AT_FDCWD or an absolute path; k_ebadf, k_enotdir.
Result<Node*> at_base(uintptr_t dirfd, const char* path)
{
    // dirfd is an int: only its low 32 bits count.
    if (static_cast<int>(dirfd) == k_at_fdcwd || path[0] == '/')
        return static_cast<Node*>(nullptr);
    File* f = fd_get(static_cast<int>(dirfd));
    if (!f)
        return k_ebadf;
    Node* n = file_node(*f);
    if (!n || (n->mode & k_s_ifmt) != k_s_ifdir)
        return k_enotdir;
    return n;
}

bool is_dir(const Node* n)
{
    return (n->mode & k_s_ifmt) == k_s_ifdir;
}

uint32_t current_umask()
{
    proc::Process* p = proc::current_process();
    return p ? p->umask : 022;
}

long install(FileRef file, bool cloexec)
{
    proc::Process* p = proc::current_process();
    Result<int> fd = fd_install(p, file);
    if (!fd)
        return -fd.error();
    if (cloexec)
        fd_set_cloexec(p, fd.value(), true);
    return fd.value();
}

// Looks @p path up for a call on the node itself: @p flags may hold
// AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH (then @p dirfd is the file).
Result<NodeRef> lookup_at(uintptr_t dirfd, const char* path, uintptr_t flags, bool follow)
{
    if (!*path && (flags & k_at_empty_path)) {
        if (static_cast<int>(dirfd) == k_at_fdcwd) {
            proc::Process* p = proc::current_process();
            return NodeRef{p && p->cwd ? p->cwd.get() : vfs_root()};
        }
        File* f = fd_get(static_cast<int>(dirfd));
        if (!f)
            return k_ebadf;
        Node* n = file_node(*f);
        if (!n)
            return k_ebadf; // a pipe or the boot console: fstat's own
        return NodeRef{n};
    }
    Result<Node*> base = at_base(dirfd, path);
    if (!base)
        return base.error();
    return vfs_lookup(base.value(), path, follow ? k_follow : 0);
}

// Where a new name goes: its directory (writable) and the name's last
// component, which must not exist yet (k_eexist, as for "/" itself).
struct NewName {
    NodeRef dir;
    const char* name;
    size_t length;
};

Result<NewName> new_name_at(uintptr_t dirfd, const char* path)
{
    Node* base = TRY(at_base(dirfd, path));
    const char* name;
    size_t length;
    NodeRef dir = TRY(vfs_parent(base, path, &name, &length));
    if (length == 0 || dir_find(dir.get(), name, length))
        return k_eexist;
    TRY(dir_writable(dir.get()));
    return NewName{static_cast<NodeRef&&>(dir), name, length};
}

long do_mkdir(uintptr_t dirfd, uintptr_t user_path, uintptr_t mode)
{
    UserPath path(user_path);
    if (path.error() != k_ok)
        return -path.error();
    Result<NewName> place = new_name_at(dirfd, path.get());
    if (!place)
        return -place.error();
    const NewName& at = place.value();
    NodeRef made = node_new(k_s_ifdir | (static_cast<uint32_t>(mode) & 07777 & ~current_umask()));
    if (!made)
        return -k_enomem;
    return -dir_link(at.dir.get(), at.name, at.length, made.get());
}

long do_unlink(uintptr_t dirfd, uintptr_t user_path, uintptr_t flags)
{
    if (flags & ~k_at_removedir)
        return -k_einval;
    UserPath path(user_path);
    if (path.error() != k_ok)
        return -path.error();
    Result<Node*> base = at_base(dirfd, path.get());
    if (!base)
        return -base.error();
    const char* name;
    size_t length;
    Result<NodeRef> dir = vfs_parent(base.value(), path.get(), &name, &length);
    if (!dir)
        return -dir.error();
    bool removedir = flags & k_at_removedir;
    if (length == 0)
        return removedir ? -k_ebusy : -k_eisdir; // "/"
    if (removedir && length == 1 && name[0] == '.')
        return -k_einval;
    if (removedir && length == 2 && name[0] == '.' && name[1] == '.')
        return -k_enotempty;
    NodeRef victim = dir_find(dir.value().get(), name, length);
    if (!victim)
        return -k_enoent;
    if (Errno e = dir_writable(dir.value().get()); e != k_ok)
        return -e;
    // unlink's trailing slash ("file/") and a directory: Linux says EISDIR
    // for unlink of a directory, ENOTDIR for rmdir of a file.
    if (removedir) {
        if (!is_dir(victim.get()))
            return -k_enotdir;
        if (victim->entries)
            return -k_enotempty;
        if (victim.get() == vfs_root())
            return -k_ebusy;
    } else if (is_dir(victim.get())) {
        return -k_eisdir;
    } else if (name[length] == '/') {
        return -k_enotdir;
    }
    dir_unlink(dir.value().get(), name, length);
    return 0;
}

// Is @p node @p dir or one of its ancestors? (rename may not move a
// directory into itself.)
bool is_ancestor(const Node* node, const Node* dir)
{
    for (const Node* d = dir; d; d = d->parent) {
        if (d == node)
            return true;
        if (d == vfs_root())
            break;
    }
    return false;
}

long do_rename(uintptr_t olddfd, uintptr_t old_user, uintptr_t newdfd, uintptr_t new_user,
               uintptr_t flags)
{
    if (flags & ~(k_rename_noreplace | k_rename_exchange))
        return -k_einval;
    if ((flags & k_rename_noreplace) && (flags & k_rename_exchange))
        return -k_einval;
    if (flags & k_rename_exchange)
        return -k_einval; // Toll's tmpfs does not exchange (Linux's ramfs neither)
    UserPath from(old_user), to(new_user);
    if (from.error() != k_ok)
        return -from.error();
    if (to.error() != k_ok)
        return -to.error();
    Result<Node*> from_base = at_base(olddfd, from.get());
    if (!from_base)
        return -from_base.error();
    Result<Node*> to_base = at_base(newdfd, to.get());
    if (!to_base)
        return -to_base.error();
    const char *from_name, *to_name;
    size_t from_length, to_length;
    Result<NodeRef> from_dir = vfs_parent(from_base.value(), from.get(), &from_name, &from_length);
    if (!from_dir)
        return -from_dir.error();
    Result<NodeRef> to_dir = vfs_parent(to_base.value(), to.get(), &to_name, &to_length);
    if (!to_dir)
        return -to_dir.error();
    Node* fd = from_dir.value().get();
    Node* td = to_dir.value().get();
    if (from_length == 0 || to_length == 0)
        return -k_ebusy;
    auto dots = [](const char* n, size_t l) {
        return (l == 1 && n[0] == '.') || (l == 2 && n[0] == '.' && n[1] == '.');
    };
    if (dots(from_name, from_length) || dots(to_name, to_length))
        return -k_ebusy;
    NodeRef moving = dir_find(fd, from_name, from_length);
    if (!moving)
        return -k_enoent;
    if (Errno e = dir_writable(fd); e != k_ok)
        return -e;
    if (Errno e = dir_writable(td); e != k_ok)
        return -e;
    if (fd->proc != td->proc)
        return -k_exdev;
    bool moving_dir = is_dir(moving.get());
    if (!moving_dir && (from_name[from_length] == '/' || to_name[to_length] == '/'))
        return -k_enotdir;
    if (moving_dir && is_ancestor(moving.get(), td))
        return -k_einval; // a directory into itself or below
    NodeRef there = dir_find(td, to_name, to_length);
    if (there) {
        if (there.get() == moving.get())
            return 0; // two names of one file: nothing to do (POSIX)
        if (flags & k_rename_noreplace)
            return -k_eexist;
        if (moving_dir && !is_dir(there.get()))
            return -k_enotdir;
        if (!moving_dir && is_dir(there.get()))
            return -k_eisdir;
        if (is_dir(there.get()) && there->entries)
            return -k_enotempty;
        dir_unlink(td, to_name, to_length);
    }
    // lock: vfs (held across the two steps, so nobody sees both names or none)
    if (Errno e = dir_link(td, to_name, to_length, moving.get()); e != k_ok)
        return -e;
    dir_unlink(fd, from_name, from_length);
    if (moving_dir)
        moving->parent = td;
    return 0;
}

long do_link(uintptr_t olddfd, uintptr_t old_user, uintptr_t newdfd, uintptr_t new_user,
             uintptr_t flags)
{
    if (flags & ~(k_at_symlink_follow | k_at_empty_path))
        return -k_einval;
    UserPath from(old_user), to(new_user);
    if (from.error() != k_ok)
        return -from.error();
    if (to.error() != k_ok)
        return -to.error();
    Result<NodeRef> target = lookup_at(olddfd, from.get(), flags, flags & k_at_symlink_follow);
    if (!target)
        return -target.error();
    if (is_dir(target.value().get()))
        return -k_eperm; // Linux: no hard links to directories
    Result<NewName> place = new_name_at(newdfd, to.get());
    if (!place)
        return -place.error();
    const NewName& at = place.value();
    if (target.value()->proc != ProcKind::none)
        return -k_exdev;
    return -dir_link(at.dir.get(), at.name, at.length, target.value().get());
}

long do_symlink(uintptr_t target_user, uintptr_t newdfd, uintptr_t link_user)
{
    UserPath target(target_user), link(link_user);
    if (target.error() != k_ok)
        return -target.error();
    if (link.error() != k_ok)
        return -link.error();
    if (!*target.get())
        return -k_enoent;
    Result<NewName> place = new_name_at(newdfd, link.get());
    if (!place)
        return -place.error();
    const NewName& at = place.value();
    NodeRef made = node_new(k_s_iflnk | 0777);
    size_t n = strlen(target.get());
    if (!made || node_truncate(made.get(), n) != k_ok)
        return -k_enomem;
    memcpy(made->data, target.get(), n);
    return -dir_link(at.dir.get(), at.name, at.length, made.get());
}

long do_readlink(uintptr_t dirfd, uintptr_t user_path, uintptr_t buffer, uintptr_t size)
{
    if (static_cast<int>(size) <= 0)
        return -k_einval;
    UserPath path(user_path);
    if (path.error() != k_ok)
        return -path.error();
    Result<NodeRef> n = lookup_at(dirfd, path.get(), 0, false);
    if (!n)
        return -n.error();
    if ((n.value()->mode & k_s_ifmt) != k_s_iflnk)
        return -k_einval;
    size_t length = static_cast<size_t>(n.value()->size);
    if (length > size)
        length = size;
    if (Errno e = copyout(buffer, node_bytes(n.value().get()), length); e != k_ok)
        return -e;
    return static_cast<long>(length);
}

long do_chmod(const NodeRef& n, uintptr_t mode)
{
    if (n->proc != ProcKind::none)
        return -k_eperm;
    n->mode = (n->mode & k_s_ifmt) | (static_cast<uint32_t>(mode) & k_s_perm);
    node_touch(n.get(), false);
    return 0;
}

long do_chown(const NodeRef& n, uintptr_t uid, uintptr_t gid)
{
    if (n->proc != ProcKind::none)
        return -k_eperm;
    // -1 (as a 32-bit id) leaves that id as it is.
    if (static_cast<uint32_t>(uid) != ~0u)
        n->uid = static_cast<uint32_t>(uid);
    if (static_cast<uint32_t>(gid) != ~0u)
        n->gid = static_cast<uint32_t>(gid);
    node_touch(n.get(), false);
    return 0;
}

Result<NodeRef> fd_node(uintptr_t fd)
{
    File* f = fd_get(static_cast<int>(fd));
    if (!f)
        return k_ebadf;
    Node* n = file_node(*f);
    if (!n)
        return k_einval;
    return NodeRef{n};
}

// utimensat with the times at @p times in @p read_time's layout.
long do_utimens(uintptr_t dirfd, uintptr_t user_path, uintptr_t times, uintptr_t flags, bool wide)
{
    // Linux, include/uapi/linux/stat.h: UTIME_NOW and UTIME_OMIT.
    constexpr int64_t k_utime_now = (1l << 30) - 1, k_utime_omit = (1l << 30) - 2;
    constexpr int64_t k_ns_per_s = 1000000000;
    if (flags & ~(k_at_symlink_nofollow | k_at_empty_path))
        return -k_einval;
    Timestamp now = vfs_now();
    Timestamp stamp[2] = {now, now};
    bool omit[2] = {false, false};
    if (times) {
        for (int i = 0; i < 2; ++i) {
            int64_t s, ns;
            if (wide) {
                int64_t ts[2];
                if (Errno e = copyin(ts, times + i * sizeof ts, sizeof ts); e != k_ok)
                    return -e;
                s = ts[0];
                ns = ts[1];
            } else {
                long ts[2];
                if (Errno e = copyin(ts, times + i * sizeof ts, sizeof ts); e != k_ok)
                    return -e;
                s = ts[0];
                ns = ts[1];
            }
            if (ns == k_utime_omit)
                omit[i] = true;
            else if (ns == k_utime_now)
                stamp[i] = now;
            else if (ns < 0 || ns >= k_ns_per_s)
                return -k_einval;
            else
                stamp[i] = Timestamp{s, static_cast<uint32_t>(ns)};
        }
    }
    Result<NodeRef> n = k_enoent;
    if (!user_path) {
        // glibc's futimens: a null path means dirfd itself.
        n = fd_node(dirfd);
    } else {
        UserPath path(user_path);
        if (path.error() != k_ok)
            return -path.error();
        n = lookup_at(dirfd, path.get(), flags, !(flags & k_at_symlink_nofollow));
    }
    if (!n)
        return -n.error();
    Node* node = n.value().get();
    if (!omit[0])
        node->atime = stamp[0];
    if (!omit[1])
        node->mtime = stamp[1];
    node->ctime = now;
    return 0;
}

long do_truncate(Node* n, int64_t length)
{
    if (length < 0)
        return -k_einval;
    if (is_dir(n))
        return -k_eisdir;
    if ((n->mode & k_s_ifmt) != k_s_ifreg || n->proc != ProcKind::none)
        return -k_einval;
    return -node_truncate(n, static_cast<uint64_t>(length));
}

long truncate_path(uintptr_t user_path, int64_t length)
{
    UserPath path(user_path);
    if (path.error() != k_ok)
        return -path.error();
    Result<NodeRef> n = vfs_lookup(nullptr, path.get(), k_follow);
    if (!n)
        return -n.error();
    return do_truncate(n.value().get(), length);
}

long truncate_fd(uintptr_t fd, int64_t length)
{
    File* f = fd_get(static_cast<int>(fd));
    if (!f)
        return -k_ebadf;
    Node* n = file_node(*f);
    if (!n || (f->flags & k_o_accmode) == k_o_rdonly)
        return -k_einval; // Linux: EINVAL for a file not open for writing
    return do_truncate(n, length);
}

} // namespace

Result<FileRef> vfs_open(Node* base, const char* path, int flags, uint32_t mode)
{
    if (path[0] == '/' && fs::mount_owns(path))
        return fs::mount_open(path, flags, mode); // the disk's
    if (!base && path[0] && path[0] != '/' && fs::mount_cwd_on_disk())
        return fs::mount_open_at_cwd(path, flags, mode);
    int follow = (flags & k_o_nofollow) ? 0 : k_follow;
    if (!(flags & k_o_creat)) {
        Result<NodeRef> n =
            vfs_lookup(base, path, follow | ((flags & k_o_directory) ? k_want_dir : 0));
        if (!n)
            return n.error();
        return node_open(n.value(), flags);
    }
    if (flags & k_o_directory)
        return k_einval; // Linux 6.4 on: O_CREAT|O_DIRECTORY is EINVAL
    Result<NodeRef> found = vfs_lookup(base, path, (flags & k_o_excl) ? 0 : follow);
    if (found) {
        if (flags & k_o_excl)
            return k_eexist;
        if ((found.value()->mode & k_s_ifmt) == k_s_ifdir)
            return k_eisdir;
        return node_open(found.value(), flags);
    }
    if (found.error() != k_enoent)
        return found.error();
    // Not there: its directory must be.
    const char* name;
    size_t length;
    Result<NodeRef> dir = vfs_parent(base, path, &name, &length);
    if (!dir)
        return dir.error();
    if (length == 0 || name[length] == '/')
        return k_eisdir;
    if (NodeRef dangling = dir_find(dir.value().get(), name, length))
        return k_enoent; // a symbolic link to nothing, followed
    if (Errno e = dir_writable(dir.value().get()); e != k_ok)
        return e;
    NodeRef made = node_new(k_s_ifreg | (mode & 07777 & ~current_umask()));
    if (!made)
        return k_enomem;
    if (Errno e = dir_link(dir.value().get(), name, length, made.get()); e != k_ok)
        return e;
    return node_open(made, flags);
}

long sys_openat(const SyscallArgs& a)
{
    UserPath path(a.a[1]);
    if (path.error() != k_ok)
        return -path.error();
    Result<Node*> base = at_base(a.a[0], path.get());
    if (!base)
        return -base.error();
    int flags = static_cast<int>(a.a[2]);
    Result<FileRef> f = vfs_open(base.value(), path.get(), flags, static_cast<uint32_t>(a.a[3]));
    if (!f)
        return -f.error();
    return install(f.release_value(), flags & k_o_cloexec);
}

long sys_open(const SyscallArgs& a)
{
    SyscallArgs b{{static_cast<uintptr_t>(k_at_fdcwd), a.a[0], a.a[1], a.a[2], 0, 0}, a.frame};
    return sys_openat(b);
}

long sys_creat(const SyscallArgs& a)
{
    constexpr uintptr_t k_creat = k_o_creat | k_o_wronly | k_o_trunc;
    SyscallArgs b{{static_cast<uintptr_t>(k_at_fdcwd), a.a[0], k_creat, a.a[1], 0, 0}, a.frame};
    return sys_openat(b);
}

long sys_access(const SyscallArgs& a)
{
    SyscallArgs b{{static_cast<uintptr_t>(k_at_fdcwd), a.a[0], a.a[1], 0, 0, 0}, a.frame};
    return sys_faccessat2(b);
}

long sys_faccessat(const SyscallArgs& a)
{
    SyscallArgs b{{a.a[0], a.a[1], a.a[2], 0, 0, 0}, a.frame};
    return sys_faccessat2(b);
}

long sys_faccessat2(const SyscallArgs& a)
{
    constexpr uintptr_t k_x_ok = 1, k_w_ok = 2, k_r_ok = 4;
    constexpr uintptr_t k_at_eaccess = 0x200;
    if (a.a[2] & ~(k_r_ok | k_w_ok | k_x_ok))
        return -k_einval;
    if (a.a[3] & ~(k_at_symlink_nofollow | k_at_eaccess | k_at_empty_path))
        return -k_einval;
    if (fs::mount_claims_path(a.a[1]))
        return fs::mnt_faccessat2(a);
    UserPath path(a.a[1]);
    if (path.error() != k_ok)
        return -path.error();
    Result<NodeRef> n = lookup_at(a.a[0], path.get(), a.a[3], !(a.a[3] & k_at_symlink_nofollow));
    if (!n)
        return -n.error();
    // Toll's one user is root: reading and writing are always allowed
    // (as for Linux's root); executing needs an x bit on anything but a
    // directory.
    const Node* node = n.value().get();
    if ((a.a[2] & k_x_ok) && !is_dir(node) && !(node->mode & 0111))
        return -k_eacces;
    return 0;
}

long sys_mkdirat(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[1]))
        return fs::mnt_mkdirat(a);
    return do_mkdir(a.a[0], a.a[1], a.a[2]);
}

long sys_mkdir(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[0]))
        return fs::mnt_mkdir(a);
    return do_mkdir(static_cast<uintptr_t>(k_at_fdcwd), a.a[0], a.a[1]);
}

long sys_unlinkat(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[1]))
        return fs::mnt_unlinkat(a);
    return do_unlink(a.a[0], a.a[1], a.a[2]);
}

long sys_unlink(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[0]))
        return fs::mnt_unlink(a);
    return do_unlink(static_cast<uintptr_t>(k_at_fdcwd), a.a[0], 0);
}

long sys_rmdir(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[0]))
        return fs::mnt_rmdir(a);
    return do_unlink(static_cast<uintptr_t>(k_at_fdcwd), a.a[0], k_at_removedir);
}

long sys_renameat2(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[1]) || fs::mount_claims_path(a.a[3]))
        return a.a[4] ? -k_einval : fs::mnt_renameat(a); // the disk has no rename flags
    return do_rename(a.a[0], a.a[1], a.a[2], a.a[3], a.a[4]);
}

long sys_renameat(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[1]) || fs::mount_claims_path(a.a[3]))
        return fs::mnt_renameat(a);
    return do_rename(a.a[0], a.a[1], a.a[2], a.a[3], 0);
}

long sys_rename(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[0]) || fs::mount_claims_path(a.a[1]))
        return fs::mnt_rename(a);
    uintptr_t cwd = static_cast<uintptr_t>(k_at_fdcwd);
    return do_rename(cwd, a.a[0], cwd, a.a[1], 0);
}

long sys_linkat(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[1]) || fs::mount_claims_path(a.a[3]))
        return fs::mnt_linkat(a);
    return do_link(a.a[0], a.a[1], a.a[2], a.a[3], a.a[4]);
}

long sys_link(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[0]) || fs::mount_claims_path(a.a[1]))
        return fs::mnt_link(a);
    uintptr_t cwd = static_cast<uintptr_t>(k_at_fdcwd);
    return do_link(cwd, a.a[0], cwd, a.a[1], 0);
}

long sys_symlinkat(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[2]))
        return fs::mnt_symlinkat(a);
    return do_symlink(a.a[0], a.a[1], a.a[2]);
}

long sys_symlink(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[1]))
        return fs::mnt_symlink(a);
    return do_symlink(a.a[0], static_cast<uintptr_t>(k_at_fdcwd), a.a[1]);
}

long sys_readlinkat(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[1]))
        return fs::mnt_readlinkat(a);
    return do_readlink(a.a[0], a.a[1], a.a[2], a.a[3]);
}

long sys_readlink(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[0]))
        return fs::mnt_readlink(a);
    return do_readlink(static_cast<uintptr_t>(k_at_fdcwd), a.a[0], a.a[1], a.a[2]);
}

long sys_fchmodat(const SyscallArgs& a)
{
    UserPath path(a.a[1]);
    if (path.error() != k_ok)
        return -path.error();
    Result<NodeRef> n = lookup_at(a.a[0], path.get(), 0, true);
    return n ? do_chmod(n.value(), a.a[2]) : -n.error();
}

long sys_chmod(const SyscallArgs& a)
{
    SyscallArgs b{{static_cast<uintptr_t>(k_at_fdcwd), a.a[0], a.a[1], 0, 0, 0}, a.frame};
    return sys_fchmodat(b);
}

long sys_fchmod(const SyscallArgs& a)
{
    Result<NodeRef> n = fd_node(a.a[0]);
    return n ? do_chmod(n.value(), a.a[1]) : -(n.error() == k_einval ? k_ebadf : n.error());
}

long sys_fchownat(const SyscallArgs& a)
{
    if (a.a[4] & ~(k_at_symlink_nofollow | k_at_empty_path))
        return -k_einval;
    UserPath path(a.a[1]);
    if (path.error() != k_ok)
        return -path.error();
    Result<NodeRef> n = lookup_at(a.a[0], path.get(), a.a[4], !(a.a[4] & k_at_symlink_nofollow));
    return n ? do_chown(n.value(), a.a[2], a.a[3]) : -n.error();
}

long sys_chown(const SyscallArgs& a)
{
    SyscallArgs b{{static_cast<uintptr_t>(k_at_fdcwd), a.a[0], a.a[1], a.a[2], 0, 0}, a.frame};
    return sys_fchownat(b);
}

long sys_lchown(const SyscallArgs& a)
{
    SyscallArgs b{
        {static_cast<uintptr_t>(k_at_fdcwd), a.a[0], a.a[1], a.a[2], k_at_symlink_nofollow, 0},
        a.frame};
    return sys_fchownat(b);
}

long sys_fchown(const SyscallArgs& a)
{
    Result<NodeRef> n = fd_node(a.a[0]);
    return n ? do_chown(n.value(), a.a[1], a.a[2]) : -(n.error() == k_einval ? k_ebadf : n.error());
}

long sys_utimensat(const SyscallArgs& a)
{
    return do_utimens(a.a[0], a.a[1], a.a[2], a.a[3], sizeof(long) == sizeof(int64_t));
}

long sys_utimensat_time64(const SyscallArgs& a)
{
    return do_utimens(a.a[0], a.a[1], a.a[2], a.a[3], true);
}

long sys_getcwd(const SyscallArgs& a)
{
    if (fs::mount_cwd_on_disk())
        return fs::mnt_getcwd(a);
    proc::Process* p = proc::current_process();
    char* path = static_cast<char*>(vm::kmalloc(k_path_max));
    if (!path)
        return -k_enomem;
    Result<size_t> n = node_path(p->cwd ? p->cwd.get() : vfs_root(), path, k_path_max);
    long r;
    if (!n)
        r = -n.error(); // ENOENT: the working directory was removed
    else if (n.value() + 1 > a.a[1])
        r = -k_erange;
    else if (Errno e = copyout(a.a[0], path, n.value() + 1); e != k_ok)
        r = -e;
    else
        r = static_cast<long>(n.value() + 1); // Linux returns the length with its NUL
    vm::kfree(path);
    return r;
}

long sys_chdir(const SyscallArgs& a)
{
    if (fs::mount_claims_path(a.a[0]))
        return fs::mnt_chdir(a);
    UserPath path(a.a[0]);
    if (path.error() != k_ok)
        return -path.error();
    Result<NodeRef> n = vfs_lookup(nullptr, path.get(), k_follow | k_want_dir);
    if (!n)
        return -n.error();
    proc::current_process()->cwd = n.release_value();
    proc::current_process()->disk_cwd[0] = '\0'; // back in the tree
    return 0;
}

long sys_fchdir(const SyscallArgs& a)
{
    Result<NodeRef> n = fd_node(a.a[0]);
    if (!n)
        return -(n.error() == k_einval ? k_enotdir : n.error());
    if (!is_dir(n.value().get()))
        return -k_enotdir;
    proc::current_process()->cwd = n.release_value();
    proc::current_process()->disk_cwd[0] = '\0';
    return 0;
}

long sys_umask(const SyscallArgs& a)
{
    proc::Process* p = proc::current_process();
    uint32_t old = p->umask;
    p->umask = static_cast<uint32_t>(a.a[0]) & 0777;
    return old;
}

long sys_truncate(const SyscallArgs& a)
{
    return truncate_path(a.a[0], static_cast<intptr_t>(a.a[1]));
}

long sys_ftruncate(const SyscallArgs& a)
{
    if (fs::mount_claims_fd(a.a[0]))
        return fs::mnt_ftruncate(a);
    return truncate_fd(a.a[0], static_cast<intptr_t>(a.a[1]));
}

long sys_truncate64_pair(const SyscallArgs& a)
{
    uint64_t length = static_cast<uint64_t>(static_cast<uint32_t>(a.a[1])) |
                      static_cast<uint64_t>(static_cast<uint32_t>(a.a[2])) << 32;
    return truncate_path(a.a[0], static_cast<int64_t>(length));
}

long sys_ftruncate64_pair(const SyscallArgs& a)
{
    if (fs::mount_claims_fd(a.a[0])) {
        if (a.a[2])
            return -k_efbig; // more than Toll's ext2 keeps
        return fs::mnt_ftruncate(a);
    }
    uint64_t length = static_cast<uint64_t>(static_cast<uint32_t>(a.a[1])) |
                      static_cast<uint64_t>(static_cast<uint32_t>(a.a[2])) << 32;
    return truncate_fd(a.a[0], static_cast<int64_t>(length));
}

long sys_fsync(const SyscallArgs& a)
{
    if (fs::mount_claims_fd(a.a[0]))
        return fs::mnt_fsync(a);
    // Everything is in memory already: there is nothing to write back.
    return fd_get(static_cast<int>(a.a[0])) ? 0 : -k_ebadf;
}

long sys_sync(const SyscallArgs& a)
{
    return fs::mnt_sync(a); // the file tree is in memory; the disk is written
}

} // namespace toll::sys
