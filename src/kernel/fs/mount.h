// The disk mounted at /mnt: at boot the first disk holding an ext2 file
// system is mounted there, and open() and the calls on names hand every
// path under /mnt to it. Its files are Files (kernel/sys/file.h) like any.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/sys/file.h"
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
/// k_enotdir, k_eloop, k_enospc, k_eio as Linux gives them.
Result<sys::FileRef> mount_open(const char* path, int flags);

/// True if @p file is a directory of the mounted disk (for getdents64).
bool mount_is_dir(const sys::File& file);

/// getdents64 on such a directory.
long mount_getdents(sys::File& file, uintptr_t buffer, size_t count);

} // namespace toll::fs
