// Linux's generic system call numbers (include/uapi/asm-generic/unistd.h, the
// table arm64 uses) mapped to Toll's implementations, with the few calls
// whose arm64 form differs from the i386 one adapted here.
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
constexpr uintptr_t k_arm64_o_directory = 040000, k_arm64_o_direct = 0200000;

TOLL_COUNTER(g_syscalls, "cpu.syscalls");

// openat(dirfd, path, flags, mode): Toll has no directories to be relative
// to, so dirfd matters only for a relative path, which it cannot resolve.
long sys_openat(const SyscallArgs& a)
{
    if (Errno e = check_at_dirfd(a.a[0], a.a[1]); e != k_ok)
        return -e;
    uintptr_t flags = a.a[2] & ~(k_arm64_o_directory | k_arm64_o_direct);
    if (a.a[2] & k_arm64_o_directory)
        flags |= k_o_directory;
    SyscallArgs shifted{{a.a[1], flags, a.a[3], a.a[4], a.a[5], 0}, a.frame};
    return sys_open(shifted);
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

constexpr SyscallEntry k_linux_calls[] = {
    {23, sys_dup},
    {24, sys_dup3},
    {25, sys_fcntl},
    {29, sys_ioctl},
    {48, sys_faccessat},
    {56, sys_openat},
    {57, sys_close},
    {59, sys_pipe2},
    {61, sys_getdents64},
    {62, sys_lseek},
    {63, sys_read},
    {64, sys_write},
    {65, sys_readv},
    {66, sys_writev},
    {73, sys_ppoll},
    {93, sys_exit},
    {94, sys_exit_group},
    {96, sys_set_tid_address},
    {98, sys_futex},
    {101, sys_nanosleep},
    {113, sys_clock_gettime},
    {122, sys_sched_setaffinity},
    {123, sys_sched_getaffinity},
    {124, sys_sched_yield},
    {129, sys_kill},
    {130, sys_tkill},
    {131, sys_tgkill},
    {132, sys_sigaltstack},
    {133, sys_rt_sigsuspend},
    {134, sys_rt_sigaction},
    {135, sys_rt_sigprocmask},
    {136, sys_rt_sigpending},
    {139, sys_rt_sigreturn},
    {153, sys_times},
    {154, sys_setpgid},
    {155, sys_getpgid},
    {156, sys_getsid},
    {157, sys_setsid},
    {168, sys_getcpu},
    {172, sys_getpid},
    {173, sys_getppid},
    {174, sys_getuid},
    {175, sys_getuid},
    {176, sys_getuid},
    {177, sys_getuid},
    {178, sys_gettid},
    {214, sys_brk},
    {215, sys_munmap},
    {220, sys_clone},
    {221, sys_execve},
    {222, sys_mmap},
    {226, sys_mprotect},
    {260, sys_wait4},
    {439, sys_faccessat2},
    // include/uapi/asm-generic/unistd.h: the calls on names and disks.
    {34, sys_mkdirat},
    {35, sys_unlinkat},
    {36, sys_symlinkat},
    {37, sys_linkat},
    {38, sys_renameat},
    {46, sys_ftruncate},
    {78, sys_readlinkat},
    {81, sys_sync},
    {82, sys_fsync},
    {83, sys_fsync},
};

constexpr SyscallTable<syscall_table_size(k_linux_calls, k_toll_calls)> g_table{k_linux_calls,
                                                                                k_toll_calls};

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
