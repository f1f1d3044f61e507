// The page cache: the pages of files, each held in memory once and shared by
// every process that reads it (read copies from it) or maps it (the mapping
// enters the very page). A page is named by its file (the file system and
// the inode number) and its index in the file. The file system fills a page
// on a miss and keeps the pages right when the file is written, cut or
// freed; the cache chooses what to evict, by the clock algorithm, when it
// is full or memory runs short. Counters: pagecache.hits, pagecache.misses,
// pagecache.evictions, pagecache.writebacks, and the gauge pagecache.pages.
//
// Lock: "fs.pagecache", a spinlock over the table, taken with nothing or a
// file system's lock held, and by the page allocator's reclaim hook (which
// may run under "vm.space"): it is below "vm.space" and above "vm.phys". A
// copy to or from user memory is never made with it held; a page in use is
// pinned (a page reference) instead, so that eviction leaves it alone.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/vm/arch.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::fs {

using vm::PhysAddr;

/// The cached page @p index of inode @p ino of file system @p owner, pinned
/// (the caller gives it back with pc_unpin), or nothing on a miss. Counts a
/// hit or a miss.
Optional<PhysAddr> pc_find(const void* owner, uint32_t ino, uint32_t index);

/// A page to fill for a miss, pinned for the caller; k_enomem if none can be had.
Result<PhysAddr> pc_alloc();

/// Adds page @p pa, filled by the caller, as page @p index of @p ino. The
/// cache takes a reference of its own (the caller's pin stays the
/// caller's); when no slot can be freed the page is simply not cached.
void pc_insert(const void* owner, uint32_t ino, uint32_t index, PhysAddr pa);

/// Gives back a pin from pc_find or pc_alloc: a page nobody holds is freed.
void pc_unpin(PhysAddr pa);

/// write() changed bytes [@p within, @p within + @p n) of page @p index:
/// the cached page, if any, takes them from @p src.
void pc_update(const void* owner, uint32_t ino, uint32_t index, size_t within, const void* src,
               size_t n);

/// Forgets the pages of @p ino from @p from_index on (truncate, or the inode
/// freed). A page a mapping still holds stays the mapping's.
void pc_invalidate(const void* owner, uint32_t ino, uint32_t from_index);

/// Marks a cached page as one a shared writable mapping may change: the
/// file system's sync writes it back (pc_writable_pages), and its
/// instruction cache is never trusted clean.
void pc_mark_writable_shared(const void* owner, uint32_t ino, uint32_t index);

/// Calls @p visit for each page of @p owner marked writable-shared (a pin
/// held across the call, the table's lock not): what sync writes back. A
/// page that no mapping holds any more loses the mark afterwards.
void pc_writable_pages(const void* owner,
                       void (*visit)(void* context, uint32_t ino, uint32_t index, PhysAddr pa),
                       void* context);

/// Counts one page written back from a shared mapping.
void pc_count_writeback();

/// Evicts up to a few pages nobody but the cache holds (the clock's
/// choice); how many it freed. The page allocator calls it when memory is
/// short; the cache itself when its table is full.
size_t pc_reclaim();

/// How many pages the table can hold.
size_t pc_capacity();

} // namespace toll::fs
