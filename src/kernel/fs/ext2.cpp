// ext2's inodes, block maps and allocation: reading and writing inodes in
// their group's table, mapping a file's block numbers through direct and
// indirect pointers, and taking and giving back blocks and inodes in the
// bitmaps with the group and superblock free counts kept right.
// Directories and names are in ext2_dir.cpp.
#include "kernel/arch/cpu.h"
#include "kernel/fs/ext2_internal.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/proc/thread.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::fs {

using namespace ext2;

TOLL_COUNTER(g_blocks_allocated, "ext2.blocks_allocated");
TOLL_COUNTER(g_inodes_allocated, "ext2.inodes_allocated");

Errno corrupt(Ext2Fs& fs, const char* what, uint32_t number)
{
    kprintf("ext2 (%s): %s %u: the file system is corrupt\n", fs.device->name, what, number);
    return k_eio;
}

uint32_t ext2_now(Ext2Fs& fs)
{
    // Toll keeps no wall clock: the time the image was last written plus the
    // time since boot, which never runs backwards from what the disk holds.
    return fs.time_base + static_cast<uint32_t>(proc::ticks() / arch::clock_hz());
}

Buffer* fs_bread(Ext2Fs& fs, uint32_t block, Errno* e)
{
    if (block < fs.sb.s_first_data_block || block >= fs.sb.s_blocks_count) {
        *e = corrupt(fs, "block pointer past the end:", block);
        return nullptr;
    }
    return bread(*fs.device, block, fs.block_size, e);
}

void super_dirty(Ext2Fs& fs)
{
    memcpy(fs.super_buffer->data + fs.super_offset, &fs.sb, sizeof fs.sb);
    mdirty(fs, fs.super_buffer);
}

GroupDesc& group(Ext2Fs& fs, uint32_t g)
{
    return fs.groups[g];
}

void group_dirty(Ext2Fs& fs, uint32_t g)
{
    uint32_t per_block = fs.block_size / sizeof(GroupDesc);
    Buffer* b = fs.gdt_buffers[g / per_block];
    memcpy(b->data + (g % per_block) * sizeof(GroupDesc), &fs.groups[g], sizeof(GroupDesc));
    mdirty(fs, b);
}

// --- inodes ----------------------------------------------------------------

Errno inode_locate(Ext2Fs& fs, uint32_t ino, uint32_t* block, uint32_t* offset)
{
    if (ino == 0 || ino > fs.sb.s_inodes_count)
        return corrupt(fs, "inode number out of range:", ino);
    uint32_t g = (ino - 1) / fs.sb.s_inodes_per_group;
    uint32_t index = (ino - 1) % fs.sb.s_inodes_per_group;
    uint32_t byte = index * fs.inode_size;
    *block = group(fs, g).bg_inode_table + byte / fs.block_size;
    *offset = byte % fs.block_size;
    return k_ok;
}

Errno inode_read(Ext2Fs& fs, uint32_t ino, Inode* out)
{
    uint32_t block, offset;
    TRY(inode_locate(fs, ino, &block, &offset));
    Errno e = k_ok;
    Buffer* b = fs_bread(fs, block, &e);
    if (!b)
        return e;
    memcpy(out, b->data + offset, sizeof *out);
    brelse(b);
    return k_ok;
}

Errno inode_write(Ext2Fs& fs, uint32_t ino, const Inode& in)
{
    uint32_t block, offset;
    TRY(inode_locate(fs, ino, &block, &offset));
    Errno e = k_ok;
    Buffer* b = fs_bread(fs, block, &e);
    if (!b)
        return e;
    memcpy(b->data + offset, &in, sizeof in);
    mdirty(fs, b);
    brelse(b);
    return k_ok;
}

// A new inode's whole record: the 128 bytes, and past them (large inodes)
// i_extra_isize as the superblock wants it with the extra fields zeroed.
Errno inode_write_new(Ext2Fs& fs, uint32_t ino, const Inode& in)
{
    uint32_t block, offset;
    TRY(inode_locate(fs, ino, &block, &offset));
    Errno e = k_ok;
    Buffer* b = fs_bread(fs, block, &e);
    if (!b)
        return e;
    memset(b->data + offset, 0, fs.inode_size);
    memcpy(b->data + offset, &in, sizeof in);
    if (fs.inode_size > k_good_old_inode_size) {
        uint16_t extra = fs.sb.s_want_extra_isize ? fs.sb.s_want_extra_isize : 32;
        if (k_good_old_inode_size + extra > fs.inode_size)
            extra = 0;
        memcpy(b->data + offset + k_extra_isize_offset, &extra, sizeof extra);
    }
    mdirty(fs, b);
    brelse(b);
    return k_ok;
}

uint64_t inode_size(const Inode& in)
{
    uint64_t size = in.i_size;
    if ((in.i_mode & k_mode_type) == k_mode_reg)
        size |= uint64_t(in.i_size_high) << 32;
    return size;
}

void inode_set_size(Inode& in, uint64_t size)
{
    in.i_size = static_cast<uint32_t>(size);
    if ((in.i_mode & k_mode_type) == k_mode_reg)
        in.i_size_high = static_cast<uint32_t>(size >> 32);
}

// --- bitmaps -----------------------------------------------------------------

// Finds a clear bit among the first @p bits of the bitmap in @p block, sets
// it and returns its index; -1 if none is clear.
long bitmap_take(Ext2Fs& fs, uint32_t block, uint32_t bits, Errno* e)
{
    Buffer* b = fs_bread(fs, block, e);
    if (!b)
        return -1;
    for (uint32_t i = 0; i < bits; ++i)
        if (!(b->data[i / 8] & (1u << (i % 8)))) {
            b->data[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
            mdirty(fs, b);
            brelse(b);
            return static_cast<long>(i);
        }
    brelse(b);
    return -1;
}

// Clears bit @p i of the bitmap in @p block; false if it was clear already.
bool bitmap_give(Ext2Fs& fs, uint32_t block, uint32_t i, Errno* e)
{
    Buffer* b = fs_bread(fs, block, e);
    if (!b)
        return false;
    bool was = b->data[i / 8] & (1u << (i % 8));
    b->data[i / 8] &= static_cast<uint8_t>(~(1u << (i % 8)));
    mdirty(fs, b);
    brelse(b);
    return was;
}

uint32_t group_blocks(Ext2Fs& fs, uint32_t g)
{
    uint32_t start = fs.sb.s_first_data_block + g * fs.sb.s_blocks_per_group;
    uint32_t left = fs.sb.s_blocks_count - start;
    return left < fs.sb.s_blocks_per_group ? left : fs.sb.s_blocks_per_group;
}

Result<uint32_t> block_alloc(Ext2Fs& fs, uint32_t goal_group)
{
    for (uint32_t k = 0; k < fs.group_count; ++k) {
        uint32_t g = (goal_group + k) % fs.group_count;
        if (group(fs, g).bg_free_blocks_count == 0)
            continue;
        Errno e = k_ok;
        long bit = bitmap_take(fs, group(fs, g).bg_block_bitmap, group_blocks(fs, g), &e);
        if (e != k_ok)
            return e;
        if (bit < 0)
            continue; // the count said free, the bitmap disagrees: try elsewhere
        --group(fs, g).bg_free_blocks_count;
        group_dirty(fs, g);
        --fs.sb.s_free_blocks_count;
        super_dirty(fs);
        g_blocks_allocated.add();
        return fs.sb.s_first_data_block + g * fs.sb.s_blocks_per_group + static_cast<uint32_t>(bit);
    }
    return k_enospc;
}

Errno block_free(Ext2Fs& fs, uint32_t block)
{
    if (block < fs.sb.s_first_data_block || block >= fs.sb.s_blocks_count)
        return corrupt(fs, "freeing a block past the end:", block);
    uint32_t rel = block - fs.sb.s_first_data_block;
    uint32_t g = rel / fs.sb.s_blocks_per_group;
    Errno e = k_ok;
    if (!bitmap_give(fs, group(fs, g).bg_block_bitmap, rel % fs.sb.s_blocks_per_group, &e))
        return e != k_ok ? e : corrupt(fs, "freeing a free block", block);
    ++group(fs, g).bg_free_blocks_count;
    group_dirty(fs, g);
    ++fs.sb.s_free_blocks_count;
    super_dirty(fs);
    return k_ok;
}

Result<uint32_t> inode_alloc(Ext2Fs& fs, uint32_t goal_group, bool directory)
{
    for (uint32_t k = 0; k < fs.group_count; ++k) {
        uint32_t g = (goal_group + k) % fs.group_count;
        if (group(fs, g).bg_free_inodes_count == 0)
            continue;
        Errno e = k_ok;
        long bit = bitmap_take(fs, group(fs, g).bg_inode_bitmap, fs.sb.s_inodes_per_group, &e);
        if (e != k_ok)
            return e;
        if (bit < 0)
            continue;
        uint32_t ino = g * fs.sb.s_inodes_per_group + static_cast<uint32_t>(bit) + 1;
        if (ino < fs.first_ino) {
            return corrupt(fs, "a reserved inode is free in the bitmap:", ino);
        }
        --group(fs, g).bg_free_inodes_count;
        if (directory)
            ++group(fs, g).bg_used_dirs_count;
        group_dirty(fs, g);
        --fs.sb.s_free_inodes_count;
        super_dirty(fs);
        g_inodes_allocated.add();
        return ino;
    }
    return k_enospc;
}

Errno inode_free(Ext2Fs& fs, uint32_t ino, bool directory)
{
    uint32_t g = (ino - 1) / fs.sb.s_inodes_per_group;
    Errno e = k_ok;
    if (!bitmap_give(fs, group(fs, g).bg_inode_bitmap, (ino - 1) % fs.sb.s_inodes_per_group, &e))
        return e != k_ok ? e : corrupt(fs, "freeing a free inode", ino);
    ++group(fs, g).bg_free_inodes_count;
    if (directory && group(fs, g).bg_used_dirs_count > 0)
        --group(fs, g).bg_used_dirs_count;
    group_dirty(fs, g);
    ++fs.sb.s_free_inodes_count;
    super_dirty(fs);
    return k_ok;
}

uint32_t inode_group(Ext2Fs& fs, uint32_t ino)
{
    return (ino - 1) / fs.sb.s_inodes_per_group;
}

// --- block maps ----------------------------------------------------------------

namespace {

// Entry @p index of indirect block @p block: read, or (when @p create and
// it is 0) set to a new zeroed block. *out is 0 for a hole.
Errno indirect_entry(Ext2Fs& fs, Inode& in, uint32_t ino, uint32_t block, uint32_t index,
                     bool create, uint32_t* out)
{
    Errno e = k_ok;
    Buffer* b = fs_bread(fs, block, &e);
    if (!b)
        return e;
    uint32_t* slots = reinterpret_cast<uint32_t*>(b->data);
    uint32_t v = slots[index];
    if (v == 0 && create) {
        Result<uint32_t> nb = block_alloc(fs, inode_group(fs, ino));
        if (!nb) {
            brelse(b);
            return nb.error();
        }
        v = nb.value();
        Buffer* z = bget_zeroed(*fs.device, v, fs.block_size, &e);
        if (!z) {
            brelse(b);
            return e;
        }
        mdirty(fs, z);
        brelse(z);
        slots[index] = v;
        mdirty(fs, b);
        in.i_blocks += fs.block_size / k_sector_size;
    }
    brelse(b);
    *out = v;
    return k_ok;
}

} // namespace

Errno bmap(Ext2Fs& fs, Inode& in, uint32_t ino, uint32_t lblock, bool create, uint32_t* out)
{
    uint32_t per = fs.block_size / 4;
    uint32_t path[4];
    unsigned depth;
    if (lblock < k_direct) {
        path[0] = lblock;
        depth = 0;
    } else if ((lblock -= k_direct) < per) {
        path[0] = k_ind;
        path[1] = lblock;
        depth = 1;
    } else if ((lblock -= per) < per * per) {
        path[0] = k_dind;
        path[1] = lblock / per;
        path[2] = lblock % per;
        depth = 2;
    } else {
        lblock -= per * per;
        if (lblock / per / per >= per)
            return k_efbig;
        path[0] = k_tind;
        path[1] = lblock / per / per;
        path[2] = lblock / per % per;
        path[3] = lblock % per;
        depth = 3;
    }
    uint32_t v = in.i_block[path[0]];
    if (v == 0 && create) {
        Result<uint32_t> nb = block_alloc(fs, inode_group(fs, ino));
        if (!nb)
            return nb.error();
        v = nb.value();
        if (depth > 0) {
            Errno e = k_ok;
            Buffer* z = bget_zeroed(*fs.device, v, fs.block_size, &e);
            if (!z)
                return e;
            mdirty(fs, z);
            brelse(z);
        }
        in.i_block[path[0]] = v;
        in.i_blocks += fs.block_size / k_sector_size;
    }
    for (unsigned level = 1; level <= depth && v != 0; ++level) {
        uint32_t next = 0;
        TRY(indirect_entry(fs, in, ino, v, path[level], create, &next));
        v = next;
    }
    if (v != 0 && (v < fs.sb.s_first_data_block || v >= fs.sb.s_blocks_count))
        return corrupt(fs, "block pointer past the end:", v);
    *out = v;
    return k_ok;
}

namespace {

// Frees the tree under pointer @p block of @p level (0: a data block) whose
// first file block is @p first, keeping the file blocks below @p keep.
// Sets *emptied when the whole subtree is gone (the caller clears its pointer).
Errno free_tree(Ext2Fs& fs, Inode& in, uint32_t block, unsigned level, uint64_t first,
                uint64_t keep, bool* emptied)
{
    uint32_t per = fs.block_size / 4;
    uint64_t span = 1;
    for (unsigned i = 0; i < level; ++i)
        span *= per;
    *emptied = false;
    if (first + span <= keep)
        return k_ok; // wholly kept
    if (level > 0) {
        Errno e = k_ok;
        Buffer* b = fs_bread(fs, block, &e);
        if (!b)
            return e;
        uint32_t* slots = reinterpret_cast<uint32_t*>(b->data);
        uint64_t child_span = span / per;
        for (uint32_t i = 0; i < per; ++i) {
            if (slots[i] == 0)
                continue;
            bool gone = false;
            e = free_tree(fs, in, slots[i], level - 1, first + i * child_span, keep, &gone);
            if (e != k_ok) {
                brelse(b);
                return e;
            }
            if (gone) {
                slots[i] = 0;
                mdirty(fs, b);
            }
        }
        brelse(b);
        if (first < keep)
            return k_ok; // partly kept: this block stays
    }
    TRY(block_free(fs, block));
    in.i_blocks -= fs.block_size / k_sector_size;
    *emptied = true;
    return k_ok;
}

} // namespace

Errno inode_cut(Ext2Fs& fs, Inode& in, uint64_t size)
{
    uint64_t keep = (size + fs.block_size - 1) / fs.block_size;
    uint32_t per = fs.block_size / 4;
    uint64_t first[k_n_blocks];
    unsigned level[k_n_blocks];
    for (unsigned i = 0; i < k_direct; ++i)
        first[i] = i, level[i] = 0;
    first[k_ind] = k_direct, level[k_ind] = 1;
    first[k_dind] = k_direct + per, level[k_dind] = 2;
    first[k_tind] = k_direct + per + uint64_t(per) * per, level[k_tind] = 3;
    for (unsigned i = 0; i < k_n_blocks; ++i) {
        if (in.i_block[i] == 0)
            continue;
        bool gone = false;
        TRY(free_tree(fs, in, in.i_block[i], level[i], first[i], keep, &gone));
        if (gone)
            in.i_block[i] = 0;
    }
    inode_set_size(in, size);
    return k_ok;
}

BlockDevice* ext2_device(const Ext2Fs& fs)
{
    return fs.device;
}

bool ext2_journaled(const Ext2Fs& fs)
{
    return fs.journal != nullptr;
}

Errno ext2_shutdown(Ext2Fs& fs)
{
    FsLock lock(fs);
    return journal_close(fs);
}

// --- mounting ------------------------------------------------------------------------

namespace {

Errno refuse(BlockDevice& device, const char* why)
{
    kprintf("ext2: %s: not mounted: %s\n", device.name, why);
    return k_einval;
}

Errno check_geometry(BlockDevice& device, const Superblock& sb, uint32_t* groups)
{
    if (sb.s_magic != k_magic)
        return refuse(device, "no ext2 superblock (bad magic)");
    if (sb.s_log_block_size > 2)
        return refuse(device, "block size over 4 KB");
    uint32_t bsize = 1024u << sb.s_log_block_size;
    if (sb.s_rev_level > k_dynamic_rev)
        return refuse(device, "unknown revision");
    if (sb.s_first_data_block != (bsize == 1024 ? 1u : 0u))
        return refuse(device, "first data block does not match the block size");
    if (sb.s_blocks_per_group == 0 || sb.s_blocks_per_group > 8 * bsize ||
        sb.s_inodes_per_group == 0 || sb.s_inodes_per_group > 8 * bsize)
        return refuse(device, "blocks or inodes per group out of range");
    if (sb.s_blocks_count <= sb.s_first_data_block ||
        uint64_t(sb.s_blocks_count) * (bsize / k_sector_size) > device.sectors)
        return refuse(device, "more blocks than the disk holds");
    uint32_t n = (sb.s_blocks_count - sb.s_first_data_block + sb.s_blocks_per_group - 1) /
                 sb.s_blocks_per_group;
    if (uint64_t(n) * sb.s_inodes_per_group != sb.s_inodes_count)
        return refuse(device, "inode count does not match the groups");
    if (sb.s_free_blocks_count > sb.s_blocks_count || sb.s_free_inodes_count > sb.s_inodes_count)
        return refuse(device, "free counts exceed the totals");
    if (sb.s_rev_level == k_dynamic_rev) {
        uint32_t isize = sb.s_inode_size;
        if (isize < k_good_old_inode_size || isize > bsize || (isize & (isize - 1)))
            return refuse(device, "inode size out of range");
        if (sb.s_first_ino <= k_root_ino || sb.s_first_ino > sb.s_inodes_count)
            return refuse(device, "first inode out of range");
        if (sb.s_feature_incompat & k_incompat_recover)
            return refuse(device, "its journal needs recovery (run e2fsck)");
        if (sb.s_feature_incompat & ~k_incompat_filetype)
            return refuse(device, "incompatible features Toll does not know");
        if (sb.s_feature_ro_compat & ~(k_ro_compat_sparse_super | k_ro_compat_large_file))
            return refuse(device, "read-only-compatible features Toll could not keep right");
    }
    // The descriptors must fit before the first group's bitmaps; checked per group below.
    if (n > 4096)
        return refuse(device, "too many groups");
    *groups = n;
    return k_ok;
}

} // namespace

Result<Ext2Fs*> ext2_mount(BlockDevice& device)
{
    if (device.sectors < (k_superblock_offset + k_superblock_size) / k_sector_size)
        return refuse(device, "too small");
    // The superblock, read as two sectors first (the block size is not known yet).
    uint8_t raw[k_superblock_size];
    TRY(block_io(device, k_superblock_offset / k_sector_size, k_superblock_size / k_sector_size,
                 raw, false));
    Superblock sb;
    memcpy(&sb, raw, sizeof sb);
    uint32_t groups = 0;
    TRY(check_geometry(device, sb, &groups));
    Ext2Fs* fs = make<Ext2Fs>();
    if (!fs)
        return k_enomem;
    fs->device = &device;
    fs->sb = sb;
    fs->block_size = 1024u << sb.s_log_block_size;
    fs->group_count = groups;
    fs->inode_size = sb.s_rev_level == k_dynamic_rev ? sb.s_inode_size : k_good_old_inode_size;
    fs->first_ino = sb.s_rev_level == k_dynamic_rev ? sb.s_first_ino : k_good_old_first_ino;
    fs->time_base = sb.s_wtime > sb.s_mtime ? sb.s_wtime : sb.s_mtime;
    fs->filetype = (sb.s_feature_incompat & k_incompat_filetype) != 0;
    Errno e = k_ok;
    uint32_t super_block = k_superblock_offset / fs->block_size;
    fs->super_offset = k_superblock_offset % fs->block_size;
    fs->super_buffer = bread(device, super_block, fs->block_size, &e);
    uint32_t per_block = fs->block_size / sizeof(GroupDesc);
    uint32_t gdt_blocks = (groups + per_block - 1) / per_block;
    fs->groups = static_cast<GroupDesc*>(vm::kmalloc(gdt_blocks * fs->block_size));
    constexpr size_t k_pointer_size = sizeof(uintptr_t); // one Buffer* per descriptor block
    fs->gdt_buffers = static_cast<Buffer**>(vm::kmalloc(gdt_blocks * k_pointer_size));
    if (!fs->super_buffer || !fs->groups || !fs->gdt_buffers || gdt_blocks > 64) {
        if (fs->super_buffer)
            brelse(fs->super_buffer);
        vm::kfree(fs->groups);
        vm::kfree(fs->gdt_buffers);
        destroy(fs);
        return e != k_ok ? e : k_enomem;
    }
    for (uint32_t i = 0; i < gdt_blocks; ++i) {
        // The buffers of the superblock and descriptors stay held while mounted.
        fs->gdt_buffers[i] = bread(device, sb.s_first_data_block + 1 + i, fs->block_size, &e);
        if (!fs->gdt_buffers[i]) {
            kprintf("ext2: %s: cannot read the group descriptors\n", device.name);
            return e; // (the held buffers stay: a failed mount of a failing disk)
        }
        memcpy(reinterpret_cast<uint8_t*>(fs->groups) + i * fs->block_size,
               fs->gdt_buffers[i]->data, fs->block_size);
    }
    for (uint32_t g = 0; g < groups; ++g) {
        const GroupDesc& d = fs->groups[g];
        uint32_t itable_blocks =
            (sb.s_inodes_per_group * fs->inode_size + fs->block_size - 1) / fs->block_size;
        if (d.bg_block_bitmap >= sb.s_blocks_count || d.bg_inode_bitmap >= sb.s_blocks_count ||
            d.bg_inode_table + itable_blocks > sb.s_blocks_count ||
            d.bg_block_bitmap < sb.s_first_data_block ||
            d.bg_inode_bitmap < sb.s_first_data_block || d.bg_inode_table < sb.s_first_data_block)
            return refuse(device, "a group descriptor points past the end");
    }
    Inode root;
    if (inode_read(*fs, k_root_ino, &root) != k_ok || (root.i_mode & k_mode_type) != k_mode_dir)
        return refuse(device, "the root inode is no directory");
    if (sb.s_feature_compat & k_compat_has_journal)
        TRY(journal_open(*fs));
    kprintf("ext2: %s: %u blocks of %u bytes, %u inodes, %u groups, %u blocks and %u inodes free\n",
            device.name, sb.s_blocks_count, fs->block_size, sb.s_inodes_count, groups,
            sb.s_free_blocks_count, sb.s_free_inodes_count);
    return fs;
}

} // namespace toll::fs
