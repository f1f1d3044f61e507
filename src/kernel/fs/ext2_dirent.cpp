// ext2 directory entries: the variable-length records of linear directory
// blocks (inode, record length, name length, type, name), walked, found,
// added, removed and rewritten, and getdents over them. Every entry is
// checked before it is used: a hostile image's bad entry is EIO.
#include "kernel/fs/ext2_internal.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::fs {

using namespace ext2;

namespace {

// Linux, include/linux/fs_types.h: d_type values.
constexpr uint8_t k_dt_unknown = 0, k_dt_dir = 4, k_dt_reg = 8, k_dt_lnk = 10;

// Calls @p visit(buffer, entry, previous entry or nullptr, byte offset of
// the entry in the directory) for each entry of directory @p dir, block by
// block from the block holding byte @p from; stops when it returns true.
// Each entry is checked first: a bad one is EIO.
template <typename Visit>
Errno dir_each(Ext2Fs& fs, uint32_t dir_ino, Inode& dir, uint64_t from, Visit&& visit,
               bool* stopped)
{
    *stopped = false;
    uint64_t size = inode_size(dir);
    for (uint64_t base = from - from % fs.block_size; base < size; base += fs.block_size) {
        uint32_t pblock = 0;
        TRY(bmap(fs, dir, dir_ino, static_cast<uint32_t>(base / fs.block_size), false, &pblock));
        if (pblock == 0)
            return corrupt(fs, "a hole in directory", dir_ino);
        Errno e = k_ok;
        Buffer* b = fs_bread(fs, pblock, &e);
        if (!b)
            return e;
        DirEntryHeader* prev = nullptr;
        for (uint32_t at = 0; at < fs.block_size;) {
            auto* entry = reinterpret_cast<DirEntryHeader*>(b->data + at);
            if (at + sizeof *entry > fs.block_size || entry->rec_len < sizeof *entry ||
                entry->rec_len % 4 != 0 || at + entry->rec_len > fs.block_size ||
                sizeof *entry + entry->name_len > entry->rec_len ||
                entry->inode > fs.sb.s_inodes_count) {
                brelse(b);
                return corrupt(fs, "a bad entry in directory", dir_ino);
            }
            if (base + at >= from && visit(b, entry, prev, base + at)) {
                brelse(b);
                *stopped = true;
                return k_ok;
            }
            prev = entry;
            at += entry->rec_len;
        }
        brelse(b);
    }
    return k_ok;
}

const char* entry_name(const DirEntryHeader* e)
{
    return reinterpret_cast<const char*>(e + 1);
}

} // namespace

uint8_t file_type(uint16_t mode)
{
    switch (mode & k_mode_type) {
    case k_mode_reg:
        return k_ft_reg;
    case k_mode_dir:
        return k_ft_dir;
    case k_mode_lnk:
        return k_ft_symlink;
    default:
        return k_ft_unknown;
    }
}

bool is_dir(const Inode& in)
{
    return (in.i_mode & k_mode_type) == k_mode_dir;
}

// The inode that @p name names in directory @p dir_ino (0 if none).
Errno dir_find(Ext2Fs& fs, uint32_t dir_ino, const char* name, size_t length, uint32_t* out)
{
    Inode dir;
    TRY(inode_read(fs, dir_ino, &dir));
    if (!is_dir(dir))
        return k_enotdir;
    *out = 0;
    bool found = false;
    TRY(dir_each(
        fs, dir_ino, dir, 0,
        [&](Buffer*, DirEntryHeader* e, DirEntryHeader*, uint64_t) {
            if (e->inode != 0 && e->name_len == length &&
                memcmp(entry_name(e), name, length) == 0) {
                *out = e->inode;
                return true;
            }
            return false;
        },
        &found));
    return k_ok;
}

void touch_dir(Ext2Fs& fs, Inode& dir)
{
    dir.i_mtime = dir.i_ctime = ext2_now(fs);
    dir.i_flags &= ~k_index_fl; // written linearly now: no hash tree to keep right
}

// Adds the entry @p name -> @p ino (of type @p type) to directory @p dir_ino.
Errno dir_add(Ext2Fs& fs, uint32_t dir_ino, const char* name, size_t length, uint32_t ino,
              uint8_t type)
{
    Inode dir;
    TRY(inode_read(fs, dir_ino, &dir));
    uint32_t need = dir_rec_len(static_cast<uint32_t>(length));
    auto fill = [&](DirEntryHeader* e, uint16_t rec_len) {
        e->inode = ino;
        e->rec_len = rec_len;
        e->name_len = static_cast<uint8_t>(length);
        e->file_type = fs.filetype ? type : 0;
        memcpy(reinterpret_cast<char*>(e + 1), name, length);
    };
    bool placed = false;
    TRY(dir_each(
        fs, dir_ino, dir, 0,
        [&](Buffer* b, DirEntryHeader* e, DirEntryHeader*, uint64_t) {
            uint32_t used = e->inode ? dir_rec_len(e->name_len) : 0;
            if (e->rec_len - used < need)
                return false;
            if (used == 0) {
                fill(e, e->rec_len);
            } else {
                auto* next =
                    reinterpret_cast<DirEntryHeader*>(reinterpret_cast<uint8_t*>(e) + used);
                fill(next, static_cast<uint16_t>(e->rec_len - used));
                e->rec_len = static_cast<uint16_t>(used);
            }
            mdirty(fs, b);
            return true;
        },
        &placed));
    if (!placed) {
        // A new block at the end, one entry spanning it.
        uint64_t size = inode_size(dir);
        uint32_t pblock = 0;
        TRY(bmap(fs, dir, dir_ino, static_cast<uint32_t>(size / fs.block_size), true, &pblock));
        Errno e = k_ok;
        Buffer* b = bget_zeroed(*fs.device, pblock, fs.block_size, &e);
        if (!b)
            return e;
        fill(reinterpret_cast<DirEntryHeader*>(b->data), static_cast<uint16_t>(fs.block_size));
        mdirty(fs, b);
        brelse(b);
        inode_set_size(dir, size + fs.block_size);
    }
    touch_dir(fs, dir);
    return inode_write(fs, dir_ino, dir);
}

// Removes @p name from directory @p dir_ino (its space joins the entry
// before it, or the entry is marked unused if first in its block).
Errno dir_remove(Ext2Fs& fs, uint32_t dir_ino, const char* name, size_t length)
{
    Inode dir;
    TRY(inode_read(fs, dir_ino, &dir));
    bool removed = false;
    TRY(dir_each(
        fs, dir_ino, dir, 0,
        [&](Buffer* b, DirEntryHeader* e, DirEntryHeader* prev, uint64_t) {
            if (e->inode == 0 || e->name_len != length || memcmp(entry_name(e), name, length) != 0)
                return false;
            if (prev)
                prev->rec_len = static_cast<uint16_t>(prev->rec_len + e->rec_len);
            else
                e->inode = 0;
            mdirty(fs, b);
            return true;
        },
        &removed));
    if (!removed)
        return k_enoent;
    touch_dir(fs, dir);
    return inode_write(fs, dir_ino, dir);
}

// True if directory @p ino holds only "." and "..".
Errno dir_empty(Ext2Fs& fs, uint32_t ino, bool* empty)
{
    Inode dir;
    TRY(inode_read(fs, ino, &dir));
    bool other = false;
    TRY(dir_each(
        fs, ino, dir, 0,
        [&](Buffer*, DirEntryHeader* e, DirEntryHeader*, uint64_t) {
            if (e->inode == 0)
                return false;
            const char* n = entry_name(e);
            bool dots = (e->name_len == 1 && n[0] == '.') ||
                        (e->name_len == 2 && n[0] == '.' && n[1] == '.');
            return !dots;
        },
        &other));
    *empty = !other;
    return k_ok;
}

// Points directory @p ino's ".." at @p parent.
Errno dir_set_dotdot(Ext2Fs& fs, uint32_t ino, uint32_t parent)
{
    Inode dir;
    TRY(inode_read(fs, ino, &dir));
    bool done = false;
    TRY(dir_each(
        fs, ino, dir, 0,
        [&](Buffer* b, DirEntryHeader* e, DirEntryHeader*, uint64_t) {
            if (e->name_len == 2 && memcmp(entry_name(e), "..", 2) == 0) {
                e->inode = parent;
                mdirty(fs, b);
                return true;
            }
            return false;
        },
        &done));
    return done ? k_ok : corrupt(fs, "no '..' in directory", ino);
}

long ext2_getdents(Ext2Fs& fs, uint32_t ino, uint64_t* offset, uintptr_t buffer, size_t count)
{
    FsLock lock(fs);
    Inode dir;
    if (Errno e = inode_read(fs, ino, &dir); e != k_ok)
        return -e;
    if (!is_dir(dir))
        return -k_enotdir;
    // Linux, include/linux/dirent.h: linux_dirent64 is d_ino (8), d_off (8),
    // d_reclen (2), d_type (1), the name and a NUL, padded to 8 bytes.
    constexpr size_t k_name_offset = 19;
    size_t done = 0;
    Errno failed = k_ok;
    bool full = false;
    Errno e = dir_each(
        fs, ino, dir, *offset,
        [&](Buffer*, DirEntryHeader* entry, DirEntryHeader*, uint64_t at) {
            uint64_t next = at + entry->rec_len;
            if (entry->inode == 0) {
                *offset = next;
                return false;
            }
            size_t reclen = (k_name_offset + entry->name_len + 1 + 7) & ~size_t(7);
            if (reclen > count - done) {
                full = true;
                return true;
            }
            uint8_t record[k_name_offset + k_name_max + 1 + 8] = {};
            uint64_t d_ino = entry->inode;
            uint16_t r16 = static_cast<uint16_t>(reclen);
            uint8_t type = k_dt_unknown;
            if (fs.filetype)
                type = entry->file_type == k_ft_dir       ? k_dt_dir
                       : entry->file_type == k_ft_reg     ? k_dt_reg
                       : entry->file_type == k_ft_symlink ? k_dt_lnk
                                                          : k_dt_unknown;
            memcpy(record, &d_ino, 8);
            memcpy(record + 8, &next, 8);
            memcpy(record + 16, &r16, 2);
            record[18] = type;
            memcpy(record + k_name_offset, entry_name(entry), entry->name_len);
            if (Errno c = sys::copyout(buffer + done, record, reclen); c != k_ok) {
                failed = c;
                return true;
            }
            done += reclen;
            *offset = next;
            return false;
        },
        &full);
    if (e != k_ok)
        return done ? static_cast<long>(done) : -e;
    if (failed != k_ok && done == 0)
        return -failed;
    if (full && done == 0)
        return -k_einval;
    return static_cast<long>(done);
}

} // namespace toll::fs
