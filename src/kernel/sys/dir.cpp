// getdents64 over the file tree's directories (vfs.h). A directory's
// entries are ".", "..", then its names in creation order (or /proc's, made
// on the spot); the file offset counts entries, so lseek(fd, 0, SEEK_SET)
// rewinds.
#include "kernel/fs/mount.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/sys/vfs.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

// Linux, include/linux/fs_types.h (also dirent.h): the d_type values.
constexpr uint8_t k_dt_chr = 2, k_dt_dir = 4, k_dt_reg = 8, k_dt_lnk = 10;
// Linux, include/linux/dirent.h: struct linux_dirent64 is d_ino (8 bytes),
// d_off (8), d_reclen (2), d_type (1), then the NUL-terminated name; each
// record is padded to 8 bytes.
constexpr size_t k_name_offset = 19, k_record_align = 8;

uint8_t type_of(const Node* n)
{
    switch (n->mode & k_s_ifmt) {
    case k_s_ifdir:
        return k_dt_dir;
    case k_s_iflnk:
        return k_dt_lnk;
    case k_s_ifchr:
        return k_dt_chr;
    default:
        return k_dt_reg;
    }
}

// Entry @p index (after "." and "..") of directory @p dir: its name into
// @p name, d_type and inode number. False past the last.
bool entry_at(const Node* dir, size_t index, char* name, size_t size, uint8_t* type, uint64_t* ino)
{
    if (dir->proc != ProcKind::none) {
        *ino = 0x10000 + index; // made up: /proc's nodes are made per look-up
        return proc_entry(dir, index, name, size, type);
    }
    // lock: vfs
    const DirEntry* e = dir->entries;
    for (size_t i = 0; e && i < index; ++i)
        e = e->next;
    if (!e)
        return false;
    size_t n = strnlen(e->name, size - 1);
    memcpy(name, e->name, n);
    name[n] = '\0';
    *type = type_of(e->node);
    *ino = e->node->ino;
    return true;
}

} // namespace

long sys_getdents64(const SyscallArgs& a)
{
    File* f = fd_get(static_cast<int>(a.a[0]));
    if (!f)
        return -k_ebadf;
    if (fs::mount_is_dir(*f))
        return fs::mount_getdents(*f, a.a[1], static_cast<unsigned>(a.a[2]));
    Node* dir = file_node(*f);
    if (!dir || (dir->mode & k_s_ifmt) != k_s_ifdir)
        return -k_enotdir;
    // count is an unsigned int (Linux: SYSCALL_DEFINE3(getdents64, ...)).
    uintptr_t buffer = a.a[1];
    size_t count = static_cast<unsigned>(a.a[2]);
    if (!user_range_ok(buffer, count) || buffer == 0)
        return -k_efault;
    size_t done = 0;
    for (;; ++f->offset) {
        uint8_t record[k_name_offset + k_name_max + 1 + k_record_align] = {};
        char name[k_name_max + 1];
        uint8_t type = k_dt_dir;
        uint64_t ino;
        if (f->offset < 2) {
            memcpy(name, "..", 3);
            name[f->offset + 1] = '\0';
            const Node* which = f->offset == 0 || !dir->parent ? dir : dir->parent;
            ino = which->ino;
        } else if (!entry_at(dir, static_cast<size_t>(f->offset - 2), name, sizeof name, &type,
                             &ino)) {
            break; // past the last entry (or seeked beyond it)
        }
        size_t length = strlen(name);
        size_t reclen = (k_name_offset + length + 1 + k_record_align - 1) & ~(k_record_align - 1);
        if (reclen > count - done) {
            if (done == 0)
                return -k_einval; // Linux: the buffer cannot hold one entry
            break;
        }
        // d_off: the offset of the next entry, for telldir/seekdir.
        uint64_t next = f->offset + 1;
        uint16_t reclen16 = static_cast<uint16_t>(reclen);
        memcpy(record, &ino, 8);
        memcpy(record + 8, &next, 8);
        memcpy(record + 16, &reclen16, 2);
        record[18] = type;
        memcpy(record + k_name_offset, name, length + 1); // with its NUL
        if (Errno e = copyout(buffer + done, record, reclen); e != k_ok)
            return done ? static_cast<long>(done) : -e;
        done += reclen;
    }
    return static_cast<long>(done);
}

} // namespace toll::sys
