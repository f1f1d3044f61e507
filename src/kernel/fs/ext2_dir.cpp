// ext2 directories and names: entries in linear directory blocks, path
// look-up with symbolic links, and the calls that add and remove names
// (create, mkdir, rmdir, unlink, link, symlink, rename), getdents and
// readlink. A hostile image's bad entry is an error (EIO), never a loop.
#include "kernel/fs/ext2_internal.h"
#include "kernel/fs/pagecache.h"
#include "kernel/kern/console.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::fs {

using namespace ext2;

namespace {

// Linux, include/uapi/linux/limits.h and fs/namei.c.
constexpr size_t k_name_max = 255, k_walk_max = 512;
constexpr int k_max_symlinks = 40;
constexpr uint16_t k_link_max = 32000; // Linux's EXT2_LINK_MAX
// Linux, include/linux/fs_types.h: d_type values.
constexpr uint8_t k_dt_unknown = 0, k_dt_dir = 4, k_dt_reg = 8, k_dt_lnk = 10;

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

Errno adjust_links(Ext2Fs& fs, uint32_t ino, int delta)
{
    Inode in;
    TRY(inode_read(fs, ino, &in));
    in.i_links_count = static_cast<uint16_t>(in.i_links_count + delta);
    in.i_ctime = ext2_now(fs);
    return inode_write(fs, ino, in);
}

bool is_open(Ext2Fs& fs, uint32_t ino)
{
    for (const OpenInode& o : fs.open)
        if (o.ino == ino && o.opens > 0)
            return true;
    return false;
}

// Gives back inode @p ino, no longer named anywhere: its blocks, then
// itself (dtime stamped, as e2fsck expects of a deleted inode).
Errno release_inode(Ext2Fs& fs, uint32_t ino)
{
    Inode in;
    TRY(inode_read(fs, ino, &in));
    pc_invalidate(&fs, ino, 0); // its pages go with it
    bool fast_symlink = (in.i_mode & k_mode_type) == k_mode_lnk && in.i_blocks == 0;
    if (fast_symlink) {
        memset(in.i_block, 0, sizeof in.i_block);
        inode_set_size(in, 0);
    } else {
        TRY(inode_cut(fs, in, 0));
    }
    in.i_links_count = 0;
    in.i_dtime = ext2_now(fs);
    TRY(inode_write(fs, ino, in));
    return inode_free(fs, ino, is_dir(in));
}

// Drops one name of @p ino; frees it when none is left and no File has it open.
Errno drop_link(Ext2Fs& fs, uint32_t ino)
{
    Inode in;
    TRY(inode_read(fs, ino, &in));
    if (in.i_links_count > 0)
        --in.i_links_count;
    in.i_ctime = ext2_now(fs);
    TRY(inode_write(fs, ino, in));
    if (in.i_links_count == 0 && !is_open(fs, ino))
        return release_inode(fs, ino);
    return k_ok;
}

Errno read_symlink(Ext2Fs& fs, const Inode& in, char* out, size_t size, size_t* length)
{
    uint64_t n = inode_size(in);
    if (n >= size || n == 0 || n > fs.block_size)
        return n == 0 ? corrupt(fs, "an empty symbolic link, size", 0) : k_enametoolong;
    if (in.i_blocks == 0) {
        if (n >= k_fast_symlink_max)
            return corrupt(fs, "a fast symbolic link too long:", static_cast<uint32_t>(n));
        memcpy(out, in.i_block, n);
    } else {
        Errno e = k_ok;
        Buffer* b = fs_bread(fs, in.i_block[0], &e);
        if (!b)
            return e;
        memcpy(out, b->data, n);
        brelse(b);
    }
    out[n] = '\0';
    *length = static_cast<size_t>(n);
    return k_ok;
}

// Walks @p path from the root: the inode it names. Absolute symbolic link
// targets are taken as paths of the whole tree: only those under /mnt (this
// file system's mount point) resolve.
Errno walk(Ext2Fs& fs, const char* path, bool follow, uint32_t* out)
{
    char buf[k_walk_max];
    size_t path_length = strlen(path);
    if (path_length >= sizeof buf)
        return k_enametoolong;
    memcpy(buf, path, path_length + 1);
    uint32_t cur = k_root_ino;
    int links = 0;
    char* p = buf;
    for (;;) {
        while (*p == '/')
            ++p;
        if (*p == '\0') {
            *out = cur;
            return k_ok;
        }
        char* end = p;
        while (*end && *end != '/')
            ++end;
        size_t length = static_cast<size_t>(end - p);
        if (length > k_name_max)
            return k_enametoolong;
        uint32_t child = 0;
        TRY(dir_find(fs, cur, p, length, &child));
        if (child == 0)
            return k_enoent;
        const char* rest = end;
        while (*rest == '/')
            ++rest;
        bool last = *rest == '\0';
        Inode in;
        TRY(inode_read(fs, child, &in));
        if ((in.i_mode & k_mode_type) == k_mode_lnk && (!last || follow || *end == '/')) {
            if (++links > k_max_symlinks)
                return k_eloop;
            char target[k_walk_max];
            size_t n = 0;
            TRY(read_symlink(fs, in, target, sizeof target, &n));
            size_t rest_length = strlen(end);
            if (n + rest_length + 1 > sizeof buf)
                return k_enametoolong;
            const char* from = target;
            if (target[0] == '/') {
                if (strncmp(target, "/mnt", 4) != 0 || (target[4] != '/' && target[4] != '\0'))
                    return k_enoent; // outside this file system
                from = target + 4;
                n -= 4;
                cur = k_root_ino;
            }
            memmove(buf + n, end, rest_length + 1);
            memcpy(buf, from, n);
            p = buf;
            continue;
        }
        if (!last && !is_dir(in))
            return k_enotdir;
        cur = child;
        p = end;
    }
}

// Splits @p path into its parent directory (walked) and last component
// (trailing slashes dropped). k_eexist-like callers check the name.
struct Parent {
    uint32_t dir = 0;
    char name[k_name_max + 1] = {};
    size_t length = 0;
    bool trailing_slash = false;
};

Errno walk_parent(Ext2Fs& fs, const char* path, Parent* out)
{
    size_t n = strlen(path);
    if (n >= k_walk_max)
        return k_enametoolong;
    char buf[k_walk_max];
    memcpy(buf, path, n + 1);
    while (n > 0 && buf[n - 1] == '/') {
        out->trailing_slash = true;
        buf[--n] = '\0';
    }
    size_t start = n;
    while (start > 0 && buf[start - 1] != '/')
        --start;
    out->length = n - start;
    if (out->length == 0)
        return k_ebusy; // the mount point itself
    if (out->length > k_name_max)
        return k_enametoolong;
    memcpy(out->name, buf + start, out->length);
    out->name[out->length] = '\0';
    buf[start] = '\0';
    TRY(walk(fs, buf, true, &out->dir));
    Inode dir;
    TRY(inode_read(fs, out->dir, &dir));
    return is_dir(dir) ? k_ok : k_enotdir;
}

bool is_dot(const Parent& p)
{
    return p.length == 1 && p.name[0] == '.';
}
bool is_dotdot(const Parent& p)
{
    return p.length == 2 && p.name[0] == '.' && p.name[1] == '.';
}

Inode new_inode(Ext2Fs& fs, uint16_t mode, uint16_t links)
{
    Inode in{};
    in.i_mode = mode;
    in.i_links_count = links;
    in.i_atime = in.i_ctime = in.i_mtime = ext2_now(fs);
    return in;
}

} // namespace

Result<uint32_t> ext2_lookup(Ext2Fs& fs, const char* path, bool follow)
{
    FsLock lock(fs);
    uint32_t ino = 0;
    TRY(walk(fs, path, follow, &ino));
    return ino;
}

Result<uint32_t> ext2_create(Ext2Fs& fs, const char* path, uint16_t mode, bool exclusive)
{
    FsLock lock(fs);
    Parent p;
    TRY(walk_parent(fs, path, &p));
    uint32_t existing = 0;
    TRY(dir_find(fs, p.dir, p.name, p.length, &existing));
    if (existing != 0) {
        if (exclusive)
            return k_eexist;
        uint32_t ino = 0;
        TRY(walk(fs, path, true, &ino));
        Inode in;
        TRY(inode_read(fs, ino, &in));
        if (is_dir(in))
            return k_eisdir;
        return ino;
    }
    if (p.trailing_slash || is_dot(p) || is_dotdot(p))
        return k_eisdir;
    Result<uint32_t> ino = inode_alloc(fs, inode_group(fs, p.dir), false);
    if (!ino)
        return ino.error();
    Inode in = new_inode(fs, static_cast<uint16_t>(k_mode_reg | (mode & 07777)), 1);
    TRY(inode_write_new(fs, ino.value(), in));
    if (Errno e = dir_add(fs, p.dir, p.name, p.length, ino.value(), k_ft_reg); e != k_ok) {
        (void)release_inode(fs, ino.value());
        return e;
    }
    return ino.value();
}

Errno ext2_mkdir(Ext2Fs& fs, const char* path, uint16_t mode)
{
    FsLock lock(fs);
    Parent p;
    TRY(walk_parent(fs, path, &p));
    uint32_t existing = 0;
    TRY(dir_find(fs, p.dir, p.name, p.length, &existing));
    if (existing != 0)
        return k_eexist;
    Inode parent;
    TRY(inode_read(fs, p.dir, &parent));
    if (parent.i_links_count >= k_link_max)
        return k_emlink;
    Result<uint32_t> ino = inode_alloc(fs, inode_group(fs, p.dir), true);
    if (!ino)
        return ino.error();
    Inode in = new_inode(fs, static_cast<uint16_t>(k_mode_dir | (mode & 07777)), 2);
    uint32_t block = 0;
    Errno e = bmap(fs, in, ino.value(), 0, true, &block);
    if (e != k_ok) {
        (void)inode_free(fs, ino.value(), true);
        return e;
    }
    Buffer* b = bget_zeroed(*fs.device, block, fs.block_size, &e);
    if (!b)
        return e;
    auto* dot = reinterpret_cast<DirEntryHeader*>(b->data);
    *dot = {ino.value(), static_cast<uint16_t>(dir_rec_len(1)), 1,
            static_cast<uint8_t>(fs.filetype ? k_ft_dir : 0)};
    memcpy(dot + 1, ".", 1);
    auto* dotdot = reinterpret_cast<DirEntryHeader*>(b->data + dir_rec_len(1));
    *dotdot = {p.dir, static_cast<uint16_t>(fs.block_size - dir_rec_len(1)), 2,
               static_cast<uint8_t>(fs.filetype ? k_ft_dir : 0)};
    memcpy(dotdot + 1, "..", 2);
    mdirty(fs, b);
    brelse(b);
    inode_set_size(in, fs.block_size);
    TRY(inode_write_new(fs, ino.value(), in));
    TRY(dir_add(fs, p.dir, p.name, p.length, ino.value(), k_ft_dir));
    return adjust_links(fs, p.dir, +1);
}

Errno ext2_rmdir(Ext2Fs& fs, const char* path)
{
    FsLock lock(fs);
    Parent p;
    TRY(walk_parent(fs, path, &p));
    if (is_dot(p))
        return k_einval;
    if (is_dotdot(p))
        return k_enotempty;
    uint32_t ino = 0;
    TRY(dir_find(fs, p.dir, p.name, p.length, &ino));
    if (ino == 0)
        return k_enoent;
    Inode in;
    TRY(inode_read(fs, ino, &in));
    if (!is_dir(in))
        return k_enotdir;
    if (ino == k_root_ino)
        return k_ebusy;
    bool empty = false;
    TRY(dir_empty(fs, ino, &empty));
    if (!empty)
        return k_enotempty;
    TRY(dir_remove(fs, p.dir, p.name, p.length));
    TRY(adjust_links(fs, p.dir, -1));
    if (is_open(fs, ino)) {
        TRY(inode_read(fs, ino, &in));
        in.i_links_count = 0;
        return inode_write(fs, ino, in);
    }
    return release_inode(fs, ino);
}

Errno ext2_unlink(Ext2Fs& fs, const char* path)
{
    FsLock lock(fs);
    Parent p;
    TRY(walk_parent(fs, path, &p));
    uint32_t ino = 0;
    TRY(dir_find(fs, p.dir, p.name, p.length, &ino));
    if (ino == 0)
        return k_enoent;
    Inode in;
    TRY(inode_read(fs, ino, &in));
    if (is_dir(in))
        return k_eisdir;
    if (p.trailing_slash)
        return k_enotdir;
    TRY(dir_remove(fs, p.dir, p.name, p.length));
    return drop_link(fs, ino);
}

Errno ext2_link(Ext2Fs& fs, const char* existing, const char* path)
{
    FsLock lock(fs);
    uint32_t ino = 0;
    TRY(walk(fs, existing, false, &ino));
    Inode in;
    TRY(inode_read(fs, ino, &in));
    if (is_dir(in))
        return k_eperm;
    if (in.i_links_count >= k_link_max)
        return k_emlink;
    Parent p;
    TRY(walk_parent(fs, path, &p));
    uint32_t there = 0;
    TRY(dir_find(fs, p.dir, p.name, p.length, &there));
    if (there != 0 || is_dot(p) || is_dotdot(p))
        return k_eexist;
    TRY(dir_add(fs, p.dir, p.name, p.length, ino, file_type(in.i_mode)));
    return adjust_links(fs, ino, +1);
}

Errno ext2_symlink(Ext2Fs& fs, const char* target, const char* path)
{
    FsLock lock(fs);
    size_t n = strlen(target);
    if (n == 0)
        return k_enoent;
    if (n >= fs.block_size || n >= k_walk_max)
        return k_enametoolong;
    Parent p;
    TRY(walk_parent(fs, path, &p));
    uint32_t there = 0;
    TRY(dir_find(fs, p.dir, p.name, p.length, &there));
    if (there != 0 || is_dot(p) || is_dotdot(p))
        return k_eexist;
    Result<uint32_t> ino = inode_alloc(fs, inode_group(fs, p.dir), false);
    if (!ino)
        return ino.error();
    Inode in = new_inode(fs, static_cast<uint16_t>(k_mode_lnk | 0777), 1);
    if (n < k_fast_symlink_max) {
        memcpy(in.i_block, target, n);
    } else {
        uint32_t block = 0;
        TRY(bmap(fs, in, ino.value(), 0, true, &block));
        Errno e = k_ok;
        Buffer* b = bget_zeroed(*fs.device, block, fs.block_size, &e);
        if (!b)
            return e;
        memcpy(b->data, target, n);
        mdirty(fs, b);
        brelse(b);
    }
    inode_set_size(in, n);
    TRY(inode_write_new(fs, ino.value(), in));
    return dir_add(fs, p.dir, p.name, p.length, ino.value(), k_ft_symlink);
}

Errno ext2_rename(Ext2Fs& fs, const char* from, const char* to)
{
    FsLock lock(fs);
    Parent src, dst;
    TRY(walk_parent(fs, from, &src));
    TRY(walk_parent(fs, to, &dst));
    if (is_dot(src) || is_dotdot(src) || is_dot(dst) || is_dotdot(dst))
        return k_einval;
    uint32_t ino = 0, victim = 0;
    TRY(dir_find(fs, src.dir, src.name, src.length, &ino));
    if (ino == 0)
        return k_enoent;
    TRY(dir_find(fs, dst.dir, dst.name, dst.length, &victim));
    if (victim == ino)
        return k_ok;
    Inode in;
    TRY(inode_read(fs, ino, &in));
    bool moving_dir = is_dir(in);
    if (moving_dir && src.dir != dst.dir) {
        // The destination must not lie inside the directory moved: walk up
        // from it by "..", at most as far as there are inodes.
        uint32_t up = dst.dir;
        for (uint32_t steps = 0; up != k_root_ino; ++steps) {
            if (up == ino)
                return k_einval;
            if (steps > fs.sb.s_inodes_count)
                return corrupt(fs, "a loop of '..' above directory", dst.dir);
            uint32_t next = 0;
            TRY(dir_find(fs, up, "..", 2, &next));
            if (next == 0)
                return corrupt(fs, "no '..' in directory", up);
            up = next;
        }
    }
    if (!moving_dir && (src.trailing_slash || dst.trailing_slash))
        return k_enotdir;
    if (victim != 0) {
        Inode v;
        TRY(inode_read(fs, victim, &v));
        if (moving_dir && !is_dir(v))
            return k_enotdir;
        if (!moving_dir && is_dir(v))
            return k_eisdir;
        if (is_dir(v)) {
            bool empty = false;
            TRY(dir_empty(fs, victim, &empty));
            if (!empty)
                return k_enotempty;
        }
        TRY(dir_remove(fs, dst.dir, dst.name, dst.length));
        if (is_dir(v)) {
            TRY(adjust_links(fs, dst.dir, -1));
            TRY(release_inode(fs, victim));
        } else {
            TRY(drop_link(fs, victim));
        }
    }
    TRY(dir_add(fs, dst.dir, dst.name, dst.length, ino, file_type(in.i_mode)));
    TRY(dir_remove(fs, src.dir, src.name, src.length));
    if (moving_dir && src.dir != dst.dir) {
        TRY(dir_set_dotdot(fs, ino, dst.dir));
        TRY(adjust_links(fs, src.dir, -1));
        TRY(adjust_links(fs, dst.dir, +1));
    }
    return adjust_links(fs, ino, 0); // ctime
}

long ext2_readlink(Ext2Fs& fs, const char* path, uintptr_t buffer, size_t size)
{
    FsLock lock(fs);
    uint32_t ino = 0;
    if (Errno e = walk(fs, path, false, &ino); e != k_ok)
        return -e;
    Inode in;
    if (Errno e = inode_read(fs, ino, &in); e != k_ok)
        return -e;
    if ((in.i_mode & k_mode_type) != k_mode_lnk)
        return -k_einval;
    char target[k_walk_max];
    size_t n = 0;
    if (Errno e = read_symlink(fs, in, target, sizeof target, &n); e != k_ok)
        return -e;
    if (n > size)
        n = size;
    if (Errno e = sys::copyout(buffer, target, n); e != k_ok)
        return -e;
    return static_cast<long>(n);
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

void ext2_open_count(Ext2Fs& fs, uint32_t ino, int delta)
{
    FsLock lock(fs);
    OpenInode* slot = nullptr;
    for (OpenInode& o : fs.open)
        if (o.ino == ino && o.opens > 0)
            slot = &o;
    if (!slot && delta > 0)
        for (OpenInode& o : fs.open)
            if (o.opens == 0) {
                slot = &o;
                slot->ino = ino;
                break;
            }
    if (!slot)
        return; // the table is full: an unlinked open file is freed at once
    slot->opens += delta;
    if (slot->opens > 0)
        return;
    slot->opens = 0;
    Inode in;
    if (inode_read(fs, ino, &in) == k_ok && in.i_links_count == 0 && in.i_dtime == 0)
        (void)release_inode(fs, ino);
}

} // namespace toll::fs
