// System calls on descriptors: read, write, their vector forms, open, close,
// dup, pipe, ioctl, lseek, fcntl.
#include "kernel/kern/panic.h"
#include "kernel/proc/process.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/kmalloc.h"

namespace toll::sys {
namespace {

constexpr size_t k_iov_max = 1024;
// Linux limits one read/write to this many bytes (MAX_RW_COUNT, about 2 GB).
constexpr size_t k_max_rw = 0x7FFFF000;

struct UserIovec {
    uintptr_t base;
    uintptr_t length;
};

long do_rw(int fd, uintptr_t buffer, size_t count, bool write)
{
    File* f = fd_get(fd);
    if (!f)
        return -k_ebadf;
    int mode = f->flags & k_o_accmode;
    if (write ? mode == k_o_rdonly : mode == k_o_wronly)
        return -k_ebadf;
    // The whole range is checked before the count is clamped (as Linux's
    // access_ok does): a huge count over a small buffer is EFAULT, never a
    // shorter transfer of whatever memory follows the buffer.
    if (!user_range_ok(buffer, count))
        return -k_efault;
    if (count > k_max_rw)
        count = k_max_rw;
    return write ? f->ops->write(*f, buffer, count) : f->ops->read(*f, buffer, count);
}

// Reads the @p count vectors at @p iov into @p out, checking each one before
// any data moves, in Linux's order (import_iovec): a negative length (as a
// signed size) is EINVAL, then a range outside user space EFAULT. The
// lengths are then cut so that their total stays within k_max_rw: what
// follows the limit is not transferred, and the call returns at most that.
long gather_iovecs(uintptr_t iov, size_t count, UserIovec* out)
{
    if (!user_range_ok(iov, count * sizeof(UserIovec)))
        return -k_efault;
    if (Errno e = copyin(out, iov, count * sizeof(UserIovec)); e != k_ok)
        return -e;
    for (size_t i = 0; i < count; ++i)
        if (static_cast<intptr_t>(out[i].length) < 0)
            return -k_einval;
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
        if (!user_range_ok(out[i].base, out[i].length))
            return -k_efault;
        if (out[i].length > k_max_rw - total)
            out[i].length = k_max_rw - total;
        total += out[i].length;
    }
    return 0;
}

long do_rwv(int fd, uintptr_t iov, size_t count, bool write)
{
    if (count > k_iov_max)
        return -k_einval;
    // Most calls (stdio's flushes) pass two or three vectors: those stay on
    // the stack; longer lists take one heap buffer for the call.
    constexpr size_t k_on_stack = 8;
    UserIovec small[k_on_stack];
    UserIovec* v =
        count <= k_on_stack ? small : static_cast<UserIovec*>(vm::kmalloc(count * sizeof *v));
    if (!v)
        return -k_enomem;
    long r = gather_iovecs(iov, count, v);
    size_t total = 0;
    for (size_t i = 0; r == 0 && i < count && total < k_max_rw; ++i) {
        size_t length = v[i].length; // the lengths add up to k_max_rw at most
        if (length == 0)
            continue;
        long n = do_rw(fd, v[i].base, length, write);
        if (n < 0) {
            if (total == 0)
                r = n;
            break;
        }
        total += static_cast<size_t>(n);
        if (static_cast<size_t>(n) < length)
            break;
    }
    if (v != small)
        vm::kfree(v);
    return r < 0 ? r : static_cast<long>(total);
}

// Installs @p file in the current process (see fd_install): the descriptor,
// or -EMFILE with the reference dropped by @p file going out of scope.
long install(FileRef file, int min = 0)
{
    Result<int> fd = fd_install(proc::current_process(), file, min);
    return fd ? fd.value() : -fd.error();
}

} // namespace

long sys_read(const SyscallArgs& a)
{
    return do_rw(static_cast<int>(a.a[0]), a.a[1], a.a[2], false);
}

long sys_write(const SyscallArgs& a)
{
    return do_rw(static_cast<int>(a.a[0]), a.a[1], a.a[2], true);
}

namespace {
// pread and pwrite: do_rw at @p offset, the file's own offset untouched.
long do_prw(int fd, uintptr_t buffer, size_t count, int64_t offset, bool write)
{
    File* f = fd_get(fd);
    if (!f)
        return -k_ebadf;
    constexpr int k_s_ifreg = 0100000;
    if (f->ops->mode != k_s_ifreg)
        return -k_espipe; // Linux: pipes, devices and directories do not pread
    if (offset < 0)
        return -k_einval;
    // With O_APPEND the write still goes to the end, as on Linux
    // (pwrite(2), BUGS): the file's write does that.
    uint64_t saved = f->offset; // lock: the file's offset
    f->offset = static_cast<uint64_t>(offset);
    long r = do_rw(fd, buffer, count, write);
    f->offset = saved;
    return r;
}

int64_t pair(uintptr_t low, uintptr_t high)
{
    return static_cast<int64_t>(static_cast<uint64_t>(static_cast<uint32_t>(low)) |
                                static_cast<uint64_t>(static_cast<uint32_t>(high)) << 32);
}
} // namespace

long sys_pread64(const SyscallArgs& a)
{
    return do_prw(static_cast<int>(a.a[0]), a.a[1], a.a[2], static_cast<intptr_t>(a.a[3]), false);
}

long sys_pwrite64(const SyscallArgs& a)
{
    return do_prw(static_cast<int>(a.a[0]), a.a[1], a.a[2], static_cast<intptr_t>(a.a[3]), true);
}

long sys_pread64_pair(const SyscallArgs& a)
{
    return do_prw(static_cast<int>(a.a[0]), a.a[1], a.a[2], pair(a.a[3], a.a[4]), false);
}

long sys_pwrite64_pair(const SyscallArgs& a)
{
    return do_prw(static_cast<int>(a.a[0]), a.a[1], a.a[2], pair(a.a[3], a.a[4]), true);
}

long sys_readv(const SyscallArgs& a)
{
    return do_rwv(static_cast<int>(a.a[0]), a.a[1], a.a[2], false);
}

long sys_writev(const SyscallArgs& a)
{
    return do_rwv(static_cast<int>(a.a[0]), a.a[1], a.a[2], true);
}

long sys_close(const SyscallArgs& a)
{
    // The table's reference goes with the descriptor, dropped on return.
    FileRef closed = fd_take(proc::current_process(), static_cast<int>(a.a[0]));
    return closed ? 0 : -k_ebadf;
}

long sys_dup(const SyscallArgs& a)
{
    File* f = fd_get(static_cast<int>(a.a[0]));
    if (!f)
        return -k_ebadf;
    return install(file_share(f));
}

// dup2 and dup3: @p to becomes a copy of @p from, its close-on-exec flag
// @p cloexec.
long dup_to(int from, int to, bool cloexec)
{
    File* f = fd_get(from);
    if (!f)
        return -k_ebadf;
    if (to < 0 || to >= proc::k_max_fds)
        return -k_ebadf;
    if (from == to)
        return to;
    proc::Process* p = proc::current_process();
    // What @p to held is closed (its reference dropped on return); the
    // table's new reference is taken first, so a file dup'ed onto another
    // descriptor of its own survives.
    FileRef copy = file_share(f);
    FileRef replaced = fd_take(p, to);
    Result<int> fd = fd_install(p, copy, to);
    TOLL_ASSERT(fd && fd.value() == to); // the slot was just freed
    fd_set_cloexec(p, to, cloexec);
    return to;
}

long sys_dup2(const SyscallArgs& a)
{
    return dup_to(static_cast<int>(a.a[0]), static_cast<int>(a.a[1]), false);
}

long sys_dup3(const SyscallArgs& a)
{
    if (a.a[0] == a.a[1])
        return -k_einval;
    if (a.a[2] & ~static_cast<uintptr_t>(k_o_cloexec))
        return -k_einval;
    return dup_to(static_cast<int>(a.a[0]), static_cast<int>(a.a[1]), a.a[2] & k_o_cloexec);
}

long sys_pipe2(const SyscallArgs& a)
{
    if (a.a[1] & ~static_cast<uintptr_t>(k_o_cloexec | k_o_nonblock))
        return -k_einval;
    if (!user_range_ok(a.a[0], 2 * sizeof(int)))
        return -k_efault;
    Result<PipeEnds> ends = pipe_create();
    if (!ends)
        return -ends.error();
    PipeEnds both = ends.release_value();
    FileRef r = toll::move(both.read), w = toll::move(both.write);
    int nonblock = static_cast<int>(a.a[1] & k_o_nonblock);
    r.get()->flags |= nonblock;
    w.get()->flags |= nonblock;
    proc::Process* p = proc::current_process();
    Result<int> read_fd = fd_install(p, r);
    if (!read_fd)
        return -read_fd.error(); // r and w dropped: the pipe is gone
    Result<int> write_fd = fd_install(p, w);
    if (!write_fd) {
        (void)fd_take(p, read_fd.value()); // closes the read end again
        return -write_fd.error();
    }
    int fds[2] = {read_fd.value(), write_fd.value()};
    if (Errno e = copyout(a.a[0], fds, sizeof fds); e != k_ok) {
        (void)fd_take(p, fds[0]);
        (void)fd_take(p, fds[1]);
        return -e;
    }
    fd_set_cloexec(p, fds[0], a.a[1] & k_o_cloexec);
    fd_set_cloexec(p, fds[1], a.a[1] & k_o_cloexec);
    return 0;
}

long sys_pipe(const SyscallArgs& a)
{
    SyscallArgs b = a;
    b.a[1] = 0;
    return sys_pipe2(b);
}

long sys_ioctl(const SyscallArgs& a)
{
    File* f = fd_get(static_cast<int>(a.a[0]));
    if (!f)
        return -k_ebadf;
    if (!f->ops->ioctl)
        return -k_enotty;
    return f->ops->ioctl(*f, a.a[1], a.a[2]);
}

long sys_lseek(const SyscallArgs& a)
{
    File* f = fd_get(static_cast<int>(a.a[0]));
    if (!f)
        return -k_ebadf;
    // Files and directories seek (a directory's offset counts entries).
    constexpr int k_s_ifreg = 0100000, k_s_ifdir = 040000;
    if (f->ops->mode != k_s_ifreg && f->ops->mode != k_s_ifdir)
        return -k_espipe;
    long offset = static_cast<long>(a.a[1]);
    long base;
    switch (a.a[2]) {
    case 0:
        base = 0;
        break;
    case 1:
        base = static_cast<long>(f->offset);
        break;
    case 2:
        if (f->ops->mode == k_s_ifdir)
            return -k_einval; // as Linux's ramfs: a directory has no end to seek from
        if (Node* n = file_node(*f); n && !f->data)
            base = static_cast<long>(n->size); // a file of the tree: its size now
        else
            base = static_cast<long>(f->size);
        break;
    default:
        return -k_einval;
    }
    if (base + offset < 0)
        return -k_einval;
    f->offset = static_cast<uint64_t>(base + offset);
    return static_cast<long>(f->offset);
}

long sys_llseek(const SyscallArgs& a)
{
    // _llseek(fd, offset_high, offset_low, loff_t* result, whence)
    if (a.a[1] != 0 && a.a[1] != ~uintptr_t(0))
        return -k_einval;
    SyscallArgs b = a;
    b.a[1] = a.a[2];
    b.a[2] = a.a[4];
    long r = sys_lseek(b);
    if (r < 0)
        return r;
    int64_t result = r;
    return -copyout(a.a[3], &result, sizeof result); // 0, or -errno
}

long sys_fcntl(const SyscallArgs& a)
{
    constexpr uintptr_t k_f_dupfd = 0, k_f_getfd = 1, k_f_setfd = 2, k_f_getfl = 3, k_f_setfl = 4,
                        k_f_dupfd_cloexec = 1030;
    constexpr uintptr_t k_fd_cloexec = 1;
    int fd = static_cast<int>(a.a[0]);
    File* f = fd_get(fd);
    if (!f)
        return -k_ebadf;
    proc::Process* p = proc::current_process();
    switch (a.a[1]) {
    case k_f_dupfd:
    case k_f_dupfd_cloexec: {
        if (a.a[2] >= static_cast<uintptr_t>(proc::k_max_fds))
            return -k_einval;
        long copy = install(file_share(f), static_cast<int>(a.a[2]));
        if (copy >= 0 && a.a[1] == k_f_dupfd_cloexec)
            fd_set_cloexec(p, static_cast<int>(copy), true);
        return copy;
    }
    case k_f_getfd:
        return (p->close_on_exec >> fd & 1) ? k_fd_cloexec : 0;
    case k_f_setfd:
        fd_set_cloexec(p, fd, a.a[2] & k_fd_cloexec);
        return 0;
    case k_f_getfl:
        return f->flags;
    case k_f_setfl:
        // Of the flags F_SETFL may change, O_NONBLOCK is the one Toll's
        // files act on; the access mode stays as opened.
        f->flags = (f->flags & ~k_o_nonblock) | (static_cast<int>(a.a[2]) & k_o_nonblock);
        return 0;
    default:
        return -k_einval;
    }
}

} // namespace toll::sys
