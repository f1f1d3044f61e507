// Linux's i386 system call numbers (arch/x86/entry/syscalls/syscall_32.tbl)
// mapped to Toll's implementations, plus the i386-only set_thread_area.
// int 0x80: the number in eax, arguments in ebx, ecx, edx, esi, edi, ebp.
#include "arch/i386/cpu.h"
#include "arch/i386/isolation.h"
#include "arch/i386/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/signal.h"
#include "kernel/kern/result.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/dispatch.h"
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
    t->exit_work |= proc::k_exit_check_frame; // a saved selector may name what just went
    gdt_set_user_tls(tls);
    // A segment register of this thread may hold the TLS selector of a slot
    // just emptied: the check of every frame on its way back to user mode
    // (user_frame_check) nulls such a data register, and refuses such a
    // stack segment with SIGSEGV.
    return 0;
}

// ftruncate64(fd, low, high): the length in two registers (musl's ftruncate).
long sys_ftruncate64(const SyscallArgs& a)
{
    uint64_t length = a.a[1] | uint64_t(a.a[2]) << 32;
    if (length > 0x7FFFFFFFFFFFFFFFull)
        return -k_einval;
    if (length >> 32)
        return -k_efbig; // more than Toll's ext2 keeps
    SyscallArgs b{{a.a[0], static_cast<uintptr_t>(length), 0, 0, 0, 0}, a.frame};
    return sys_ftruncate(b);
}

constexpr SyscallEntry k_linux_calls[] = {
    {1, sys_exit},
    {2, sys_fork},
    {3, sys_read},
    {4, sys_write},
    {5, sys_open},
    {6, sys_close},
    {7, sys_waitpid},
    {11, sys_execve},
    {19, sys_lseek},
    {20, sys_getpid},
    {24, sys_getuid},
    {33, sys_access},
    {37, sys_kill},
    {41, sys_dup},
    {42, sys_pipe},
    {43, sys_times},
    {45, sys_brk},
    {47, sys_getuid},
    {49, sys_getuid},
    {50, sys_getuid},
    {54, sys_ioctl},
    {55, sys_fcntl},
    {63, sys_dup2},
    {64, sys_getppid},
    {91, sys_munmap},
    {114, sys_wait4},
    {120, sys_clone},
    {125, sys_mprotect},
    {140, sys_llseek},
    {145, sys_readv},
    {146, sys_writev},
    {158, sys_sched_yield},
    {162, sys_nanosleep},
    {174, sys_rt_sigaction},
    {175, sys_rt_sigprocmask},
    {192, sys_mmap_pages},
    {199, sys_getuid},
    {200, sys_getuid},
    {201, sys_getuid},
    {202, sys_getuid},
    {220, sys_getdents64},
    {221, sys_fcntl},
    {224, sys_gettid},
    {241, sys_sched_setaffinity},
    {242, sys_sched_getaffinity},
    {243, sys_set_thread_area},
    {252, sys_exit_group},
    {258, sys_set_tid_address},
    {265, sys_clock_gettime},
    {330, sys_dup3},
    {331, sys_pipe2},
    {307, sys_faccessat},
    {439, sys_faccessat2},
    {29, sys_pause},
    {119, sys_sigreturn},
    {173, sys_rt_sigreturn},
    {176, sys_rt_sigpending},
    {179, sys_rt_sigsuspend},
    {238, sys_tkill},
    {240, sys_futex},
    {422, sys_futex_time64},
    {270, sys_tgkill},
    {57, sys_setpgid},
    {65, sys_getpgrp},
    {66, sys_setsid},
    {132, sys_getpgid},
    {147, sys_getsid},
    {186, sys_sigaltstack},
    {190, sys_vfork},
    {309, sys_ppoll},
    {318, sys_getcpu},
    // Linux, arch/x86/entry/syscalls/syscall_32.tbl: the calls on names and disks.
    {9, sys_link},
    {10, sys_unlink},
    {36, sys_sync},
    {38, sys_rename},
    {39, sys_mkdir},
    {40, sys_rmdir},
    {83, sys_symlink},
    {85, sys_readlink},
    {93, sys_ftruncate},
    {118, sys_fsync},
    {148, sys_fsync},
    {194, sys_ftruncate64},
    {296, sys_mkdirat},
    {301, sys_unlinkat},
    {302, sys_renameat},
    {303, sys_linkat},
    {304, sys_symlinkat},
    {305, sys_readlinkat},
};

// Toll's own calls that only i386 has (the rest: k_toll_calls).
constexpr SyscallEntry k_i386_toll_calls[] = {
    {TOLL_SYS_check_isolation, sys_check_isolation}, // isolation.cpp
};

constexpr SyscallTable<syscall_table_size(k_linux_calls, k_toll_calls, k_i386_toll_calls)> g_table{
    k_linux_calls, k_toll_calls, k_i386_toll_calls};

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
