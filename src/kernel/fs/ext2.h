// ext2: Linux's second extended file system, read and written on a disk of
// the block layer through the buffer cache, so that images made by
// Debian's mke2fs are used and e2fsck finds them consistent afterwards.
// Paths here are relative to the file system's root ("/a/b" or "a/b").
#pragma once
#include "kernel/fs/block.h"
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/vm/vmobject.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::fs {

struct Ext2Fs;

/// What stat reports of an inode.
struct Ext2Stat {
    uint32_t ino = 0;
    uint16_t mode = 0;
    uint16_t links = 0;
    uint64_t size = 0;
    uint32_t blocks = 0; ///< 512-byte units
    uint32_t atime = 0, mtime = 0, ctime = 0;
};

/// Reads and checks the superblock and group descriptors of @p device.
/// Refuses (k_einval, with a console line saying why) a disk that is not
/// ext2, has features Toll cannot keep right, or whose geometry does not
/// add up; k_eio if the disk cannot be read.
Result<Ext2Fs*> ext2_mount(BlockDevice& device);

/// The inode @p path names; a symbolic link as the last component is
/// followed if @p follow. k_enoent, k_enotdir, k_eloop, k_enametoolong, k_eio.
Result<uint32_t> ext2_lookup(Ext2Fs& fs, const char* path, bool follow);

/// The regular file @p path names, created with permissions @p mode if
/// absent; k_eexist if it exists and @p exclusive.
Result<uint32_t> ext2_create(Ext2Fs& fs, const char* path, uint16_t mode, bool exclusive);

/// Reads up to @p count bytes at @p offset of inode @p ino into user memory.
long ext2_read(Ext2Fs& fs, uint32_t ino, uint64_t offset, uintptr_t buffer, size_t count);

/// Writes @p count bytes from user memory at @p offset, allocating blocks.
long ext2_write(Ext2Fs& fs, uint32_t ino, uint64_t offset, uintptr_t buffer, size_t count);

/// Cuts or extends (with a hole) regular file @p ino to @p size bytes.
Errno ext2_truncate(Ext2Fs& fs, uint32_t ino, uint64_t size);

Errno ext2_mkdir(Ext2Fs& fs, const char* path, uint16_t mode);
Errno ext2_rmdir(Ext2Fs& fs, const char* path);
Errno ext2_unlink(Ext2Fs& fs, const char* path);
Errno ext2_link(Ext2Fs& fs, const char* existing, const char* path);
Errno ext2_symlink(Ext2Fs& fs, const char* target, const char* path);
Errno ext2_rename(Ext2Fs& fs, const char* from, const char* to);

/// Copies the target of symbolic link @p path (at most @p size bytes, no
/// NUL) to user memory; the length. k_einval if it is no symbolic link.
long ext2_readlink(Ext2Fs& fs, const char* path, uintptr_t buffer, size_t size);

/// Fills user @p buffer with linux_dirent64 records of directory @p ino
/// from byte @p *offset of the directory on, advancing it.
long ext2_getdents(Ext2Fs& fs, uint32_t ino, uint64_t* offset, uintptr_t buffer, size_t count);

Errno ext2_stat(Ext2Fs& fs, uint32_t ino, Ext2Stat* out);

/// What statfs reports of a file system.
struct Ext2FsStat {
    uint32_t block_size = 0;
    uint64_t blocks = 0, free_blocks = 0, reserved_blocks = 0, inodes = 0, free_inodes = 0;
};
void ext2_statfs(Ext2Fs& fs, Ext2FsStat* out);

/// An open file of inode @p ino came (+1) or went (-1): an inode unlinked
/// while open is freed at its last close.
void ext2_open_count(Ext2Fs& fs, uint32_t ino, int delta);

/// Writes every changed block to the disk (sync, fsync): with a journal,
/// commits the running transaction.
Errno ext2_sync(Ext2Fs& fs);

/// ext2_sync, and leaves the file system clean (no recovery needed): the
/// last call before the power goes.
Errno ext2_shutdown(Ext2Fs& fs);

/// An object (vm/vmobject.h) of @p count pages of regular file @p ino from
/// its page @p first_page on, each read into the page cache and pinned; the
/// pages past the end of the file are left out (0). With @p writable_shared,
/// the pages are marked as ones a shared mapping may change: every sync
/// writes them back, and the object's write-back (msync) is a sync.
Result<vm::VmObject*> ext2_object(Ext2Fs& fs, uint32_t ino, uint64_t first_page, size_t count,
                                  bool writable_shared);

/// The disk @p fs is on.
BlockDevice* ext2_device(const Ext2Fs& fs);

/// True if @p fs has an ext3 journal (and writes through it).
bool ext2_journaled(const Ext2Fs& fs);

} // namespace toll::fs
