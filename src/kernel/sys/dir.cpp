// Directories of the initial ramdisk and getdents64. The archive holds only
// regular files, so a directory exists wherever a file path passes through
// it: "/" always, "/bin" because of "/bin/sh". A directory's entries are
// ".", "..", then each distinct next path component under it, in archive
// order; the file offset counts entries, so lseek(fd, 0, SEEK_SET) rewinds.
#include "kernel/fs/mount.h"
#include "kernel/proc/initrd.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

// Linux, include/linux/fs_types.h (also dirent.h): the d_type values.
constexpr uint8_t k_dt_dir = 4, k_dt_reg = 8;
// Linux, include/linux/dirent.h: struct linux_dirent64 is d_ino (8 bytes),
// d_off (8), d_reclen (2), d_type (1), then the NUL-terminated name; each
// record is padded to 8 bytes.
constexpr size_t k_name_offset = 19, k_record_align = 8;
constexpr size_t k_name_max = sizeof proc::RamdiskFile{}.path;

// The directory a File names: the path's first data->size bytes of some
// ramdisk file path (size 0 is the root). No copy is needed: the index of
// ramdisk files is fixed after boot.
const char* dir_prefix(const File& f)
{
    return reinterpret_cast<const char*>(f.data);
}

// If ramdisk path @p path lies under the directory [prefix, prefix+length),
// the length of its next component (which starts at path + length + 1);
// otherwise 0.
size_t child_length(const char* path, const char* prefix, size_t length)
{
    if (strncmp(path, prefix, length) != 0 || path[length] != '/')
        return 0;
    const char* name = path + length + 1;
    size_t n = 0;
    while (name[n] && name[n] != '/')
        ++n;
    return n;
}

// Walks the entries of directory @p f after "." and "..", in archive order.
struct DirCursor {
    size_t file = 0;    ///< the next ramdisk file to look at
    size_t ordinal = 0; ///< entries returned so far
};

// The next entry at or after @p c: its name (not NUL-terminated), length and
// d_type. False past the last entry.
bool dir_next(const File& f, DirCursor& c, const char** name, size_t* length, uint8_t* type)
{
    const char* prefix = dir_prefix(f);
    for (; const proc::RamdiskFile* rf = proc::initrd_file(c.file); ++c.file) {
        size_t n = child_length(rf->path, prefix, f.size);
        if (n == 0)
            continue;
        const char* child = rf->path + f.size + 1;
        bool is_dir = child[n] == '/';
        // A file's path is unique in the index, but a subdirectory shows in
        // every path through it: only its first appearance counts ("/bin/a"
        // and "/bin/b" give the root one entry, "bin").
        bool repeat = false;
        for (size_t j = 0; is_dir && j < c.file && !repeat; ++j) {
            const char* other = proc::initrd_file(j)->path;
            repeat = child_length(other, prefix, f.size) == n &&
                     memcmp(other + f.size + 1, child, n + 1) == 0;
        }
        if (repeat)
            continue;
        *name = child;
        *length = n;
        *type = is_dir ? k_dt_dir : k_dt_reg;
        ++c.file;
        ++c.ordinal;
        return true;
    }
    return false;
}

long dir_read(File&, uintptr_t, size_t)
{
    return -k_eisdir;
}

long dir_write(File&, uintptr_t, size_t)
{
    return -k_ebadf; // opened O_RDONLY, always
}

constexpr int k_s_ifdir = 040000;
const FileOps k_dir_ops = {dir_read, dir_write, nullptr, nullptr, k_s_ifdir};

} // namespace

Result<FileRef> dir_open(const char* path, size_t length, int flags)
{
    // Is there a ramdisk file under path? Then path is a directory; the
    // File keeps a pointer into that file's own path as its name.
    const char* name = nullptr;
    if (length == 0)
        name = "/";
    for (size_t i = 0; !name; ++i) {
        const proc::RamdiskFile* rf = proc::initrd_file(i);
        if (!rf)
            return k_enoent;
        if (child_length(rf->path, path, length) != 0)
            name = rf->path;
    }
    // Linux: a directory may be opened only for reading.
    if ((flags & k_o_accmode) != k_o_rdonly || (flags & (k_o_creat | k_o_trunc)))
        return k_eisdir;
    FileRef f = file_new(&k_dir_ops, k_o_rdonly);
    if (!f)
        return k_enomem;
    f->data = reinterpret_cast<const uint8_t*>(name);
    f->size = length;
    return f;
}

long sys_getdents64(const SyscallArgs& a)
{
    File* f = fd_get(static_cast<int>(a.a[0]));
    if (!f)
        return -k_ebadf;
    if (fs::mount_is_dir(*f))
        return fs::mount_getdents(*f, a.a[1], static_cast<unsigned>(a.a[2]));
    if (f->ops != &k_dir_ops)
        return -k_enotdir;
    // count is an unsigned int (Linux: SYSCALL_DEFINE3(getdents64, ...)).
    uintptr_t buffer = a.a[1];
    size_t count = static_cast<unsigned>(a.a[2]);
    if (!user_range_ok(buffer, count) || buffer == 0)
        return -k_efault;
    size_t done = 0;
    // Entries 0 and 1 are "." and ".."; entry k >= 2 is the cursor's k-2nd.
    DirCursor cursor;
    const char* name;
    size_t length;
    uint8_t type = k_dt_dir;
    while (f->offset > cursor.ordinal + 2 && dir_next(*f, cursor, &name, &length, &type)) {
    }
    for (;; ++f->offset) {
        uint8_t record[k_name_offset + k_name_max + k_record_align] = {};
        if (f->offset == 0 || f->offset == 1) {
            name = "..";
            length = static_cast<size_t>(f->offset) + 1;
            type = k_dt_dir;
        } else if (f->offset != cursor.ordinal + 2 ||
                   !dir_next(*f, cursor, &name, &length, &type)) {
            break; // past the last entry (or seeked beyond it)
        }
        size_t reclen = (k_name_offset + length + 1 + k_record_align - 1) & ~(k_record_align - 1);
        if (reclen > count - done) {
            if (done == 0)
                return -k_einval; // Linux: the buffer cannot hold one entry
            break;
        }
        // d_ino: any nonzero number (readdir implementations skip 0);
        // d_off: the offset of the next entry, for telldir/seekdir.
        uint64_t ino = f->offset + 1, next = f->offset + 1;
        uint16_t reclen16 = static_cast<uint16_t>(reclen);
        memcpy(record, &ino, 8);
        memcpy(record + 8, &next, 8);
        memcpy(record + 16, &reclen16, 2);
        record[18] = type;
        memcpy(record + k_name_offset, name, length);
        if (Errno e = copyout(buffer + done, record, reclen); e != k_ok)
            return done ? static_cast<long>(done) : -e;
        done += reclen;
    }
    return static_cast<long>(done);
}

} // namespace toll::sys
