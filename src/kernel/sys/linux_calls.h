// The one list of the Linux system calls Toll implements, for every port.
// Each row names a call, its number in i386's table
// (arch/x86/entry/syscalls/syscall_32.tbl) and in the generic table arm64
// uses (include/uapi/asm-generic/unistd.h), and the handler. Adding a call
// means adding a row, which asks for both numbers at once: k_none says the
// architecture has no such call (arm64 dropped open, fork and the 16-bit
// ids), and a null handler says the port writes its own (a struct whose
// layout differs, such as struct stat): the port's table must then fill the
// slot, or it does not compile (SyscallTable).
#pragma once
#include "kernel/sys/syscalls.h"
#include <stdint.h>

namespace toll::sys {

/// One row of the list.
struct LinuxCall {
    const char* name;       ///< Linux's name of the call (its syscall_32.tbl entry)
    uint16_t nr_i386;       ///< i386's number, or k_none
    uint16_t nr_arm64;      ///< arm64's number, or k_none
    SyscallHandler handler; ///< nullptr: each port that has it supplies its own
};

/// A number no table uses: "this architecture has no such call".
inline constexpr uint16_t k_none = 0xFFFF;

inline constexpr LinuxCall k_linux_calls[] = {
    // Processes
    {"exit", 1, 93, sys_exit},
    {"exit_group", 252, 94, sys_exit_group},
    {"fork", 2, k_none, sys_fork},
    {"vfork", 190, k_none, sys_vfork},
    {"clone", 120, 220, sys_clone}, // i386 and arm64 take the same argument order
    {"execve", 11, 221, sys_execve},
    {"waitpid", 7, k_none, sys_waitpid},
    {"wait4", 114, 260, sys_wait4},
    {"getpid", 20, 172, sys_getpid},
    {"getppid", 64, 173, sys_getppid},
    {"gettid", 224, 178, sys_gettid},
    {"set_tid_address", 258, 96, sys_set_tid_address},
    {"kill", 37, 129, sys_kill},
    {"tkill", 238, 130, sys_tkill},
    {"tgkill", 270, 131, sys_tgkill},
    {"sched_yield", 158, 124, sys_sched_yield},
    {"sched_setaffinity", 241, 122, sys_sched_setaffinity},
    {"sched_getaffinity", 242, 123, sys_sched_getaffinity},
    {"getcpu", 318, 168, sys_getcpu},
    {"times", 43, 153, sys_times},
    {"futex", 240, 98, sys_futex},
    {"futex_time64", 422, k_none, sys_futex_time64},
    {"setpgid", 57, 154, sys_setpgid},
    {"getpgid", 132, 155, sys_getpgid},
    {"getpgrp", 65, k_none, sys_getpgrp},
    {"getsid", 147, 156, sys_getsid},
    {"setsid", 66, 157, sys_setsid},
    {"prctl", 172, 167, sys_prctl},
    {"getrusage", 77, 165, sys_getrusage},
    // Identity: one user, root
    {"getuid", 24, 174, sys_getuid},
    {"geteuid", 49, 175, sys_getuid},
    {"getgid", 47, 176, sys_getuid},
    {"getegid", 50, 177, sys_getuid},
    {"getuid32", 199, k_none, sys_getuid},
    {"getgid32", 200, k_none, sys_getuid},
    {"geteuid32", 201, k_none, sys_getuid},
    {"getegid32", 202, k_none, sys_getuid},
    {"getresuid32", 209, 148, sys_getresuid},
    {"getresgid32", 211, 150, sys_getresuid},
    {"setuid32", 213, 146, sys_setuid},
    {"setgid32", 214, 144, sys_setuid},
    {"getgroups", 80, k_none, sys_getgroups16},
    {"getgroups32", 205, 158, sys_getgroups},
    {"setgroups32", 206, 159, sys_setgroups},
    // Signals
    {"rt_sigaction", 174, 134, sys_rt_sigaction},
    {"rt_sigprocmask", 175, 135, sys_rt_sigprocmask},
    {"rt_sigpending", 176, 136, sys_rt_sigpending},
    {"rt_sigsuspend", 179, 133, sys_rt_sigsuspend},
    {"rt_sigreturn", 173, 139, sys_rt_sigreturn},
    {"sigreturn", 119, k_none, sys_sigreturn},
    {"sigaltstack", 186, 132, sys_sigaltstack},
    {"pause", 29, k_none, sys_pause},
    // Memory
    {"brk", 45, 214, sys_brk},
    {"mmap2", 192, k_none, sys_mmap_pages},
    {"mmap", k_none, 222, nullptr}, // arm64's offset is in bytes
    {"munmap", 91, 215, sys_munmap},
    {"mprotect", 125, 226, sys_mprotect},
    {"msync", 144, 227, sys_msync},
    // Descriptors
    {"read", 3, 63, sys_read},
    {"write", 4, 64, sys_write},
    {"pread64", 180, k_none, sys_pread64_pair},
    {"pwrite64", 181, k_none, sys_pwrite64_pair},
    {"pread64 (64-bit)", k_none, 67, sys_pread64},
    {"pwrite64 (64-bit)", k_none, 68, sys_pwrite64},
    {"readv", 145, 65, sys_readv},
    {"writev", 146, 66, sys_writev},
    {"close", 6, 57, sys_close},
    {"dup", 41, 23, sys_dup},
    {"dup2", 63, k_none, sys_dup2},
    {"dup3", 330, 24, sys_dup3},
    {"pipe", 42, k_none, sys_pipe},
    {"pipe2", 331, 59, sys_pipe2},
    {"ioctl", 54, 29, sys_ioctl},
    {"fcntl", 55, 25, sys_fcntl},
    {"fcntl64", 221, k_none, sys_fcntl},
    {"lseek", 19, 62, sys_lseek},
    {"_llseek", 140, k_none, sys_llseek},
    {"getdents64", 220, 61, sys_getdents64},
    {"sendfile", 187, k_none, sys_sendfile},
    {"sendfile64", 239, 71, sys_sendfile64},
    {"fsync", 118, 82, sys_fsync},
    {"fdatasync", 148, 83, sys_fsync},
    {"sync", 36, 81, sys_sync},
    {"poll", 168, k_none, sys_poll},
    {"ppoll", 309, 73, sys_ppoll},
    {"ppoll_time64", 414, k_none, sys_ppoll_time64},
    {"_newselect", 142, k_none, sys_select},
    {"pselect6", 308, 72, sys_pselect6},
    {"pselect6_time64", 413, k_none, sys_pselect6_time64},
    // Names of the file tree
    {"open", 5, k_none, sys_open},
    {"openat", 295, 56, sys_openat}, // arm64's table puts its flag adapter over it
    {"creat", 8, k_none, sys_creat},
    {"access", 33, k_none, sys_access},
    {"faccessat", 307, 48, sys_faccessat},
    {"faccessat2", 439, 439, sys_faccessat2},
    {"mkdir", 39, k_none, sys_mkdir},
    {"mkdirat", 296, 34, sys_mkdirat},
    {"unlink", 10, k_none, sys_unlink},
    {"unlinkat", 301, 35, sys_unlinkat},
    {"rmdir", 40, k_none, sys_rmdir},
    {"rename", 38, k_none, sys_rename},
    {"renameat", 302, 38, sys_renameat},
    {"renameat2", 353, 276, sys_renameat2},
    {"link", 9, k_none, sys_link},
    {"linkat", 303, 37, sys_linkat},
    {"symlink", 83, k_none, sys_symlink},
    {"symlinkat", 304, 36, sys_symlinkat},
    {"readlink", 85, k_none, sys_readlink},
    {"readlinkat", 305, 78, sys_readlinkat},
    {"chmod", 15, k_none, sys_chmod},
    {"fchmod", 94, 52, sys_fchmod},
    {"fchmodat", 306, 53, sys_fchmodat},
    {"chown32", 212, k_none, sys_chown},
    {"lchown32", 198, k_none, sys_lchown},
    {"fchown32", 207, 55, sys_fchown},
    {"fchownat", 298, 54, sys_fchownat},
    {"utimensat", 320, 88, sys_utimensat},
    {"utimensat_time64", 412, k_none, sys_utimensat_time64},
    {"getcwd", 183, 17, sys_getcwd},
    {"chdir", 12, 49, sys_chdir},
    {"fchdir", 133, 50, sys_fchdir},
    {"umask", 60, 166, sys_umask},
    {"truncate", 92, 45, sys_truncate},
    {"ftruncate", 93, 46, sys_ftruncate},
    {"truncate64", 193, k_none, sys_truncate64_pair},
    {"ftruncate64", 194, k_none, sys_ftruncate64_pair},
    // The stat family: statx is one layout everywhere, the rest each port's
    {"statx", 383, 291, sys_statx},
    {"stat64", 195, k_none, nullptr},
    {"lstat64", 196, k_none, nullptr},
    {"fstat64", 197, k_none, nullptr},
    {"fstatat64", 300, 79, nullptr}, // arm64's newfstatat
    {"fstat", k_none, 80, nullptr},
    {"statfs64", 268, k_none, nullptr},
    {"fstatfs64", 269, k_none, nullptr},
    {"statfs", k_none, 43, nullptr},
    {"fstatfs", k_none, 44, nullptr},
    // Sockets (i386 has had the direct calls since Linux 4.3, beside socketcall)
    {"socketcall", 102, k_none, sys_socketcall},
    {"socket", 359, 198, sys_socket},
    {"socketpair", 360, 199, sys_socketpair},
    {"bind", 361, 200, sys_bind},
    {"connect", 362, 203, sys_connect},
    {"listen", 363, 201, sys_listen},
    {"accept", k_none, 202, sys_accept},
    {"accept4", 364, 242, sys_accept4},
    {"getsockopt", 365, 209, sys_getsockopt},
    {"setsockopt", 366, 208, sys_setsockopt},
    {"getsockname", 367, 204, sys_getsockname},
    {"getpeername", 368, 205, sys_getpeername},
    {"sendto", 369, 206, sys_sendto},
    {"sendmsg", 370, 211, sys_sendmsg},
    {"recvfrom", 371, 207, sys_recvfrom},
    {"recvmsg", 372, 212, sys_recvmsg},
    {"shutdown", 373, 210, sys_shutdown},
    // The system and its clocks
    {"uname", 122, 160, sys_uname},
    {"sysinfo", 116, 179, sys_sysinfo},
    {"getrandom", 355, 278, sys_getrandom},
    {"ugetrlimit", 191, 163, sys_getrlimit},
    {"setrlimit", 75, 164, sys_setrlimit},
    {"prlimit64", 340, 261, sys_prlimit64},
    {"nanosleep", 162, 101, sys_nanosleep},
    {"clock_gettime", 265, 113, sys_clock_gettime},
    {"clock_gettime64", 403, k_none, sys_clock_gettime64},
    {"clock_getres", 266, 114, sys_clock_getres},
    {"clock_getres_time64", 406, k_none, sys_clock_getres_time64},
    {"clock_nanosleep", 267, 115, sys_clock_nanosleep},
    {"clock_nanosleep_time64", 407, k_none, sys_clock_nanosleep_time64},
    {"gettimeofday", 78, 169, sys_gettimeofday},
};

} // namespace toll::sys
