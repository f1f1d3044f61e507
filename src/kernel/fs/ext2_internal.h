// What ext2.cpp, ext2_file.cpp, ext2_dirent.cpp and ext2_dir.cpp share: the
// mounted file system's state, the inode, bitmap and block-map helpers, and
// the directory entries. Not for the rest of the kernel.
#pragma once
#include "kernel/fs/bcache.h"
#include "kernel/fs/ext2.h"
#include "kernel/fs/ext2_format.h"
#include "kernel/fs/journal.h"
#include "kernel/proc/mutex.h"

namespace toll::fs {

// Linux, include/uapi/linux/stat.h: the file type bits of i_mode.
constexpr uint16_t k_mode_type = 0170000, k_mode_reg = 0100000, k_mode_dir = 040000,
                   k_mode_lnk = 0120000;

/// An inode open in some File: freed at the last close once unlinked.
struct OpenInode {
    uint32_t ino = 0;
    int opens = 0;
};

struct Ext2Fs {
    BlockDevice* device = nullptr;
    ext2::Superblock sb{};          ///< the superblock as it is now (written back at sync)
    Buffer* super_buffer = nullptr; ///< held while mounted
    uint32_t super_offset = 0;      ///< where the superblock sits in it
    ext2::GroupDesc* groups = nullptr;
    Buffer** gdt_buffers = nullptr; ///< the descriptor blocks, held
    uint32_t block_size = 0, group_count = 0, inode_size = 0, first_ino = 0;
    uint32_t time_base = 0;      ///< the image's last write: the clock starts there
    bool filetype = false;       ///< directory entries carry a file type
    proc::Mutex lock{"fs.ext2"}; ///< the file system lock (FsLock)
    Journal* journal = nullptr;  ///< ext3's journal, or nullptr (plain ext2)
    static constexpr size_t k_max_open = 64;
    OpenInode open[k_max_open];
};

/// The file system's lock, held across every operation (they sleep on the
/// disk): "fs.ext2", a sleeping lock (proc::Mutex), so that a second
/// thread, on this CPU or another, sleeps until the first is done.
class [[nodiscard]] FsLock {
  public:
    explicit FsLock(Ext2Fs& fs) : m_fs(fs)
    {
        m_fs.lock.lock();
        // Between operations the metadata is consistent: a transaction
        // grown past half its room is committed before this one adds more.
        if (journal_wants_commit(m_fs, 2))
            (void)journal_commit(m_fs);
    }
    ~FsLock() { m_fs.lock.unlock(); }
    FsLock(const FsLock&) = delete;
    FsLock& operator=(const FsLock&) = delete;

  private:
    Ext2Fs& m_fs;
};

// Linux, include/uapi/linux/limits.h: NAME_MAX.
constexpr size_t k_name_max = 255;

// Directory entries (ext2_dirent.cpp).
/// The entry type (EXT2_FT_*) of an inode of mode @p mode.
uint8_t file_type(uint16_t mode);
bool is_dir(const ext2::Inode& in);
/// The inode that @p name names in directory @p dir_ino (0 if none).
Errno dir_find(Ext2Fs& fs, uint32_t dir_ino, const char* name, size_t length, uint32_t* out);
/// Stamps a directory changed (and drops its hash-tree flag).
void touch_dir(Ext2Fs& fs, ext2::Inode& dir);
/// Adds the entry @p name -> @p ino (of entry type @p type) to directory @p dir_ino.
Errno dir_add(Ext2Fs& fs, uint32_t dir_ino, const char* name, size_t length, uint32_t ino,
              uint8_t type);
/// Removes the entry @p name from directory @p dir_ino.
Errno dir_remove(Ext2Fs& fs, uint32_t dir_ino, const char* name, size_t length);
/// True in *empty if directory @p ino holds only "." and "..".
Errno dir_empty(Ext2Fs& fs, uint32_t ino, bool* empty);
/// Points directory @p ino's ".." at @p parent.
Errno dir_set_dotdot(Ext2Fs& fs, uint32_t ino, uint32_t parent);

Errno corrupt(Ext2Fs& fs, const char* what, uint32_t number);
uint32_t ext2_now(Ext2Fs& fs);
/// bread of a file-system block, refusing one past the end (corrupt).
Buffer* fs_bread(Ext2Fs& fs, uint32_t block, Errno* e);
void super_dirty(Ext2Fs& fs);
Errno inode_read(Ext2Fs& fs, uint32_t ino, ext2::Inode* out);
Errno inode_write(Ext2Fs& fs, uint32_t ino, const ext2::Inode& in);
Errno inode_write_new(Ext2Fs& fs, uint32_t ino, const ext2::Inode& in);
uint64_t inode_size(const ext2::Inode& in);
void inode_set_size(ext2::Inode& in, uint64_t size);
uint32_t inode_group(Ext2Fs& fs, uint32_t ino);
Result<uint32_t> block_alloc(Ext2Fs& fs, uint32_t goal_group);
Errno block_free(Ext2Fs& fs, uint32_t block);
Result<uint32_t> inode_alloc(Ext2Fs& fs, uint32_t goal_group, bool directory);
Errno inode_free(Ext2Fs& fs, uint32_t ino, bool directory);
/// The disk block of file block @p lblock (0: a hole), allocating it and
/// any indirect block on the way if @p create. Updates @p in (the caller
/// writes it back).
Errno bmap(Ext2Fs& fs, ext2::Inode& in, uint32_t ino, uint32_t lblock, bool create, uint32_t* out);
/// Frees the blocks past @p size bytes and sets the size.
Errno inode_cut(Ext2Fs& fs, ext2::Inode& in, uint64_t size);

} // namespace toll::fs
