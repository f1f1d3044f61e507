// The buffer cache: disk blocks held in memory, shared by every reader of a
// block, written back when dirty (at sync, fsync, or when evicted), least
// recently used first out. A file system reads and writes its metadata and
// file data through it.
#pragma once
#include "kernel/fs/block.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::fs {

/// One cached block.
struct Buffer {
    BlockDevice* device = nullptr;
    uint32_t block = 0; ///< block number, in units of size
    uint32_t size = 0;  ///< bytes (the file system's block size)
    uint8_t* data = nullptr;
    bool valid = false;     ///< data holds the disk's contents (or newer)
    bool dirty = false;     ///< data is newer than the disk's
    bool journaled = false; ///< in the journal's running transaction (it holds a reference)
    int refs = 0;           ///< bread()s not yet brelse()d
    uint64_t used = 0;      ///< the LRU clock: when it was last handed out
};

/// The block @p block (of @p size bytes) of @p device, read from the disk
/// unless cached, with a reference the caller gives back with brelse.
/// k_eio when the disk fails, k_enomem when no buffer can be had.
/// Counts bcache.hits and bcache.misses.
Buffer* bread(BlockDevice& device, uint32_t block, uint32_t size, Errno* error);

/// Like bread, but for a block about to be overwritten whole: no read.
Buffer* bget_zeroed(BlockDevice& device, uint32_t block, uint32_t size, Errno* error);

/// Marks @p b changed: it goes to the disk at the next sync (or eviction).
inline void bdirty(Buffer* b)
{
    b->dirty = true;
}

/// Gives back a reference from bread.
void brelse(Buffer* b);

/// Writes @p b to the disk now if it is dirty.
Errno bwrite(Buffer* b);

/// Writes every dirty buffer of @p device to the disk, in block order, runs
/// of neighbouring blocks gathered into one request (counted in
/// blk.merges). Counts bcache.writebacks.
Errno bsync(BlockDevice& device);

/// bsync for the blocks outside the journal's running transaction only:
/// ordered mode's file data, written before the metadata that names it.
Errno bsync_data(BlockDevice& device);

/// How many buffers the cache has (a journal's transaction holds at most a
/// fraction of them).
constexpr size_t k_bcache_buffers = 512;

/// Forgets every clean, unreferenced buffer of @p device (unmount).
void binvalidate(BlockDevice& device);

} // namespace toll::fs
