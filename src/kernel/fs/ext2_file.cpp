// ext2's file data, through the page cache: read copies out of the file's
// cached pages (filling a missing one from the blocks it covers); write
// goes to the blocks through the buffer cache, as ordered mode's journal
// wants, and into any cached page of them, so that both stay the same; a
// mapping's object pins the cached pages it maps; sync writes back the pages
// a shared writable mapping may have changed. Inodes, block maps and
// allocation are in ext2.cpp, names in ext2_dir.cpp.
#include "kernel/fs/ext2_internal.h"
#include "kernel/fs/pagecache.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/vmobject.h"
#include "lib/string.h"

namespace toll::fs {

using namespace ext2;

namespace {

constexpr uint64_t k_max_size = 0xFFFFFFFFull; // what Toll keeps (large_file allows more)

size_t smaller(size_t a, size_t b)
{
    return a < b ? a : b;
}

// Fills the page at @p page with page @p index of inode @p ino: the blocks
// it covers, through the buffer cache; a hole and the part past the end of
// the file read as zeros.
Errno fill_page(Ext2Fs& fs, Inode& in, uint32_t ino, uint32_t index, uint8_t* page)
{
    uint64_t size = inode_size(in), base = uint64_t(index) * vm::k_page_size;
    memset(page, 0, vm::k_page_size);
    for (size_t off = 0; off < vm::k_page_size && base + off < size;) {
        uint64_t pos = base + off;
        uint32_t lblock = static_cast<uint32_t>(pos / fs.block_size);
        size_t within = static_cast<size_t>(pos % fs.block_size);
        size_t n = smaller(fs.block_size - within, vm::k_page_size - off);
        if (pos + n > size)
            n = static_cast<size_t>(size - pos);
        uint32_t pblock = 0;
        TRY(bmap(fs, in, ino, lblock, false, &pblock));
        if (pblock) {
            Errno e = k_ok;
            Buffer* b = fs_bread(fs, pblock, &e);
            if (!b)
                return e;
            memcpy(page + off, b->data + within, n);
            brelse(b);
        }
        off += n;
    }
    return k_ok;
}

// Page @p index of inode @p ino, pinned: the cache's, or read now and cached.
Result<PhysAddr> file_page(Ext2Fs& fs, Inode& in, uint32_t ino, uint32_t index)
{
    if (Optional<PhysAddr> hit = pc_find(&fs, ino, index))
        return hit.value();
    PhysAddr pa = TRY(pc_alloc());
    if (Errno e = fill_page(fs, in, ino, index, static_cast<uint8_t*>(vm::phys_to_virt(pa)));
        e != k_ok) {
        pc_unpin(pa);
        return e;
    }
    pc_insert(&fs, ino, index, pa);
    return pa;
}

// Where write's bytes come from: user memory, or (write-back of a mapped
// page) the kernel's.
struct Source {
    uintptr_t user = 0;
    const uint8_t* kernel = nullptr;
    Errno copy(uint8_t* to, size_t at, size_t n) const
    {
        if (kernel) {
            memcpy(to, kernel + at, n);
            return k_ok;
        }
        return sys::copyin(to, user + at, n);
    }
};

// Tells the cached pages under file bytes [pos, pos + n), just written
// from @p data, what they now hold.
void update_pages(Ext2Fs& fs, uint32_t ino, uint64_t pos, const uint8_t* data, size_t n)
{
    while (n) {
        size_t within = static_cast<size_t>(pos % vm::k_page_size);
        size_t chunk = smaller(vm::k_page_size - within, n);
        pc_update(&fs, ino, static_cast<uint32_t>(pos / vm::k_page_size), within, data, chunk);
        pos += chunk;
        data += chunk;
        n -= chunk;
    }
}

// write's work, with the lock held: @p count bytes from @p from at @p offset.
long write_locked(Ext2Fs& fs, uint32_t ino, uint64_t offset, const Source& from, size_t count,
                  bool update_cache)
{
    Inode in;
    if (Errno e = inode_read(fs, ino, &in); e != k_ok)
        return -e;
    if ((in.i_mode & k_mode_type) != k_mode_reg)
        return -k_einval;
    if (offset >= k_max_size)
        return -k_efbig;
    if (count > k_max_size - offset)
        count = static_cast<size_t>(k_max_size - offset);
    size_t done = 0;
    Errno e = k_ok;
    while (done < count) {
        if (journal_wants_commit(fs, 2)) {
            // A long write: its blocks so far become a transaction of their
            // own, with the inode that names them.
            if (offset + done > inode_size(in))
                inode_set_size(in, offset + done);
            if ((e = inode_write(fs, ino, in)) != k_ok || (e = journal_commit(fs)) != k_ok)
                break;
        }
        uint32_t lblock = static_cast<uint32_t>((offset + done) / fs.block_size);
        uint32_t within = static_cast<uint32_t>((offset + done) % fs.block_size);
        size_t n = smaller(fs.block_size - within, count - done);
        uint32_t pblock = 0;
        e = bmap(fs, in, ino, lblock, true, &pblock);
        if (e != k_ok)
            break;
        bool whole = within == 0 && n == fs.block_size;
        Buffer* b =
            whole ? bget_zeroed(*fs.device, pblock, fs.block_size, &e) : fs_bread(fs, pblock, &e);
        if (!b)
            break;
        e = from.copy(b->data + within, done, n);
        bdirty(b);
        if (e == k_ok && update_cache)
            update_pages(fs, ino, offset + done, b->data + within, n);
        brelse(b);
        if (e != k_ok)
            break;
        done += n;
    }
    if (offset + done > inode_size(in)) {
        inode_set_size(in, offset + done);
        if (offset + done > 0x7FFFFFFFull &&
            !(fs.sb.s_feature_ro_compat & k_ro_compat_large_file)) {
            fs.sb.s_feature_ro_compat |= k_ro_compat_large_file;
            super_dirty(fs);
        }
    }
    in.i_mtime = in.i_ctime = ext2_now(fs);
    if (Errno w = inode_write(fs, ino, in); w != k_ok && e == k_ok)
        e = w;
    return done ? static_cast<long>(done) : -e;
}

// Writes a page a shared mapping may have changed back to its blocks (up
// to the end of the file: a mapping never makes a file longer).
void write_back(void* context, uint32_t ino, uint32_t index, PhysAddr pa)
{
    Ext2Fs& fs = *static_cast<Ext2Fs*>(context);
    Inode in;
    if (inode_read(fs, ino, &in) != k_ok)
        return;
    uint64_t size = inode_size(in), base = uint64_t(index) * vm::k_page_size;
    if (base >= size)
        return;
    size_t n = smaller(vm::k_page_size, static_cast<size_t>(size - base));
    Source from;
    from.kernel = static_cast<const uint8_t*>(vm::phys_to_virt(pa));
    if (write_locked(fs, ino, base, from, n, false) > 0)
        pc_count_writeback();
}

// sync's work, with the lock held.
Errno sync_locked(Ext2Fs& fs)
{
    pc_writable_pages(&fs, write_back, &fs);
    return journal_commit(fs);
}

// A shared mapping's msync: the file system's sync.
Errno object_write_back(vm::VmObject& object)
{
    Ext2Fs& fs = *static_cast<Ext2Fs*>(object.owner);
    FsLock lock(fs);
    return sync_locked(fs);
}

} // namespace

long ext2_read(Ext2Fs& fs, uint32_t ino, uint64_t offset, uintptr_t buffer, size_t count)
{
    FsLock lock(fs);
    Inode in;
    if (Errno e = inode_read(fs, ino, &in); e != k_ok)
        return -e;
    uint64_t size = inode_size(in);
    if (offset >= size)
        return 0;
    if (count > size - offset)
        count = static_cast<size_t>(size - offset);
    size_t done = 0;
    while (done < count) {
        uint64_t pos = offset + done;
        size_t within = static_cast<size_t>(pos % vm::k_page_size);
        size_t n = smaller(vm::k_page_size - within, count - done);
        Result<PhysAddr> page =
            file_page(fs, in, ino, static_cast<uint32_t>(pos / vm::k_page_size));
        Errno e = page.error();
        if (page) {
            e = sys::copyout(buffer + done,
                             static_cast<uint8_t*>(vm::phys_to_virt(page.value())) + within, n);
            pc_unpin(page.value());
        }
        if (e != k_ok)
            return done ? static_cast<long>(done) : -e;
        done += n;
    }
    // atime: Toll does not write it on reads (as Linux's noatime), so that
    // reading never dirties the disk.
    return static_cast<long>(done);
}

long ext2_write(Ext2Fs& fs, uint32_t ino, uint64_t offset, uintptr_t buffer, size_t count)
{
    FsLock lock(fs);
    Source from;
    from.user = buffer;
    return write_locked(fs, ino, offset, from, count, true);
}

Errno ext2_truncate(Ext2Fs& fs, uint32_t ino, uint64_t size)
{
    FsLock lock(fs);
    Inode in;
    TRY(inode_read(fs, ino, &in));
    if ((in.i_mode & k_mode_type) != k_mode_reg)
        return k_einval;
    if (size > k_max_size)
        return k_efbig;
    // The page holding the new end is read again when next wanted: its
    // bytes past the end must read as zeros.
    pc_invalidate(&fs, ino, static_cast<uint32_t>(size / vm::k_page_size));
    if (size < inode_size(in))
        TRY(inode_cut(fs, in, size));
    else
        inode_set_size(in, size);
    in.i_mtime = in.i_ctime = ext2_now(fs);
    return inode_write(fs, ino, in);
}

Errno ext2_stat(Ext2Fs& fs, uint32_t ino, Ext2Stat* out)
{
    FsLock lock(fs);
    Inode in;
    TRY(inode_read(fs, ino, &in));
    out->ino = ino;
    out->mode = in.i_mode;
    out->links = in.i_links_count;
    out->size = inode_size(in);
    out->blocks = in.i_blocks;
    out->atime = in.i_atime;
    out->mtime = in.i_mtime;
    out->ctime = in.i_ctime;
    return k_ok;
}

void ext2_statfs(Ext2Fs& fs, Ext2FsStat* out)
{
    FsLock lock(fs);
    out->block_size = fs.block_size;
    out->blocks = fs.sb.s_blocks_count;
    out->free_blocks = fs.sb.s_free_blocks_count;
    out->reserved_blocks = fs.sb.s_r_blocks_count;
    out->inodes = fs.sb.s_inodes_count;
    out->free_inodes = fs.sb.s_free_inodes_count;
}

Errno ext2_sync(Ext2Fs& fs)
{
    FsLock lock(fs);
    return sync_locked(fs);
}

Result<vm::VmObject*> ext2_object(Ext2Fs& fs, uint32_t ino, uint64_t first_page, size_t count,
                                  bool writable_shared)
{
    FsLock lock(fs);
    Inode in;
    TRY(inode_read(fs, ino, &in));
    if ((in.i_mode & k_mode_type) != k_mode_reg)
        return k_eacces;
    vm::VmObject* object = vm::vmobject_create(count);
    if (!object)
        return k_enomem;
    object->file_page = first_page;
    object->owner = &fs;
    object->ino = ino;
    object->writeback = writable_shared ? object_write_back : nullptr;
    uint64_t file_pages = (inode_size(in) + vm::k_page_size - 1) / vm::k_page_size;
    for (size_t i = 0; i < count && first_page + i < file_pages; ++i) {
        uint32_t index = static_cast<uint32_t>(first_page + i);
        Result<PhysAddr> page = file_page(fs, in, ino, index);
        if (!page) {
            vm::vmobject_drop(object);
            return page.error();
        }
        object->pages[i] = page.value(); // the pin is the object's reference
        if (writable_shared)
            pc_mark_writable_shared(&fs, ino, index);
    }
    return object;
}

} // namespace toll::fs
