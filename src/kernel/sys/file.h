// Open files: a reference-counted File with an operations table, the
// per-process descriptor table, and open() by path (the file tree, vfs.h).
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::proc {
struct Process;
}

namespace toll::sys {

struct File;

/// What a kind of file can do. Data moves to and from user memory with
/// copyin/copyout inside these, so a bad buffer gives EFAULT.
struct FileOps {
    long (*read)(File& file, uintptr_t buffer, size_t count);
    long (*write)(File& file, uintptr_t buffer, size_t count);
    long (*ioctl)(File& file, unsigned long request, uintptr_t argument);
    void (*release)(File& file); ///< the last reference is gone
    int mode;                    ///< st_mode type bits for fstat
    /// What poll and select would report now: the k_poll* bits that hold
    /// (all of them, the caller masks what was asked). nullptr: the file is
    /// always ready to read and to write (a regular file, /dev/zero). A
    /// file whose readiness can change calls poll_notify() when it does.
    int (*poll)(File& file) = nullptr;
};

// Linux, include/uapi/asm-generic/poll.h: the readiness bits.
constexpr int k_pollin = 0x1, k_pollpri = 0x2, k_pollout = 0x4, k_pollerr = 0x8, k_pollhup = 0x10,
              k_pollnval = 0x20, k_pollrdnorm = 0x40, k_pollwrnorm = 0x100;

/// Threads in poll or select now (atomic; sys_poll.cpp).
extern unsigned g_poll_pollers;
/// poll_notify's work when someone polls: wakes them to look again.
void poll_notify_slow();

/// Says that some file's readiness may have changed: wakes every thread
/// asleep in poll or select, which look again. Call it after the change,
/// made under a lock that the file's poll operation takes too. When nobody
/// polls it costs a fence and a load; safe from an interrupt handler and
/// under any lock above `poll` in kernel/README.md's order. The fence pairs
/// with the pollers' count (sys_poll.cpp): either this sees the poller, or
/// the poller's look comes after the change.
inline void poll_notify()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&g_poll_pollers, __ATOMIC_RELAXED))
        poll_notify_slow();
}

struct File {
    const FileOps* ops = nullptr;
    int refs = 1;
    int flags = 0;                 ///< O_ACCMODE bits the file was opened with, and O_NONBLOCK
    uint64_t offset = 0;           ///< for seekable files
    const uint8_t* data = nullptr; ///< ramdisk files: their bytes
    size_t size = 0;
    void* object = nullptr; ///< pipes: the pipe
};

/// The number fstat reports as st_ino for a file outside the tree (a pipe,
/// a socket, a device opened at boot), which /proc/PID/fd shows too
/// (pipe:[N]): both ends of one pipe, which share its object, share it.
inline uint64_t file_made_up_ino(const File& file)
{
    const void* identity = file.object ? file.object : &file;
    return reinterpret_cast<uintptr_t>(identity) >> 4;
}

// Linux open flags and the access modes.
constexpr int k_o_rdonly = 0, k_o_wronly = 1, k_o_rdwr = 2, k_o_accmode = 3;
constexpr int k_o_creat = 0100, k_o_trunc = 01000, k_o_append = 02000, k_o_nonblock = 04000,
              k_o_directory = 0200000, k_o_cloexec = 02000000;

/// Owns one reference to a File and drops it when it goes out of scope (or
/// is assigned over), so that no early return leaks one and none drops it
/// twice. The only ways to get one are file_new (a new File) and file_share
/// (a further reference); it moves, through a Result too (whose
/// release_value hands it on), and is never copied. Every descriptor
/// table slot (proc::Process::files) is one: fork's copy takes a reference
/// per slot, and close, exec's close-on-exec and exit drop them by emptying
/// the slot. The reference count is touched only here (ref and unref).
class [[nodiscard]] FileRef {
  public:
    /// Empty: no file.
    FileRef() : m_file(nullptr) {}
    ~FileRef()
    {
        if (m_file)
            unref(m_file);
    }
    FileRef(const FileRef&) = delete;
    FileRef& operator=(const FileRef&) = delete;
    FileRef(FileRef&& other) noexcept : m_file(other.m_file) { other.m_file = nullptr; }

    /// Drops the reference held (if any) and takes over @p other's.
    FileRef& operator=(FileRef&& other) noexcept
    {
        if (this != &other) {
            File* old = m_file;
            m_file = other.m_file;
            other.m_file = nullptr;
            if (old)
                unref(old);
        }
        return *this;
    }

    File* get() const { return m_file; }
    File* operator->() const { return m_file; }
    explicit operator bool() const { return m_file != nullptr; }

  private:
    /// Takes over the one reference of a File just made.
    explicit FileRef(File* file) : m_file(file) {}
    static void ref(File* file);
    static void unref(File* file); ///< the last reference releases the file

    friend FileRef file_new(const FileOps* ops, int flags);
    friend FileRef file_share(File* file);

    File* m_file;
};

/// A new File with one reference, the FileRef's; empty when memory is
/// short. Every File alive is counted in the level counter sys.files.live.
FileRef file_new(const FileOps* ops, int flags);

/// A further reference to @p file, owned by the FileRef returned.
inline FileRef file_share(File* file)
{
    FileRef::ref(file);
    return FileRef{file};
}

/// Opens a path of the file tree (vfs_open relative to the working
/// directory, mode 0666 for a file O_CREAT makes). Returns the new File's
/// one reference; or k_enoent, k_enotdir, k_eexist, k_eisdir or k_enomem.
Result<FileRef> file_open(const char* path, int flags);

/// Installs @p file in the lowest free descriptor of @p p at or above @p min,
/// clearing its close-on-exec flag. Returns the descriptor, the reference
/// now the table's; or k_emfile when none is free, and @p file still holds
/// its reference (dropped when it goes out of scope).
Result<int> fd_install(proc::Process* p, FileRef& file, int min = 0);

/// Takes descriptor @p fd out of @p p's table: the slot is free at once and
/// the table's reference is handed to the caller (an empty FileRef if @p fd
/// was not open). Close is `fd_take(p, fd)` and letting it go.
FileRef fd_take(proc::Process* p, int fd);

/// Sets or clears descriptor @p fd's close-on-exec flag in @p p.
void fd_set_cloexec(proc::Process* p, int fd, bool on);

/// Closes every descriptor of @p p marked close-on-exec (execve).
void fd_close_on_exec(proc::Process* p);

/// The File behind descriptor @p fd of the current process, or nullptr.
File* fd_get(int fd);

/// Closes every descriptor of @p p.
void fd_close_all(proc::Process* p);

/// Gives @p child a copy of @p parent's descriptor table (fork).
void fd_copy_table(proc::Process* child, proc::Process* parent);

/// The console device (its operations), for the first process's descriptors.
FileRef console_open();

/// Called by the arch's serial receive interrupt with each byte received
/// (kernel/arch/console.h).
void console_input_byte(char c);

/// The two ends of a new pipe, one reference each.
struct PipeEnds {
    FileRef read;
    FileRef write;
};

/// Creates a pipe. Returns its two ends, or k_enomem.
Result<PipeEnds> pipe_create();

} // namespace toll::sys
