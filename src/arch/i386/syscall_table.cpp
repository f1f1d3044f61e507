// i386's system-call table: its column of the shared list (linux_calls.h),
// the rows whose struct layout is i386's own (stat64, statfs64), and the
// i386-only set_thread_area.
// int 0x80: the number in eax, arguments in ebx, ecx, edx, esi, edi, ebp.
#include "arch/i386/cpu.h"
#include "arch/i386/isolation.h"
#include "arch/i386/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/signal.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/dispatch.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"

namespace toll::i386 {
namespace {

using namespace toll::sys;

// Linux's struct user_desc (asm/ldt.h): what set_thread_area reads and writes.
struct UserDesc {
    uint32_t entry_number;
    uint32_t base_addr;
    uint32_t limit;
    uint32_t flags; // seg_32bit:1 contents:2 read_exec_only:1 limit_in_pages:1 seg_not_present:1
                    // useable:1
};
constexpr uint32_t k_desc_32bit = 1u << 0, k_desc_contents = 3u << 1,
                   k_desc_read_exec_only = 1u << 3, k_desc_limit_in_pages = 1u << 4,
                   k_desc_not_present = 1u << 5, k_desc_useable = 1u << 6, k_desc_known = 0x7F;
constexpr unsigned k_desc_contents_shift = 1;
// Intel SDM Vol. 3, 3.4.5 and 3.4.5.1: the descriptor bits a TLS segment is
// built from: present, DPL 3, code-or-data, and the data type (expand-down,
// writable, accessed); in the flags nibble G (4 KB granular), D/B (32-bit)
// and AVL.
constexpr uint8_t k_access_base = 0x80 | 0x60 | 0x10 | 0x01;
constexpr uint8_t k_type_writable = 0x02, k_type_expand_down = 0x04;
constexpr uint8_t k_flag_granular = 0x80, k_flag_32bit = 0x40, k_flag_avl = 0x10;
constexpr uint32_t k_max_limit = 0xFFFFF; // 20 bits

// Linux's two spellings of "no segment": all zero, or the "empty" pattern
// (read_exec_only and seg_not_present with nothing else).
bool asks_for_empty(const UserDesc& d)
{
    uint32_t f = d.flags & k_desc_known;
    return d.base_addr == 0 && d.limit == 0 &&
           (f == 0 || f == (k_desc_read_exec_only | k_desc_not_present));
}

// Reads the struct user_desc at @p user into @p tls, with Linux's checks:
// it accepts only 32-bit, present data segments (a 16-bit, code or absent
// segment is EINVAL), keeps a byte granular limit exact, and empties the
// slot for an "empty" request. Toll has one TLS slot, the GDT entry
// k_gdt_user_tls; @p may_choose lets -1 ask for it (set_thread_area, not
// clone). @p d gets what was read.
Errno read_tls_desc(uintptr_t user, bool may_choose, UserDesc& d, arch::TlsSegment& tls)
{
    if (copyin(&d, user, sizeof d) != k_ok)
        return k_efault;
    if (d.entry_number != k_gdt_user_tls && !(may_choose && d.entry_number == ~0u))
        return k_einval;
    tls = {};
    if (!asks_for_empty(d)) {
        uint32_t contents = (d.flags & k_desc_contents) >> k_desc_contents_shift;
        if (!(d.flags & k_desc_32bit) || contents > 1 || (d.flags & k_desc_not_present) ||
            d.limit > k_max_limit)
            return k_einval;
        tls.base = d.base_addr;
        tls.limit = d.limit;
        tls.access = static_cast<uint8_t>(k_access_base |
                                          (d.flags & k_desc_read_exec_only ? 0 : k_type_writable) |
                                          (contents ? k_type_expand_down : 0));
        tls.flags = static_cast<uint8_t>(k_flag_32bit |
                                         (d.flags & k_desc_limit_in_pages ? k_flag_granular : 0) |
                                         (d.flags & k_desc_useable ? k_flag_avl : 0));
    }
    return k_ok;
}

// set_thread_area(struct user_desc*): sets the calling thread's TLS slot
// (read_tls_desc) and writes back the slot's number.
long sys_set_thread_area(const SyscallArgs& a)
{
    UserDesc d;
    arch::TlsSegment tls;
    if (Errno e = read_tls_desc(a.a[0], true, d, tls); e != k_ok)
        return -e;
    d.entry_number = k_gdt_user_tls;
    if (copyout(a.a[0], &d, sizeof d) != k_ok)
        return -k_efault;
    proc::Thread* t = proc::current();
    t->context.tls = tls;
    proc::exit_work_set(*t, proc::k_exit_check_frame); // a saved selector may name what just went
    gdt_set_user_tls(tls);
    // A segment register of this thread may hold the TLS selector of a slot
    // just emptied: the check of every frame on its way back to user mode
    // (user_frame_check) nulls such a data register, and refuses such a
    // stack segment with SIGSEGV.
    return 0;
}

// Linux, arch/x86/include/uapi/asm/stat.h: i386's struct stat64, 96 bytes
// (its 64-bit fields 4-byte aligned, as i386's ABI aligns them).
struct [[gnu::packed]] Stat64 {
    uint64_t dev;
    uint8_t pad0[4];
    uint32_t ino32;
    uint32_t mode, nlink, uid, gid;
    uint64_t rdev;
    uint8_t pad3[4];
    int64_t size;
    uint32_t blksize;
    uint64_t blocks;
    uint32_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
    uint64_t ino;
};
static_assert(sizeof(Stat64) == 96, "i386's struct stat64");

// Linux, include/uapi/asm-generic/statfs.h with ARCH_PACK_STATFS64 (x86:
// packed to 4 bytes): struct statfs64, 84 bytes.
struct [[gnu::packed]] Statfs64 {
    uint32_t type, bsize;
    uint64_t blocks, bfree, bavail, files, ffree;
    int32_t fsid[2];
    uint32_t namelen, frsize, flags, spare[4];
};
static_assert(sizeof(Statfs64) == 84, "i386's struct statfs64");

long put_stat(uintptr_t user, const FileStat& st)
{
    Stat64 s{};
    s.dev = st.dev;
    s.ino32 = static_cast<uint32_t>(st.ino);
    s.ino = st.ino;
    s.mode = st.mode;
    s.nlink = st.nlink;
    s.uid = st.uid;
    s.gid = st.gid;
    s.rdev = st.rdev;
    s.size = st.size;
    s.blksize = st.blksize;
    s.blocks = st.blocks;
    s.atime = static_cast<uint32_t>(st.atime.seconds);
    s.atime_ns = st.atime.nanoseconds;
    s.mtime = static_cast<uint32_t>(st.mtime.seconds);
    s.mtime_ns = st.mtime.nanoseconds;
    s.ctime = static_cast<uint32_t>(st.ctime.seconds);
    s.ctime_ns = st.ctime.nanoseconds;
    return -copyout(user, &s, sizeof s);
}

// Linux, include/uapi/linux/fcntl.h: AT_FDCWD, AT_SYMLINK_NOFOLLOW.
constexpr uintptr_t k_at_fdcwd = static_cast<uintptr_t>(-100), k_at_symlink_nofollow = 0x100;

long stat_path(uintptr_t dirfd, uintptr_t path, uintptr_t flags, uintptr_t buffer)
{
    FileStat st;
    if (Errno e = stat_at(dirfd, path, flags, &st); e != k_ok)
        return -e;
    return put_stat(buffer, st);
}

long sys_stat64(const SyscallArgs& a)
{
    return stat_path(k_at_fdcwd, a.a[0], 0, a.a[1]);
}

long sys_lstat64(const SyscallArgs& a)
{
    return stat_path(k_at_fdcwd, a.a[0], k_at_symlink_nofollow, a.a[1]);
}

long sys_fstatat64(const SyscallArgs& a)
{
    return stat_path(a.a[0], a.a[1], a.a[3], a.a[2]);
}

long sys_fstat64(const SyscallArgs& a)
{
    FileStat st;
    if (Errno e = stat_fd(a.a[0], &st); e != k_ok)
        return -e;
    return put_stat(a.a[1], st);
}

// statfs64(path, size, buffer) and fstatfs64(fd, size, buffer): size must
// be the struct's (Linux: EINVAL otherwise).
long statfs64(uintptr_t path, long fd, uintptr_t size, uintptr_t buffer)
{
    if (size != sizeof(Statfs64))
        return -k_einval;
    FsStat fs;
    if (Errno e = statfs_of(path, fd, &fs); e != k_ok)
        return -e;
    Statfs64 s{};
    s.type = static_cast<uint32_t>(fs.type);
    s.bsize = static_cast<uint32_t>(fs.bsize);
    s.blocks = fs.blocks;
    s.bfree = fs.bfree;
    s.bavail = fs.bavail;
    s.files = fs.files;
    s.ffree = fs.ffree;
    s.namelen = static_cast<uint32_t>(fs.namelen);
    s.frsize = static_cast<uint32_t>(fs.frsize);
    return -copyout(buffer, &s, sizeof s);
}

long sys_statfs64(const SyscallArgs& a)
{
    return statfs64(a.a[0], -1, a.a[1], a.a[2]);
}

long sys_fstatfs64(const SyscallArgs& a)
{
    if (!fd_get(static_cast<int>(a.a[0])))
        return -k_ebadf;
    return statfs64(0, static_cast<long>(a.a[0]), a.a[1], a.a[2]);
}

// i386's own forms of the shared list's rows (linux_calls.h), and its own calls.
constexpr SyscallEntry k_i386_calls[] = {
    {195, sys_stat64},   {196, sys_lstat64},   {197, sys_fstat64},         {300, sys_fstatat64},
    {268, sys_statfs64}, {269, sys_fstatfs64}, {243, sys_set_thread_area},
};

// Toll's own calls that only i386 has (the rest: k_toll_calls).
constexpr SyscallEntry k_i386_toll_calls[] = {
    {TOLL_SYS_check_isolation, sys_check_isolation}, // isolation.cpp
};

constexpr LinuxColumn k_column = &LinuxCall::nr_i386;
constexpr SyscallTable<syscall_table_size(k_linux_calls, k_column, k_i386_calls, k_toll_calls,
                                          k_i386_toll_calls)>
    g_table{k_linux_calls, k_column, k_i386_calls, k_toll_calls, k_i386_toll_calls};

} // namespace

void syscall_dispatch(arch::TrapFrame& f)
{
    SyscallArgs args{{f.ebx, f.ecx, f.edx, f.esi, f.edi, f.ebp}, &f};
    // eax is both the number and the result: a restart puts the number back.
    // exec rewrote the frame: its eax is the new program's, leave the 0.
    f.eax = static_cast<uint32_t>(sys::syscall_dispatch(g_table, f.eax, args, f.eax));
}

} // namespace toll::i386

namespace toll::arch {

Errno clone_tls(ThreadContext& child, uintptr_t tls)
{
    // Linux's do_set_thread_area for clone: the slot must be named, not
    // chosen, and nothing is written back.
    i386::UserDesc d;
    TlsSegment segment;
    TRY(i386::read_tls_desc(tls, false, d, segment));
    child.tls = segment;
    return k_ok;
}

} // namespace toll::arch
