// The buffer cache: a fixed table of buffers searched linearly (small: a
// teaching kernel's disk is a few megabytes), LRU replacement among the
// unreferenced ones. Lock: the file system's (ext2) lock, held by every
// caller: one mounted file system is the only user.
#include "kernel/fs/bcache.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/result.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::fs {
namespace {

Buffer g_buffers[k_bcache_buffers];
uint64_t g_clock;

TOLL_COUNTER(g_hits, "bcache.hits");
TOLL_COUNTER(g_misses, "bcache.misses");
TOLL_COUNTER(g_evictions, "bcache.evictions");
TOLL_COUNTER(g_writebacks, "bcache.writebacks");
TOLL_COUNTER(g_merges, "blk.merges");

Errno write_out(Buffer* b)
{
    Errno e = block_io(*b->device, uint64_t(b->block) * (b->size / k_sector_size),
                       b->size / k_sector_size, b->data, true);
    if (e == k_ok) {
        b->dirty = false;
        g_writebacks.add();
    }
    return e;
}

// A buffer for (device, block): the cached one, or a free or evicted one
// (its data not yet read: valid is false). nullptr when every buffer is held.
Buffer* lookup(BlockDevice& device, uint32_t block, uint32_t size, Errno* error)
{
    Buffer* victim = nullptr;
    for (Buffer& b : g_buffers) {
        if (b.device == &device && b.block == block && b.size == size && b.data) {
            ++b.refs;
            b.used = ++g_clock;
            g_hits.add();
            return &b;
        }
        if (b.refs == 0 && (!victim || !b.data || (victim->data && b.used < victim->used)))
            victim = &b;
    }
    if (!victim) {
        *error = k_enomem;
        return nullptr;
    }
    g_misses.add();
    if (victim->data && victim->dirty) {
        if (Errno e = write_out(victim); e != k_ok) {
            *error = e;
            return nullptr;
        }
    }
    if (victim->data) {
        g_evictions.add();
        if (victim->size != size) {
            vm::kfree(victim->data);
            victim->data = nullptr;
        }
    }
    if (!victim->data) {
        victim->data = static_cast<uint8_t*>(vm::kmalloc(size));
        if (!victim->data) {
            victim->device = nullptr;
            *error = k_enomem;
            return nullptr;
        }
    }
    victim->device = &device;
    victim->block = block;
    victim->size = size;
    victim->valid = false;
    victim->dirty = false;
    victim->refs = 1;
    victim->used = ++g_clock;
    return victim;
}

} // namespace

Buffer* bread(BlockDevice& device, uint32_t block, uint32_t size, Errno* error)
{
    Buffer* b = lookup(device, block, size, error);
    if (!b || b->valid)
        return b;
    Errno e = block_io(device, uint64_t(block) * (size / k_sector_size), size / k_sector_size,
                       b->data, false);
    if (e != k_ok) {
        b->refs = 0;
        b->device = nullptr; // forget it: its data is not the block's
        *error = e;
        return nullptr;
    }
    b->valid = true;
    return b;
}

Buffer* bget_zeroed(BlockDevice& device, uint32_t block, uint32_t size, Errno* error)
{
    Buffer* b = lookup(device, block, size, error);
    if (!b)
        return nullptr;
    memset(b->data, 0, size);
    b->valid = true;
    return b;
}

void brelse(Buffer* b)
{
    TOLL_ASSERT(b->refs > 0);
    --b->refs;
}

Errno bwrite(Buffer* b)
{
    return b->dirty ? write_out(b) : k_ok;
}

namespace {

// Writes the dirty buffers of @p device (those of the journal's running
// transaction only if @p journaled_too).
Errno sync_blocks(BlockDevice& device, bool journaled_too)
{
    // Repeatedly the lowest dirty block, then the run of dirty blocks after
    // it, gathered into one transfer of at most the driver's request size.
    static uint8_t* s_run; // a bounce buffer of one maximal request
    static size_t s_run_size;
    for (;;) {
        Buffer* first = nullptr;
        for (Buffer& b : g_buffers)
            if (b.device == &device && b.dirty && (journaled_too || !b.journaled) &&
                (!first || b.block < first->block))
                first = &b;
        if (!first)
            return k_ok;
        size_t max = device.max_sectors * k_sector_size;
        if (s_run_size < max) {
            vm::kfree(s_run);
            s_run = static_cast<uint8_t*>(vm::kmalloc(max));
            s_run_size = s_run ? max : 0;
        }
        Buffer* run[64];
        size_t n = 0;
        run[n++] = first;
        while (s_run && n < 64 && (n + 1) * first->size <= max) {
            Buffer* next = nullptr;
            for (Buffer& b : g_buffers)
                if (b.device == &device && b.dirty && (journaled_too || !b.journaled) &&
                    b.size == first->size && b.block == first->block + n)
                    next = &b;
            if (!next)
                break;
            run[n++] = next;
        }
        if (n == 1) {
            TRY(write_out(first));
            continue;
        }
        for (size_t i = 0; i < n; ++i)
            memcpy(s_run + i * first->size, run[i]->data, first->size);
        TRY(block_io(device, uint64_t(first->block) * (first->size / k_sector_size),
                     static_cast<uint32_t>(n * first->size / k_sector_size), s_run, true));
        g_merges.add(n - 1);
        for (size_t i = 0; i < n; ++i) {
            run[i]->dirty = false;
            g_writebacks.add();
        }
    }
}

} // namespace

Errno bsync(BlockDevice& device)
{
    return sync_blocks(device, true);
}

Errno bsync_data(BlockDevice& device)
{
    return sync_blocks(device, false);
}

void binvalidate(BlockDevice& device)
{
    for (Buffer& b : g_buffers)
        if (b.device == &device && b.refs == 0 && !b.dirty)
            b.device = nullptr;
}

} // namespace toll::fs
