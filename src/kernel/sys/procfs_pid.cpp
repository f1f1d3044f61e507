// /proc/PID/maps and /proc/PID/fd/: a process's regions, one line each in
// Linux's format, and its open descriptors as symbolic links to what each
// one is. Both are read from another process's state under the process
// table's lock, which keeps the process (and, since exec and exit swap it
// under that lock, its address space) alive while they look.
#include "kernel/arch/pmap.h"
#include "kernel/arch/signal.h"
#include "kernel/proc/process.h"
#include "kernel/sys/devices.h"
#include "kernel/sys/procfs_internal.h"
#include "kernel/vm/vmobject.h"
#include "kernel/vm/vmspace.h"

namespace toll::sys {
namespace {

// Linux, include/linux/fs_types.h: d_type of a symbolic link.
constexpr uint8_t k_dt_lnk = 10;
// Linux, include/uapi/linux/stat.h: S_IFSOCK.
constexpr uint32_t k_s_ifsock = 0140000;

// The name Linux's maps prints for region @p r of @p space, or nullptr:
// the program's path for its segments, [heap] for the region the break
// grows, [stack] for the one at the top of user space, and [sigpage] for
// the page of signal-return code exec maps (Linux/arm's name for its
// equivalent; Linux/i386 calls its page [vdso]). A file mapped by mmap
// keeps no path in Toll: it shows its inode number only.
const char* region_name(const vm::VmSpace& space, const vm::Region& r, const char* exe)
{
    if (r.start >= space.image_start && r.end <= space.brk_start && space.brk_start)
        return exe;
    if (space.brk > space.brk_start && r.start < space.brk && r.end > space.brk_start)
        return "[heap]";
    uintptr_t top = arch::user_space_limit();
    if (r.start < top && r.end >= top)
        return "[stack]";
    const uint8_t* code;
    if (arch::signal_trampoline(&code) && r.start == proc::signal_trampoline_address())
        return "[sigpage]";
    return nullptr;
}

void region_line(Text& t, const vm::VmSpace& space, const vm::Region& r, const char* exe)
{
    // Linux, fs/proc/task_mmu.c (show_map_vma): start-end, rwx and p or s,
    // the file offset, major:minor of the device, the inode, and the name
    // in a column of its own (25 + 6 characters per pointer's width).
    constexpr int k_name_column = 25 + static_cast<int>(sizeof(void*)) * 6 - 1;
    uint64_t offset = 0, inode = 0;
    if (r.object) {
        offset = (r.object->file_page + r.object_page) * vm::k_page_size;
        inode = r.object->ino;
    }
    char line[128];
    size_t n = lib::snformat(
        line, sizeof line, "%08lx-%08lx %c%c%c%c %08llx 00:00 %llu", (unsigned long)r.start,
        (unsigned long)r.end, (r.prot & arch::k_prot_read) ? 'r' : '-',
        (r.prot & arch::k_prot_write) ? 'w' : '-', (r.prot & arch::k_prot_exec) ? 'x' : '-',
        r.shared ? 's' : 'p', (unsigned long long)offset, (unsigned long long)inode);
    if (n >= sizeof line)
        n = sizeof line - 1;
    t.append(line, n);
    if (const char* name = region_name(space, r, exe))
        t.add("%*s%s",
              static_cast<int>(n) < k_name_column ? k_name_column - static_cast<int>(n) : 1, "",
              name);
    t.append("\n", 1);
}

// The descriptor named @p name (decimal digits only, as Linux's), or -1.
int parse_fd(const char* name, size_t length)
{
    if (length == 0 || length > 2 || (length == 2 && name[0] == '0'))
        return -1;
    int fd = 0;
    for (size_t i = 0; i < length; ++i) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        fd = fd * 10 + (name[i] - '0');
    }
    return fd < proc::k_max_fds ? fd : -1;
}

// A further reference to descriptor @p fd of process @p pid, or an empty one.
FileRef fd_of(int pid, int fd)
{
    SpinGuard g(proc::process_table_lock());
    proc::Process* p = proc::find_process(pid);
    if (!p || p->zombie)
        return FileRef{};
    SpinGuard f(p->files_lock);
    File* file = p->files[fd].get();
    return file ? file_share(file) : FileRef{};
}

// The entry that names @p target, searched for through the whole tree from
// the root (a file, unlike a directory, keeps no link to the directory that
// holds it), with that directory in @p *where; nullptr when no entry does
// (the file was removed). O(nodes of the tree), walked without recursion:
// a directory is left for its parent through its parent link, and the walk
// resumes after the entry that named it.
const DirEntry* entry_naming(const Node* target, const Node** where)
{
    const Node* root = vfs_root();
    const Node* dir = root;
    const DirEntry* e = dir->entries;
    for (;;) {
        for (; e; e = e->next) {
            const Node* n = e->node;
            if (n == target) {
                *where = dir;
                return e;
            }
            if ((n->mode & k_s_ifmt) == k_s_ifdir && n->proc == ProcKind::none &&
                n->parent == dir && n->entries)
                break;
        }
        if (e) { // down into the directory e names
            dir = e->node;
            e = dir->entries;
            continue;
        }
        if (dir == root)
            return nullptr;
        const Node* up = dir->parent;
        const DirEntry* back = up->entries;
        while (back && back->node != dir)
            back = back->next;
        if (!back)
            return nullptr;
        e = back->next;
        dir = up;
    }
}

// The absolute path of @p node into @p out: node_path for a directory, the
// search of entry_naming for a file. False when it has no name.
bool path_of(const Node* node, char* out, size_t size)
{
    if ((node->mode & k_s_ifmt) == k_s_ifdir)
        return static_cast<bool>(node_path(node, out, size));
    const Node* dir = nullptr;
    const DirEntry* e = entry_naming(node, &dir);
    if (!e)
        return false;
    Result<size_t> length = node_path(dir, out, size);
    if (!length)
        return false;
    size_t at = length.value() == 1 ? 0 : length.value(); // the root is "/" alone
    lib::snformat(out + at, size - at, "/%s", e->name);
    return true;
}

// What descriptor @p file is, as Linux's readlink of /proc/PID/fd/N says it:
// the path of a file of the tree, the device's name, pipe:[N] or socket:[N]
// with the number fstat gives as st_ino.
void describe(const File& file, char* out, size_t size)
{
    if (Node* n = file_node(file)) {
        if (n->proc == ProcKind::fd_dir) { // named by no entry, nor its parent
            lib::snformat(out, size, "/proc/%d/fd", n->proc_pid);
            return;
        }
        if (path_of(n, out, size))
            return;
        // Removed from the tree while open: Linux shows the old path and
        // " (deleted)", but a removed file keeps no name here.
        lib::snformat(out, size, "(deleted)");
        return;
    }
    if (const char* device = device_name(file.ops)) {
        lib::snformat(out, size, "%s", device);
        return;
    }
    unsigned long long ino = file_made_up_ino(file);
    switch (static_cast<uint32_t>(file.ops->mode) & k_s_ifmt) {
    case k_s_ififo:
        lib::snformat(out, size, "pipe:[%llu]", ino);
        break;
    case k_s_ifsock:
        lib::snformat(out, size, "socket:[%llu]", ino);
        break;
    default:
        // A file of the disk (/mnt): Toll keeps no path for an open one.
        lib::snformat(out, size, "anon_inode:[%s]",
                      (file.ops->mode & k_s_ifmt) == k_s_ifdir ? "directory" : "file");
        break;
    }
}

} // namespace

void proc_pid_memory(proc::Process& p, uint64_t* bytes, uint64_t* resident_pages)
{
    *bytes = *resident_pages = 0;
    vm::VmSpace* space = p.vm;
    if (!space)
        return;
    SpinGuard v(space->lock);
    for (const vm::Region* r = space->regions.first(); r; r = r->next)
        *bytes += r->end - r->start;
    *resident_pages = space->resident_pages;
}

void proc_pid_maps(Text& t, int pid)
{
    SpinGuard g(proc::process_table_lock());
    proc::Process* p = proc::find_process(pid);
    if (!p || !p->vm)
        return;
    char exe[sizeof p->exe];
    memcpy(exe, p->exe, sizeof exe);
    exe[sizeof exe - 1] = '\0';
    SpinGuard v(p->vm->lock);
    for (const vm::Region* r = p->vm->regions.first(); r && !t.failed; r = r->next)
        region_line(t, *p->vm, *r, exe);
}

NodeRef proc_fd_find(Node* dir, const char* name, size_t length)
{
    int fd = parse_fd(name, length);
    if (fd < 0)
        return NodeRef{};
    FileRef file = fd_of(dir->proc_pid, fd);
    if (!file)
        return NodeRef{};
    char target[256];
    describe(*file.get(), target, sizeof target);
    // Linux shows the access mode in the link's bits: r-x, -wx or rwx for
    // the owner (fs/proc/fd.c).
    int access = file->flags & k_o_accmode;
    uint32_t mode = 0100 | (access != k_o_wronly ? 0400 : 0) | (access != k_o_rdonly ? 0200 : 0);
    return proc_make_link(target, mode);
}

bool proc_fd_entry(const Node* dir, size_t index, char* name, size_t size, uint8_t* type)
{
    SpinGuard g(proc::process_table_lock());
    proc::Process* p = proc::find_process(dir->proc_pid);
    if (!p || p->zombie)
        return false;
    SpinGuard f(p->files_lock);
    size_t seen = 0;
    for (int fd = 0; fd < proc::k_max_fds; ++fd)
        if (p->files[fd] && seen++ == index) {
            lib::snformat(name, size, "%d", fd);
            *type = k_dt_lnk;
            return true;
        }
    return false;
}

} // namespace toll::sys
