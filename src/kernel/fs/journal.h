// ext3's journal in the JBD2 format, ordered mode: the metadata blocks an
// operation changes join the running transaction (held in the buffer cache,
// never written home early); a commit writes the file data home first, then
// a descriptor block, the metadata blocks and a commit block to the journal,
// then the metadata home (a checkpoint), and empties the journal. After a
// crash, e2fsck replays a committed transaction and ignores an unfinished one.
#pragma once
#include "kernel/fs/bcache.h"
#include "kernel/kern/errno.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::fs {

struct Ext2Fs;

/// JBD2's on-disk constants (Linux, include/linux/jbd2.h). Every journal
/// field is big-endian.
namespace jbd2 {
constexpr uint32_t k_magic = 0xC03B3998;
constexpr uint32_t k_descriptor_block = 1, k_commit_block = 2, k_superblock_v1 = 3,
                   k_superblock_v2 = 4, k_revoke_block = 5;
/// Tag flags: the block's first word was the magic (zeroed in the log);
/// the tag's UUID is the previous one's (none follows); the last tag.
constexpr uint16_t k_flag_escape = 1, k_flag_same_uuid = 2, k_flag_last_tag = 8;
/// Incompatible features Toll writes correctly: revoke records (it writes
/// none, which a reader accepts) and 64-bit block numbers in tags.
constexpr uint32_t k_incompat_revoke = 0x1, k_incompat_64bit = 0x2;
/// Journal superblock field offsets (journal_superblock_t).
constexpr size_t k_sb_blocksize = 12, k_sb_maxlen = 16, k_sb_first = 20, k_sb_sequence = 24,
                 k_sb_start = 28, k_sb_feature_compat = 36, k_sb_feature_incompat = 40,
                 k_sb_feature_ro_compat = 44, k_sb_uuid = 48;
/// The block header: magic, block type, sequence (journal_header_t).
constexpr size_t k_header_size = 12;
/// A tag without checksums: block number, checksum (unused), flags; 64-bit
/// adds the high half of the block number.
constexpr size_t k_tag_size = 8, k_tag64_size = 12, k_uuid_size = 16;
/// Commit block: h_commit_sec (64-bit) and h_commit_nsec (commit_header).
constexpr size_t k_commit_sec = 48, k_commit_nsec = 56;
} // namespace jbd2

struct Journal {
    uint32_t* map = nullptr; ///< journal block i -> disk block (from inode 8's block map)
    uint32_t maxlen = 0;     ///< journal blocks
    uint32_t first = 0;      ///< the first block of the log (after the superblock)
    uint32_t sequence = 0;   ///< the next transaction's number
    uint8_t uuid[jbd2::k_uuid_size] = {};
    size_t tag_size = jbd2::k_tag_size;
    uint8_t* super = nullptr;   ///< the journal superblock as on disk
    uint8_t* scratch = nullptr; ///< one block for descriptors and escaped copies
    Buffer** tx = nullptr;      ///< the running transaction's metadata buffers
    size_t count = 0, capacity = 0;
};

/// Opens the journal of @p fs (has_journal): reads inode 8's block map and
/// the journal superblock, which must be empty (e2fsck replays a full one)
/// and use no feature Toll cannot write. Marks the file system as needing
/// recovery while mounted. k_einval (with the reason printed) or k_eio.
Errno journal_open(Ext2Fs& fs);

/// Marks metadata buffer @p b changed in the running transaction (or, with
/// no journal, simply dirty).
void mdirty(Ext2Fs& fs, Buffer* b);

/// True when the running transaction is past @p fraction of what fits
/// (1/fraction): the caller commits before adding more.
bool journal_wants_commit(const Ext2Fs& fs, unsigned fraction);

/// Commits the running transaction as described above. Counts
/// jbd2.commits, jbd2.blocks_logged. With no journal: writes every dirty block.
Errno journal_commit(Ext2Fs& fs);

/// At power-off: clears the needs-recovery flag and commits, leaving the
/// file system clean.
Errno journal_close(Ext2Fs& fs);

} // namespace toll::fs
