// The system calls Toll implements, as the architecture's dispatch table
// calls them: six word-sized arguments and the trap frame. Each returns a
// non-negative result or -errno, exactly as Linux does.
#pragma once
#include "kernel/kern/errno.h"
#include "machine/context.h"
#include <stdint.h>

namespace toll::sys {

struct SyscallArgs {
    uintptr_t a[6];
    arch::TrapFrame* frame;
};

using SyscallHandler = long (*)(const SyscallArgs& args);

// Files (sys_file.cpp)
long sys_read(const SyscallArgs&);
long sys_write(const SyscallArgs&);
long sys_readv(const SyscallArgs&);
long sys_writev(const SyscallArgs&);
long sys_open(const SyscallArgs&);
long sys_close(const SyscallArgs&);
long sys_dup(const SyscallArgs&);
long sys_dup2(const SyscallArgs&);
long sys_dup3(const SyscallArgs&);
long sys_pipe(const SyscallArgs&);
long sys_pipe2(const SyscallArgs&);
long sys_ioctl(const SyscallArgs&);
long sys_lseek(const SyscallArgs&);
long sys_llseek(const SyscallArgs&);
long sys_fcntl(const SyscallArgs&);
long sys_access(const SyscallArgs&);
long sys_faccessat(const SyscallArgs&);
long sys_faccessat2(const SyscallArgs&); ///< faccessat with a flags word
long sys_getdents64(const SyscallArgs&); ///< a directory's entries (dir.cpp)

/// For the *at calls: k_ok if @p path (a user pointer) can be resolved
/// against @p dirfd (AT_FDCWD, or any descriptor for an absolute path);
/// k_efault for an unreadable path, k_enotdir for a relative one.
Errno check_at_dirfd(uintptr_t dirfd, uintptr_t path);

// Names and data on the mounted disk (kernel/fs/mount.cpp); paths under /mnt.
long sys_mkdir(const SyscallArgs&);
long sys_mkdirat(const SyscallArgs&);
long sys_rmdir(const SyscallArgs&);
long sys_unlink(const SyscallArgs&);
long sys_unlinkat(const SyscallArgs&);
long sys_link(const SyscallArgs&);
long sys_linkat(const SyscallArgs&);
long sys_rename(const SyscallArgs&);
long sys_renameat(const SyscallArgs&);
long sys_symlink(const SyscallArgs&);
long sys_symlinkat(const SyscallArgs&);
long sys_readlink(const SyscallArgs&);
long sys_readlinkat(const SyscallArgs&);
long sys_fsync(const SyscallArgs&); ///< fdatasync too
long sys_sync(const SyscallArgs&);
long sys_ftruncate(const SyscallArgs&);

// Processes (sys_proc.cpp)
long sys_fork(const SyscallArgs&);
long sys_clone(const SyscallArgs&);
long sys_vfork(const SyscallArgs&);
long sys_futex(const SyscallArgs&);
long sys_futex_time64(const SyscallArgs&);
long sys_execve(const SyscallArgs&);
long sys_exit(const SyscallArgs&);
long sys_exit_group(const SyscallArgs&);
long sys_wait4(const SyscallArgs&);
long sys_waitpid(const SyscallArgs&);
long sys_getpid(const SyscallArgs&);
long sys_getppid(const SyscallArgs&);
long sys_gettid(const SyscallArgs&);
long sys_kill(const SyscallArgs&);
long sys_sched_yield(const SyscallArgs&);
// The scheduler (sys_sched.cpp)
long sys_sched_setaffinity(const SyscallArgs&);
long sys_sched_getaffinity(const SyscallArgs&);
long sys_getcpu(const SyscallArgs&);
long sys_times(const SyscallArgs&); ///< the caller's ticks (sys_sched.cpp)
long sys_set_tid_address(const SyscallArgs&);
long sys_getuid(const SyscallArgs&);
long sys_setpgid(const SyscallArgs&);
long sys_getpgid(const SyscallArgs&);
long sys_getpgrp(const SyscallArgs&); ///< i386 only: arm64's musl calls getpgid(0)
long sys_getsid(const SyscallArgs&);
long sys_setsid(const SyscallArgs&);

// Signals (kernel/proc/signal.cpp)
long sys_tkill(const SyscallArgs&);
long sys_tgkill(const SyscallArgs&);
long sys_rt_sigaction(const SyscallArgs&);
long sys_rt_sigprocmask(const SyscallArgs&);
long sys_rt_sigpending(const SyscallArgs&);
long sys_rt_sigsuspend(const SyscallArgs&);
long sys_pause(const SyscallArgs&);
long sys_sigaltstack(const SyscallArgs&);
long sys_ppoll(const SyscallArgs&); ///< with no descriptors only: musl's pause on arm64
long sys_rt_sigreturn(const SyscallArgs&);
long sys_sigreturn(const SyscallArgs&); ///< i386's frame for handlers without SA_SIGINFO

/// For the dispatchers, when @p handler returned -k_erestartsys (a call
/// interrupted by a signal): returns -EINTR and records in the running
/// thread @p overwritten, the register the result will overwrite, so that
/// the way out can restart the call instead (SA_RESTART, or no handler
/// ran). sigreturn's result is the restored register and passes untouched.
long syscall_interrupted(SyscallHandler handler, uintptr_t overwritten);

// Time (sys_proc.cpp)
long sys_nanosleep(const SyscallArgs&);
long sys_clock_gettime(const SyscallArgs&);

// Memory (sys_mem.cpp)
long sys_brk(const SyscallArgs&);
long sys_mmap_pages(const SyscallArgs&); ///< mmap2: the offset is in pages
long sys_munmap(const SyscallArgs&);
long sys_mprotect(const SyscallArgs&);

// Toll's own (sys_toll.cpp), numbered above Linux's range.
long sys_counter_get(const SyscallArgs&);
long sys_counter_list(const SyscallArgs&);
/// Toll's call 1004: how many TLB entries the caller's present mappings would
/// need (one per page, contiguous run or block), from a walk of its tables.
long sys_tlb_reach(const SyscallArgs&);
long sys_fail_alloc(const SyscallArgs&);

/// Counts a system call that the table does not have and returns -ENOSYS.
long sys_unknown(uintptr_t number);

} // namespace toll::sys
