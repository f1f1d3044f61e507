// The ext2 on-disk format: the superblock, block group descriptors, inodes
// and directory entries, as Linux's ext2 and Debian's e2fsprogs lay them
// out (Documentation/filesystems/ext2.rst; e2fsprogs lib/ext2fs/ext2_fs.h,
// whose field names these follow). All little-endian, as both of Toll's
// architectures are.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::fs::ext2 {

/// The superblock sits 1024 bytes into the disk, and is 1024 bytes long.
constexpr uint32_t k_superblock_offset = 1024, k_superblock_size = 1024;
constexpr uint16_t k_magic = 0xEF53;
/// s_rev_level: 0 has 128-byte inodes and first_ino 11; 1 ("dynamic") says both.
constexpr uint32_t k_good_old_rev = 0, k_dynamic_rev = 1;
constexpr uint32_t k_good_old_inode_size = 128, k_good_old_first_ino = 11;
/// Inode numbers with a fixed role.
constexpr uint32_t k_root_ino = 2;
/// i_block: 12 direct pointers, then single, double and triple indirect.
constexpr unsigned k_direct = 12, k_ind = 12, k_dind = 13, k_tind = 14, k_n_blocks = 15;
/// Feature bits (ext2_fs.h): the incompatible ones Toll reads.
constexpr uint32_t k_incompat_filetype = 0x0002, k_incompat_recover = 0x0004;
/// The read-only-compatible ones Toll keeps right when writing.
constexpr uint32_t k_ro_compat_sparse_super = 0x0001, k_ro_compat_large_file = 0x0002;
constexpr uint32_t k_compat_has_journal = 0x0004;
/// i_flags: a hashed (htree) directory. Toll writes directories linearly and
/// clears it, which every reader of ext2 accepts.
constexpr uint32_t k_index_fl = 0x00001000;
/// A symbolic link shorter than this lives in i_block itself ("fast").
constexpr uint32_t k_fast_symlink_max = 60;
/// Directory entry file types (the filetype feature).
constexpr uint8_t k_ft_unknown = 0, k_ft_reg = 1, k_ft_dir = 2, k_ft_symlink = 7;
/// s_state: cleanly unmounted.
constexpr uint16_t k_valid_fs = 1;

struct Superblock {
    uint32_t s_inodes_count;
    uint32_t s_blocks_count;
    uint32_t s_r_blocks_count;
    uint32_t s_free_blocks_count;
    uint32_t s_free_inodes_count;
    uint32_t s_first_data_block;
    uint32_t s_log_block_size;
    uint32_t s_log_frag_size;
    uint32_t s_blocks_per_group;
    uint32_t s_frags_per_group;
    uint32_t s_inodes_per_group;
    uint32_t s_mtime;
    uint32_t s_wtime;
    uint16_t s_mnt_count;
    uint16_t s_max_mnt_count;
    uint16_t s_magic;
    uint16_t s_state;
    uint16_t s_errors;
    uint16_t s_minor_rev_level;
    uint32_t s_lastcheck;
    uint32_t s_checkinterval;
    uint32_t s_creator_os;
    uint32_t s_rev_level;
    uint16_t s_def_resuid;
    uint16_t s_def_resgid;
    uint32_t s_first_ino;
    uint16_t s_inode_size;
    uint16_t s_block_group_nr;
    uint32_t s_feature_compat;
    uint32_t s_feature_incompat;
    uint32_t s_feature_ro_compat;
    uint8_t s_uuid[16];
    char s_volume_name[16];
    char s_last_mounted[64];
    uint32_t s_algorithm_usage_bitmap;
    uint8_t s_prealloc_blocks;
    uint8_t s_prealloc_dir_blocks;
    uint16_t s_reserved_gdt_blocks;
    uint8_t s_journal_uuid[16];
    uint32_t s_journal_inum;
    uint32_t s_journal_dev;
    uint32_t s_last_orphan;
    uint32_t s_hash_seed[4];
    uint8_t s_def_hash_version;
    uint8_t s_jnl_backup_type;
    uint16_t s_desc_size;
    uint32_t s_default_mount_opts;
    uint32_t s_first_meta_bg;
    uint32_t s_mkfs_time;
    uint32_t s_jnl_blocks[17];
    uint32_t s_blocks_count_hi;
    uint32_t s_r_blocks_count_hi;
    uint32_t s_free_blocks_hi;
    uint16_t s_min_extra_isize;
    uint16_t s_want_extra_isize;
};
static_assert(offsetof(Superblock, s_magic) == 56 && offsetof(Superblock, s_inode_size) == 88 &&
              offsetof(Superblock, s_feature_ro_compat) == 100 &&
              offsetof(Superblock, s_journal_inum) == 224 &&
              offsetof(Superblock, s_want_extra_isize) == 350);

struct GroupDesc {
    uint32_t bg_block_bitmap;
    uint32_t bg_inode_bitmap;
    uint32_t bg_inode_table;
    uint16_t bg_free_blocks_count;
    uint16_t bg_free_inodes_count;
    uint16_t bg_used_dirs_count;
    uint16_t bg_flags;
    uint32_t bg_reserved[3];
};
static_assert(sizeof(GroupDesc) == 32);

/// The first 128 bytes of every inode (the rest, up to s_inode_size, is
/// i_extra_isize and the fields it covers).
struct Inode {
    uint16_t i_mode;
    uint16_t i_uid;
    uint32_t i_size;
    uint32_t i_atime;
    uint32_t i_ctime;
    uint32_t i_mtime;
    uint32_t i_dtime;
    uint16_t i_gid;
    uint16_t i_links_count;
    uint32_t i_blocks; ///< in 512-byte units, indirect blocks included
    uint32_t i_flags;
    uint32_t i_osd1;
    uint32_t i_block[k_n_blocks];
    uint32_t i_generation;
    uint32_t i_file_acl;
    uint32_t i_size_high; ///< regular files (large_file)
    uint32_t i_faddr;
    uint8_t i_osd2[12];
};
static_assert(sizeof(Inode) == 128 && offsetof(Inode, i_block) == 40);
/// Just past the 128 bytes: i_extra_isize (large inodes).
constexpr size_t k_extra_isize_offset = 128;

/// A directory entry's fixed part; name_len bytes of name follow, and
/// rec_len (a multiple of 4) reaches the next entry.
struct DirEntryHeader {
    uint32_t inode;
    uint16_t rec_len;
    uint8_t name_len;
    uint8_t file_type;
};
static_assert(sizeof(DirEntryHeader) == 8);

/// The bytes an entry with a name of @p name_len needs.
constexpr uint32_t dir_rec_len(uint32_t name_len)
{
    return (sizeof(DirEntryHeader) + name_len + 3) & ~3u;
}

} // namespace toll::fs::ext2
