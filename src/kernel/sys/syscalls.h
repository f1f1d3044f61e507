// The system calls Toll implements, as the architecture's dispatch table
// calls them: six word-sized arguments and the trap frame. Each returns a
// non-negative result or -errno, exactly as Linux does.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/sys/vfs.h"
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
long sys_pread64(const SyscallArgs&);       ///< the offset one 64-bit register
long sys_pwrite64(const SyscallArgs&);      ///< the offset one 64-bit register
long sys_pread64_pair(const SyscallArgs&);  ///< the offset in two 32-bit halves (low first)
long sys_pwrite64_pair(const SyscallArgs&); ///< the offset in two 32-bit halves (low first)
long sys_readv(const SyscallArgs&);
long sys_writev(const SyscallArgs&);
long sys_open(const SyscallArgs&); ///< sys_path.cpp, as the other path calls
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

// Names of the file tree (sys_path.cpp)
long sys_creat(const SyscallArgs&);
long sys_openat(const SyscallArgs&);
long sys_mkdir(const SyscallArgs&);
long sys_mkdirat(const SyscallArgs&);
long sys_unlink(const SyscallArgs&);
long sys_unlinkat(const SyscallArgs&);
long sys_rmdir(const SyscallArgs&);
long sys_rename(const SyscallArgs&);
long sys_renameat(const SyscallArgs&);
long sys_renameat2(const SyscallArgs&);
long sys_link(const SyscallArgs&);
long sys_linkat(const SyscallArgs&);
long sys_symlink(const SyscallArgs&);
long sys_symlinkat(const SyscallArgs&);
long sys_readlink(const SyscallArgs&);
long sys_readlinkat(const SyscallArgs&);
long sys_chmod(const SyscallArgs&);
long sys_fchmod(const SyscallArgs&);
long sys_fchmodat(const SyscallArgs&);
long sys_chown(const SyscallArgs&);
long sys_lchown(const SyscallArgs&);
long sys_fchown(const SyscallArgs&);
long sys_fchownat(const SyscallArgs&);
long sys_utimensat(const SyscallArgs&);        ///< times as the native struct timespec
long sys_utimensat_time64(const SyscallArgs&); ///< times as two 64-bit words each
long sys_getcwd(const SyscallArgs&);
long sys_chdir(const SyscallArgs&);
long sys_fchdir(const SyscallArgs&);
long sys_umask(const SyscallArgs&);
long sys_truncate(const SyscallArgs&);
long sys_ftruncate(const SyscallArgs&);
long sys_truncate64_pair(const SyscallArgs&);  ///< the length in two 32-bit halves (low first)
long sys_ftruncate64_pair(const SyscallArgs&); ///< the length in two 32-bit halves (low first)
long sys_fsync(const SyscallArgs&);
long sys_sync(const SyscallArgs&);

/// What the stat calls report, in no particular layout: each port writes
/// its own struct stat from it (i386's stat64, arm64's generic stat).
struct FileStat {
    uint64_t dev = 0, ino = 0;
    uint32_t mode = 0, nlink = 0, uid = 0, gid = 0;
    uint64_t rdev = 0;
    int64_t size = 0;
    uint32_t blksize = 0;
    uint64_t blocks = 0; ///< 512-byte blocks
    Timestamp atime, mtime, ctime;
};

/// fstatat(dirfd, path, flags) into @p out (the flags: AT_SYMLINK_NOFOLLOW,
/// AT_EMPTY_PATH, AT_NO_AUTOMOUNT). Linux's errors.
Errno stat_at(uintptr_t dirfd, uintptr_t path, uintptr_t flags, FileStat* out);

/// fstat(fd) into @p out; k_ebadf.
Errno stat_fd(uintptr_t fd, FileStat* out);

/// What statfs reports, for the ports' struct statfs layouts.
struct FsStat {
    uint64_t type = 0, bsize = 0, blocks = 0, bfree = 0, bavail = 0, files = 0, ffree = 0,
             namelen = 0, frsize = 0;
};

/// statfs(path) (@p fd < 0) or fstatfs(fd) into @p out.
Errno statfs_of(uintptr_t path, long fd, FsStat* out);

// The stat family and the calls about the system (sys_stat.cpp, sys_misc.cpp)
long sys_statx(const SyscallArgs&);
long sys_uname(const SyscallArgs&);
long sys_sysinfo(const SyscallArgs&);
long sys_getrandom(const SyscallArgs&);
long sys_getrlimit(const SyscallArgs&); ///< the native struct rlimit (i386: ugetrlimit)
long sys_setrlimit(const SyscallArgs&);
long sys_prlimit64(const SyscallArgs&);
long sys_getgroups(const SyscallArgs&);   ///< 32-bit group ids (i386: getgroups32)
long sys_getgroups16(const SyscallArgs&); ///< i386's old getgroups, 16-bit ids
long sys_setgroups(const SyscallArgs&);
long sys_sendfile(const SyscallArgs&);   ///< the offset a native long
long sys_sendfile64(const SyscallArgs&); ///< the offset 64 bits
long sys_getrusage(const SyscallArgs&);
long sys_prctl(const SyscallArgs&);
long sys_getresuid(const SyscallArgs&);
long sys_setuid(const SyscallArgs&);

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
long sys_rt_sigreturn(const SyscallArgs&);
long sys_sigreturn(const SyscallArgs&); ///< i386's frame for handlers without SA_SIGINFO

/// For the dispatchers, when @p handler returned -k_erestartsys (a call
/// interrupted by a signal): returns -EINTR and records in the running
/// thread @p overwritten, the register the result will overwrite, so that
/// the way out can restart the call instead (SA_RESTART, or no handler
/// ran). sigreturn's result is the restored register and passes untouched.
long syscall_interrupted(SyscallHandler handler, uintptr_t overwritten);

// Time (sys_time.cpp)
long sys_nanosleep(const SyscallArgs&);
long sys_clock_gettime(const SyscallArgs&); ///< the native struct timespec
long sys_clock_gettime64(const SyscallArgs&);
long sys_gettimeofday(const SyscallArgs&);
long sys_clock_getres(const SyscallArgs&);
long sys_clock_getres_time64(const SyscallArgs&);
long sys_clock_nanosleep(const SyscallArgs&);
long sys_clock_nanosleep_time64(const SyscallArgs&);

// Waiting on descriptors (sys_poll.cpp)
long sys_poll(const SyscallArgs&);
long sys_ppoll(const SyscallArgs&); ///< the native timespec (musl's pause on arm64: no descriptors)
long sys_ppoll_time64(const SyscallArgs&);
long sys_select(const SyscallArgs&);   ///< the native timeval
long sys_pselect6(const SyscallArgs&); ///< the native timespec
long sys_pselect6_time64(const SyscallArgs&);

// Memory (sys_mem.cpp)
long sys_brk(const SyscallArgs&);
long sys_mmap_pages(const SyscallArgs&); ///< mmap2: the offset is in pages
long sys_munmap(const SyscallArgs&);
long sys_mprotect(const SyscallArgs&);
long sys_msync(const SyscallArgs&);

// Sockets (kernel/net/socket.cpp: the network stack's, declared here for the
// tables).
long sys_socket(const SyscallArgs&);
long sys_socketpair(const SyscallArgs&);
long sys_bind(const SyscallArgs&);
long sys_connect(const SyscallArgs&);
long sys_listen(const SyscallArgs&);
long sys_accept4(const SyscallArgs&);
long sys_accept(const SyscallArgs&);
long sys_getsockname(const SyscallArgs&);
long sys_getpeername(const SyscallArgs&);
long sys_sendto(const SyscallArgs&);
long sys_recvfrom(const SyscallArgs&);
long sys_sendmsg(const SyscallArgs&);
long sys_recvmsg(const SyscallArgs&);
long sys_shutdown(const SyscallArgs&);
long sys_setsockopt(const SyscallArgs&);
long sys_getsockopt(const SyscallArgs&);
/// i386's multiplexer: socketcall(call, args), every socket call through one
/// number with its arguments in user memory (linux/net.h's SYS_* numbers).
long sys_socketcall(const SyscallArgs&);

// Toll's own (sys_toll.cpp), numbered above Linux's range.
long sys_counter_get(const SyscallArgs&);
long sys_counter_list(const SyscallArgs&);
long sys_profile(const SyscallArgs&);
/// Toll's call 1004: how many TLB entries the caller's present mappings would
/// need (one per page, contiguous run or block), from a walk of its tables.
long sys_tlb_reach(const SyscallArgs&);
long sys_fail_alloc(const SyscallArgs&);

/// Counts a system call that the table does not have (by number) and returns
/// -ENOSYS; the first time a number comes in a boot, the console says so,
/// with the program that asked, so that the next missing call is one look
/// away.
long sys_unknown(uintptr_t number);

/// How many times call @p number came without a handler since boot (0 for
/// numbers past the 1024 tracked). /proc/syscalls_unknown lists them.
uint32_t unknown_call_count(uintptr_t number);

} // namespace toll::sys
