// ext2 names: path look-up with symbolic links, and the calls that add and
// remove names (create, mkdir, rmdir, unlink, link, symlink, rename) and
// readlink, over the directory entries of ext2_dirent.cpp. A hostile
// image's bad entry is an error (EIO), never a loop.
#include "kernel/fs/ext2_internal.h"
#include "kernel/fs/pagecache.h"
#include "kernel/kern/console.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::fs {

using namespace ext2;

namespace {

// Linux, include/uapi/linux/limits.h and fs/namei.c.
constexpr size_t k_walk_max = 512;
constexpr int k_max_symlinks = 40;
constexpr uint16_t k_link_max = 32000; // Linux's EXT2_LINK_MAX

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
