// The disk mounted at /mnt: at boot the first disk holding an ext2 file
// system is mounted there, and open() and the calls on names hand every
// path under /mnt to it. Its files are Files (kernel/sys/file.h) like any.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/vm/vmobject.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::fs {

/// Where the disk's file system appears.
constexpr char k_mount_point[] = "/mnt";

/// Probes the disks (arch::disks_init) and mounts the first that holds an
/// ext2 file system at /mnt; a disk that is refused says why on the console.
void mount_init();

/// Writes what the mounted file system holds changed to its disk (the
/// kernel calls it before powering off).
void mount_sync();

/// True if @p path (absolute) lies under /mnt and a disk is mounted there.
bool mount_owns(const char* path);

/// open() of a path under /mnt (mount_owns): k_enoent, k_eexist, k_eisdir,
/// k_enotdir, k_eloop, k_enospc, k_eio as Linux gives them. A file it
/// creates has permissions @p mode less the process's umask.
Result<sys::FileRef> mount_open(const char* path, int flags, uint32_t mode);

/// True if @p file is a directory of the mounted disk (for getdents64).
bool mount_is_dir(const sys::File& file);

/// getdents64 on such a directory.
long mount_getdents(sys::File& file, uintptr_t buffer, size_t count);

/// Whether the user path at @p user names a place under /mnt while a disk
/// is mounted there, or is relative while the working directory is on the
/// disk: then the call on it is the disk's (the mnt_ handlers below), else
/// the file tree's (vfs.h). (An *at call's relative path counts from the
/// working directory here, whatever its directory descriptor.)
bool mount_claims_path(uintptr_t user);

/// Whether the calling process's working directory is on the disk (chdir
/// into /mnt put it there; a chdir elsewhere takes it back to the tree).
bool mount_cwd_on_disk();

/// open() of a path relative to a working directory on the disk.
Result<sys::FileRef> mount_open_at_cwd(const char* path, int flags, uint32_t mode);

/// @p path made absolute against a working directory on the disk, into
/// @p out (@p size bytes); k_enametoolong if it does not fit.
Errno mount_absolute(const char* path, char* out, size_t size);

/// chdir to a directory of the disk, and getcwd there.
long mnt_chdir(const sys::SyscallArgs&);
long mnt_faccessat2(const sys::SyscallArgs&); ///< its flags checked by the caller
long mnt_getcwd(const sys::SyscallArgs&);

/// The object mmap maps for descriptor @p fd: @p count pages of its file
/// from page @p first_page on, in the page cache. k_ebadf for no such
/// descriptor, k_enodev for one that is no file of the disk, k_eacces when
/// the descriptor was not opened for reading, or a shared writable mapping
/// is asked of one not opened for writing (Linux's rules).
Result<vm::VmObject*> mount_map_fd(int fd, uint64_t first_page, size_t count, bool shared,
                                   bool writable);

/// What exec needs of the disk's program @p path (mount_owns): its size,
/// and an object of all its pages. k_eacces for no regular file with an
/// execute bit, and the errors of a lookup.
Result<vm::VmObject*> mount_exec_object(const char* path, uint64_t* size);

/// stat of the disk's path @p path (mount_owns), the last link followed if
/// @p follow; fstat of descriptor @p fd (mount_claims_fd).
Errno mount_stat_path(const char* path, bool follow, sys::FileStat* out);
Errno mount_stat_fd(int fd, sys::FileStat* out);

/// statfs of the disk: ext2's magic number and the superblock's counts.
void mount_statfs(sys::FsStat* out);

/// The line of /proc/mounts for the disk ("" when none is mounted).
size_t mount_describe(char* out, size_t size);

/// Whether descriptor @p fd is a file or directory of the mounted disk.
bool mount_claims_fd(uintptr_t fd);

// The calls on names and data of the mounted disk, with the system calls'
// arguments; the file tree's handlers (sys_path.cpp) hand them the paths
// and descriptors mount_claims_path and mount_claims_fd claim.
long mnt_mkdir(const sys::SyscallArgs&);
long mnt_mkdirat(const sys::SyscallArgs&);
long mnt_rmdir(const sys::SyscallArgs&);
long mnt_unlink(const sys::SyscallArgs&);
long mnt_unlinkat(const sys::SyscallArgs&);
long mnt_link(const sys::SyscallArgs&);
long mnt_linkat(const sys::SyscallArgs&);
long mnt_rename(const sys::SyscallArgs&);
long mnt_renameat(const sys::SyscallArgs&);
long mnt_symlink(const sys::SyscallArgs&);
long mnt_symlinkat(const sys::SyscallArgs&);
long mnt_readlink(const sys::SyscallArgs&);
long mnt_readlinkat(const sys::SyscallArgs&);
long mnt_fsync(const sys::SyscallArgs&); ///< fdatasync too
long mnt_sync(const sys::SyscallArgs&);
long mnt_ftruncate(const sys::SyscallArgs&);

} // namespace toll::fs
