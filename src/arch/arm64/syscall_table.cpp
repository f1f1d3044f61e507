// arm64's system-call table: its column of the shared list (linux_calls.h)
// and the calls whose arm64 form differs (flag values, struct layouts,
// mmap's byte offset), adapted here.
// svc #0: the number in x8, arguments in x0-x5, the result back in x0.
#include "arch/arm64/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/physmem.h"
#include "kernel/kern/counters.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/dispatch.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"

namespace toll::arm64 {
namespace {

using namespace toll::sys;

// Linux, arch/arm64/include/uapi/asm/fcntl.h: the open flags whose arm64
// values differ from the i386 ones the core uses (kernel/sys/file.h).
constexpr uintptr_t k_arm64_o_directory = 040000, k_arm64_o_nofollow = 0100000,
                    k_arm64_o_direct = 0200000;
constexpr uintptr_t k_o_nofollow = 0400000; // the core's (i386's) O_NOFOLLOW

TOLL_COUNTER(g_syscalls, "cpu.syscalls");

// openat(dirfd, path, flags, mode) with arm64's flag values: O_DIRECTORY
// and O_NOFOLLOW move to the core's (i386's) bits, O_DIRECT is dropped.
long sys_openat_arm64(const SyscallArgs& a)
{
    uintptr_t flags =
        a.a[2] & ~(k_arm64_o_directory | k_arm64_o_nofollow | k_arm64_o_direct | k_o_nofollow);
    if (a.a[2] & k_arm64_o_directory)
        flags |= k_o_directory;
    if (a.a[2] & k_arm64_o_nofollow)
        flags |= k_o_nofollow;
    SyscallArgs shifted{{a.a[0], a.a[1], flags, a.a[3], a.a[4], a.a[5]}, a.frame};
    return sys_openat(shifted);
}

// Linux, include/uapi/asm-generic/stat.h: the generic struct stat (128
// bytes) that arm64 uses.
struct Stat {
    uint64_t dev, ino;
    uint32_t mode, nlink, uid, gid;
    uint64_t rdev, pad1;
    int64_t size;
    int32_t blksize, pad2;
    int64_t blocks;
    int64_t atime;
    uint64_t atime_ns;
    int64_t mtime;
    uint64_t mtime_ns;
    int64_t ctime;
    uint64_t ctime_ns;
    uint32_t unused4, unused5;
};
static_assert(sizeof(Stat) == 128, "arm64's struct stat");

// Linux, include/uapi/asm-generic/statfs.h: struct statfs with 64-bit words.
struct Statfs {
    int64_t type, bsize;
    uint64_t blocks, bfree, bavail, files, ffree;
    int32_t fsid[2];
    int64_t namelen, frsize, flags, spare[4];
};
static_assert(sizeof(Statfs) == 120, "arm64's struct statfs");

long put_stat(uintptr_t user, const FileStat& st)
{
    Stat s{};
    s.dev = st.dev;
    s.ino = st.ino;
    s.mode = st.mode;
    s.nlink = st.nlink;
    s.uid = st.uid;
    s.gid = st.gid;
    s.rdev = st.rdev;
    s.size = st.size;
    s.blksize = static_cast<int32_t>(st.blksize);
    s.blocks = static_cast<int64_t>(st.blocks);
    s.atime = st.atime.seconds;
    s.atime_ns = st.atime.nanoseconds;
    s.mtime = st.mtime.seconds;
    s.mtime_ns = st.mtime.nanoseconds;
    s.ctime = st.ctime.seconds;
    s.ctime_ns = st.ctime.nanoseconds;
    return -copyout(user, &s, sizeof s);
}

// newfstatat(dirfd, path, buffer, flags)
long sys_newfstatat(const SyscallArgs& a)
{
    FileStat st;
    if (Errno e = stat_at(a.a[0], a.a[1], a.a[3], &st); e != k_ok)
        return -e;
    return put_stat(a.a[2], st);
}

long sys_fstat(const SyscallArgs& a)
{
    FileStat st;
    if (Errno e = stat_fd(a.a[0], &st); e != k_ok)
        return -e;
    return put_stat(a.a[1], st);
}

long put_statfs(uintptr_t path, long fd, uintptr_t buffer)
{
    FsStat fs;
    if (Errno e = statfs_of(path, fd, &fs); e != k_ok)
        return -e;
    Statfs s{};
    s.type = static_cast<int64_t>(fs.type);
    s.bsize = static_cast<int64_t>(fs.bsize);
    s.blocks = fs.blocks;
    s.bfree = fs.bfree;
    s.bavail = fs.bavail;
    s.files = fs.files;
    s.ffree = fs.ffree;
    s.namelen = static_cast<int64_t>(fs.namelen);
    s.frsize = static_cast<int64_t>(fs.frsize);
    return -copyout(buffer, &s, sizeof s);
}

long sys_statfs(const SyscallArgs& a)
{
    return put_statfs(a.a[0], -1, a.a[1]);
}

long sys_fstatfs(const SyscallArgs& a)
{
    if (!fd_get(static_cast<int>(a.a[0])))
        return -k_ebadf;
    return put_statfs(0, static_cast<long>(a.a[0]), a.a[1]);
}

// mmap(addr, length, prot, flags, fd, offset): the offset is in bytes on
// arm64; Toll's mmap takes pages, as i386's mmap2 does.
long sys_mmap(const SyscallArgs& a)
{
    if (a.a[5] % arch::k_page_size != 0)
        return -k_einval;
    SyscallArgs pages{{a.a[0], a.a[1], a.a[2], a.a[3], a.a[4], a.a[5] / arch::k_page_size},
                      a.frame};
    return sys_mmap_pages(pages);
}

// arm64's own forms of the shared list's rows (linux_calls.h).
constexpr SyscallEntry k_arm64_calls[] = {
    {56, sys_openat_arm64}, {79, sys_newfstatat}, {80, sys_fstat},
    {43, sys_statfs},       {44, sys_fstatfs},    {222, sys_mmap},
};

constexpr LinuxColumn k_column = &LinuxCall::nr_arm64;
constexpr SyscallTable<syscall_table_size(k_linux_calls, k_column, k_arm64_calls, k_toll_calls)>
    g_table{k_linux_calls, k_column, k_arm64_calls, k_toll_calls};

} // namespace

} // namespace toll::arm64

/// Called by vectors.S for an SVC from EL0, the system call's fast path: it
/// skips arm64_trap's dispatch by vector and class. ELR already points past
/// the svc instruction (Arm ARM, "Preferred exception return address").
/// (An SVC at EL1 goes to arm64_trap, finds no hook and panics: the kernel
/// never makes system calls.)
extern "C" void arm64_syscall(toll::arch::TrapFrame* frame)
{
    using namespace toll::arm64;
    g_traps_total.add();
    g_syscalls.add();
    toll::arch::TrapFrame& f = *frame;
    toll::sys::SyscallArgs args{{f.x[0], f.x[1], f.x[2], f.x[3], f.x[4], f.x[5]}, &f};
    // x0 is both the first argument and the result: a restart puts it back.
    // After a successful execve the frame is the new program's: its x0 must
    // be 0, which is what execve returns.
    f.x[0] = static_cast<uint64_t>(
        toll::sys::syscall_dispatch(g_table, toll::arch::syscall_number(f), args, f.x[0]));
    toll::proc::trap_exit(f, true);
}
