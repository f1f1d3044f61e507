// Files and descriptor tables, plus open() by path.
//
// A File's reference count is atomic: two processes that share a file
// (fork, dup) may drop their references on two CPUs at once, and the one
// that drops the last releases it. A descriptor table is its process's
// spinlock's ("proc.files") while it changes (install, take, fork's copy);
// fd_get reads a slot without it, since only the process's one thread
// changes its own table (a table shared between threads would need the lock
// and a reference there too, as Linux's fdget takes when it is shared).
#include "kernel/sys/file.h"
#include "kernel/fs/mount.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/process.h"
#include "kernel/sys/uaccess.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

/// Files alive now (a level): every file_new() adds one, the last
/// file_unref() takes it away, so a leaked or twice-dropped reference shows.
TOLL_GAUGE(g_files_live, "sys.files.live");

} // namespace

FileRef file_new(const FileOps* ops, int flags)
{
    File* f = make<File>();
    if (f) {
        f->ops = ops;
        f->flags = flags;
        g_files_live.raise();
    }
    return FileRef{f};
}

void FileRef::ref(File* file)
{
    __atomic_add_fetch(&file->refs, 1, __ATOMIC_RELAXED);
}

void FileRef::unref(File* file)
{
    // Acquire-release: the last dropper releases the file and must see what
    // every other holder wrote to it first.
    int left = __atomic_sub_fetch(&file->refs, 1, __ATOMIC_ACQ_REL);
    TOLL_ASSERT(left >= 0);
    if (left == 0) {
        if (file->ops->release)
            file->ops->release(*file);
        destroy(file);
        g_files_live.lower();
    }
}

Result<FileRef> file_open(const char* path, int flags)
{
    return vfs_open(nullptr, path, flags, 0666);
}

Result<int> fd_install(proc::Process* p, FileRef& file, int min)
{
    SpinGuard g(p->files_lock);
    for (int fd = min; fd < proc::k_max_fds; ++fd)
        if (!p->files[fd]) {
            p->files[fd] = toll::move(file);
            fd_set_cloexec(p, fd, false);
            return fd;
        }
    return k_emfile;
}

FileRef fd_take(proc::Process* p, int fd)
{
    if (fd < 0 || fd >= proc::k_max_fds)
        return FileRef{};
    SpinGuard g(p->files_lock);
    return toll::move(p->files[fd]); // dropped by the caller, after the lock
}

void fd_set_cloexec(proc::Process* p, int fd, bool on)
{
    uint64_t bit = uint64_t(1) << fd;
    p->close_on_exec = on ? p->close_on_exec | bit : p->close_on_exec & ~bit;
}

namespace {

// Takes every descriptor whose bit is set in @p which out of @p p's table
// and drops them after the lock: the descriptors are closed. A handful per
// acquisition of the lock, not one acquisition per slot (a process has few
// open; exit's close of all 64 slots is then one acquisition).
void fd_close_set(proc::Process* p, uint64_t which)
{
    constexpr unsigned k_batch = 8;
    int fd = 0;
    while (fd < proc::k_max_fds) {
        FileRef taken[k_batch];
        unsigned n = 0;
        {
            SpinGuard g(p->files_lock);
            for (; fd < proc::k_max_fds && n < k_batch; ++fd)
                if (which >> fd & 1 && p->files[fd])
                    taken[n++] = toll::move(p->files[fd]);
            if (fd == proc::k_max_fds)
                p->close_on_exec &= ~which;
        }
    } // each batch's references drop here, after the lock
}

static_assert(proc::k_max_fds <= 64, "a descriptor set is one 64-bit word");

} // namespace

void fd_close_on_exec(proc::Process* p)
{
    fd_close_set(p, p->close_on_exec);
}

File* fd_get(int fd)
{
    proc::Process* p = proc::current_process();
    if (!p || fd < 0 || fd >= proc::k_max_fds)
        return nullptr;
    return p->files[fd].get();
}

void fd_close_all(proc::Process* p)
{
    fd_close_set(p, ~uint64_t(0)); // every descriptor (the static_assert above)
}

void fd_copy_table(proc::Process* child, proc::Process* parent)
{
    SpinGuard g(parent->files_lock); // the child is not running yet
    // A reference of the child's own for each open descriptor.
    for (int fd = 0; fd < proc::k_max_fds; ++fd)
        if (parent->files[fd])
            child->files[fd] = file_share(parent->files[fd].get());
    child->close_on_exec = parent->close_on_exec;
}

} // namespace toll::sys
