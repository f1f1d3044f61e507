// The in-memory file tree (vfs.h): nodes and their references, directories,
// path look-up with symbolic links, file data with copy on write from the
// ramdisk, and the tree's first contents.
//
// Locking: every function here reads or changes the tree and runs under
// the tree's one lock ("lock: vfs" marks each place that needs it) while the
// kernel runs one CPU's system calls at a time; none of them sleeps.
#include "kernel/sys/vfs.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/initrd.h"
#include "kernel/proc/process.h"
#include "kernel/sys/devices.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmalloc.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

TOLL_GAUGE(g_nodes, "sys.vfs.nodes");
TOLL_GAUGE(g_bytes, "sys.vfs.bytes");

Node* g_root;
uint64_t g_next_ino = 1; // lock: vfs

// The largest file Toll keeps (its data is one kernel allocation): Linux
// would say EFBIG past the file system's s_maxbytes; this is Toll's.
constexpr uint64_t k_max_file = 64u << 20;

bool is_dir(const Node* n)
{
    return (n->mode & k_s_ifmt) == k_s_ifdir;
}

void node_free(Node* n)
{
    // lock: vfs (the node is unreachable: no entry names it, no ref holds it)
    if (n->data) {
        g_bytes.lower(n->capacity);
        vm::kfree(n->data);
    }
    for (DirEntry* e = n->entries; e;) {
        DirEntry* next = e->next;
        vm::kfree(e->name);
        destroy(e);
        e = next;
    }
    destroy(n);
    g_nodes.lower();
}

Node* current_cwd()
{
    proc::Process* p = proc::current_process();
    return p && p->cwd ? p->cwd.get() : g_root;
}

// Makes the directory chain of ramdisk path @p path (all but its last
// component) and returns the directory that holds the last; nullptr when
// memory is short.
Node* make_dirs(const char* path, const char** last)
{
    Node* dir = g_root;
    const char* p = path;
    for (;;) {
        while (*p == '/')
            ++p;
        const char* end = strchr(p, '/');
        if (!end) {
            *last = p;
            return dir;
        }
        NodeRef next = dir_find(dir, p, static_cast<size_t>(end - p));
        if (!next) {
            next = node_new(k_s_ifdir | 0755);
            if (!next || dir_link(dir, p, static_cast<size_t>(end - p), next.get()) != k_ok)
                return nullptr;
        }
        dir = next.get(); // named by its parent: alive after the ref goes
        p = end;
    }
}

void add_node(const char* path, Node* n)
{
    const char* last;
    Node* dir = make_dirs(path, &last);
    if (!dir || dir_link(dir, last, strlen(last), n) != k_ok)
        kprintf("vfs: no memory for %s\n", path);
}

// --- Regular files and directories as open files -------------------------

Node* node_of(const File& f)
{
    return static_cast<Node*>(f.object);
}

long node_read(File& f, uintptr_t buffer, size_t count)
{
    Node* n = node_of(f);
    if (f.offset >= n->size)
        return 0;
    size_t size = static_cast<size_t>(n->size - f.offset);
    size_t count_done = size < count ? size : count;
    if (Errno e = copyout(buffer, node_bytes(n) + f.offset, count_done); e != k_ok)
        return -e;
    f.offset += count_done;
    n->atime = vfs_now();
    return static_cast<long>(count_done);
}

long node_file_write(File& f, uintptr_t buffer, size_t count)
{
    Node* n = node_of(f);
    if (f.flags & k_o_append)
        f.offset = n->size;
    long r = node_write(n, f.offset, buffer, count);
    if (r > 0)
        f.offset += static_cast<uint64_t>(r);
    return r;
}

void node_release(File& f)
{
    Node* n = node_of(f);
    // lock: vfs. The File's reference goes; the node with it if it was the last.
    if (--n->refs == 0 && n->links == 0 && n != g_root)
        node_free(n);
}

long dir_read(File&, uintptr_t, size_t)
{
    return -k_eisdir;
}

long read_only_write(File&, uintptr_t, size_t)
{
    return -k_ebadf; // opened O_RDONLY, always
}

// A /proc file: the text made at open, in data; freed at the last close.
long text_read(File& f, uintptr_t buffer, size_t count)
{
    if (f.offset >= f.size)
        return 0;
    size_t n = f.size - f.offset < count ? static_cast<size_t>(f.size - f.offset) : count;
    if (Errno e = copyout(buffer, f.data + f.offset, n); e != k_ok)
        return -e;
    f.offset += n;
    return static_cast<long>(n);
}

void text_release(File& f)
{
    vm::kfree(const_cast<uint8_t*>(f.data));
    node_release(f);
}

const FileOps k_node_ops = {node_read, node_file_write, nullptr, node_release,
                            static_cast<int>(k_s_ifreg)};
const FileOps k_text_ops = {text_read, read_only_write, nullptr, text_release,
                            static_cast<int>(k_s_ifreg)};

} // namespace

const FileOps k_dir_ops = {dir_read, read_only_write, nullptr, node_release,
                           static_cast<int>(k_s_ifdir)};

NodeRef::NodeRef(Node* node) : m_node(node)
{
    if (node)
        ++node->refs; // lock: vfs
}

NodeRef& NodeRef::operator=(const NodeRef& other)
{
    if (this != &other) {
        NodeRef copy(other);
        *this = toll::move(copy);
    }
    return *this;
}

NodeRef& NodeRef::operator=(NodeRef&& other) noexcept
{
    if (this != &other) {
        reset();
        m_node = other.m_node;
        other.m_node = nullptr;
    }
    return *this;
}

void NodeRef::reset()
{
    Node* n = m_node;
    m_node = nullptr;
    // lock: vfs
    if (n && --n->refs == 0 && n->links == 0 && n != g_root)
        node_free(n);
}

NodeRef node_new(uint32_t mode)
{
    Node* n = make<Node>();
    if (!n)
        return NodeRef{};
    n->mode = mode;
    n->ino = g_next_ino++; // lock: vfs
    n->atime = n->mtime = n->ctime = vfs_now();
    g_nodes.raise();
    return NodeRef{n};
}

Timestamp vfs_now()
{
    uint64_t hz = arch::clock_hz();
    uint64_t t = proc::ticks();
    constexpr uint64_t k_ns_per_s = 1000000000;
    return Timestamp{static_cast<int64_t>(t / hz),
                     static_cast<uint32_t>((t % hz) * k_ns_per_s / hz)};
}

void node_touch(Node* node, bool modified)
{
    Timestamp now = vfs_now();
    node->ctime = now;
    if (modified)
        node->mtime = now;
}

Node* vfs_root()
{
    return g_root;
}

void vfs_init()
{
    NodeRef root = node_new(k_s_ifdir | 0755);
    TOLL_ASSERT(root);
    g_root = root.get();
    g_root->links = 1; // the root names itself: it never goes
    g_root->parent = g_root;
    for (size_t i = 0; const proc::RamdiskFile* rf = proc::initrd_file(i); ++i) {
        NodeRef file = node_new(k_s_ifreg | 0755);
        if (!file)
            break;
        file->image = rf->data;
        file->size = rf->size;
        add_node(rf->path, file.get());
    }
    struct Device {
        const char* path;
        const char* name;
        uint32_t mode;
    };
    const Device devices[] = {
        {"/dev/console", "/dev/console", 0600}, {"/dev/tty", "/dev/tty", 0666},
        {"/dev/null", "/dev/null", 0666},       {"/dev/zero", "/dev/zero", 0666},
        {"/dev/full", "/dev/full", 0666},       {"/dev/random", "/dev/random", 0666},
        {"/dev/urandom", "/dev/urandom", 0666}};
    for (const Device& d : devices) {
        NodeRef dev = node_new(k_s_ifchr | d.mode);
        if (!dev)
            break;
        dev->device = device_lookup(d.name);
        add_node(d.path, dev.get());
    }
    // /dev is Toll's fixed set of devices, as if mounted read-only: no
    // program can rename or remove the console or /dev/null.
    if (Result<NodeRef> dev = vfs_lookup(g_root, "/dev", k_want_dir); dev)
        dev.value()->read_only = true;
    NodeRef tmp = node_new(k_s_ifdir | 01777);
    if (tmp)
        (void)dir_link(g_root, "tmp", 3, tmp.get());
    NodeRef proc = proc_make_root();
    if (proc)
        (void)dir_link(g_root, "proc", 4, proc.get());
}

NodeRef dir_find(Node* dir, const char* name, size_t length)
{
    if (length == 1 && name[0] == '.')
        return NodeRef{dir};
    if (length == 2 && name[0] == '.' && name[1] == '.' && dir->proc != ProcKind::fd_dir)
        return NodeRef{dir->parent ? dir->parent : dir}; // (/proc's fd: proc_find)
    if (dir->proc != ProcKind::none)
        return proc_find(dir, name, length);
    // lock: vfs
    for (DirEntry* e = dir->entries; e; e = e->next)
        if (strlen(e->name) == length && memcmp(e->name, name, length) == 0)
            return NodeRef{e->node};
    return NodeRef{};
}

Errno dir_writable(const Node* dir)
{
    if (dir->links == 0)
        return k_enoent;
    if (dir->proc != ProcKind::none)
        return k_eacces;
    return dir->read_only ? k_erofs : k_ok;
}

Errno dir_link(Node* dir, const char* name, size_t length, Node* node)
{
    if (NodeRef there = dir_find(dir, name, length))
        return k_eexist;
    DirEntry* e = make<DirEntry>();
    char* copy = static_cast<char*>(vm::kmalloc(length + 1));
    if (!e || !copy) {
        destroy(e);
        vm::kfree(copy);
        return k_enomem;
    }
    memcpy(copy, name, length);
    copy[length] = '\0';
    e->name = copy;
    e->node = node;
    e->next = nullptr;
    // lock: vfs. Appended, so that a directory lists in creation order and
    // an entry's offset stays put while later ones are added.
    DirEntry** tail = &dir->entries;
    while (*tail)
        tail = &(*tail)->next;
    *tail = e;
    ++node->links;
    if (is_dir(node)) {
        node->parent = dir;
        ++dir->subdirs;
    }
    node_touch(dir, true);
    node_touch(node, false);
    return k_ok;
}

void dir_unlink(Node* dir, const char* name, size_t length)
{
    // lock: vfs
    for (DirEntry** at = &dir->entries; *at; at = &(*at)->next) {
        DirEntry* e = *at;
        if (strlen(e->name) != length || memcmp(e->name, name, length) != 0)
            continue;
        *at = e->next;
        Node* n = e->node;
        vm::kfree(e->name);
        destroy(e);
        if (is_dir(n))
            --dir->subdirs;
        node_touch(dir, true);
        node_touch(n, false);
        NodeRef last(n); // frees the node here if nothing else holds it
        if (--n->links == 0 && is_dir(n))
            n->parent = nullptr; // a removed directory has no ".." left
        return;
    }
}

namespace {

// The look-up of vfs_lookup, with @p links_left symbolic links still allowed.
Result<NodeRef> walk(Node* base, const char* path, int how, int* links_left)
{
    if (!*path)
        return k_enoent; // Linux: the empty path names nothing
    NodeRef cur(path[0] == '/' ? g_root : base);
    const char* p = path;
    for (;;) {
        while (*p == '/')
            ++p;
        if (!*p)
            break;
        const char* name = p;
        size_t length = 0;
        while (p[length] && p[length] != '/')
            ++length;
        p += length;
        if (length > k_name_max)
            return k_enametoolong;
        if (!is_dir(cur.get()))
            return k_enotdir;
        const char* rest = p;
        while (*rest == '/')
            ++rest;
        bool last = *rest == '\0';
        NodeRef next = dir_find(cur.get(), name, length);
        if (!next)
            return k_enoent;
        if ((next->mode & k_s_ifmt) == k_s_iflnk && (!last || (how & k_follow) || *p == '/')) {
            if (--*links_left < 0)
                return k_eloop;
            char* target = static_cast<char*>(vm::kmalloc(static_cast<size_t>(next->size) + 1));
            if (!target)
                return k_enomem;
            memcpy(target, node_bytes(next.get()), static_cast<size_t>(next->size));
            target[next->size] = '\0';
            Result<NodeRef> r = walk(cur.get(), target, k_follow, links_left);
            vm::kfree(target);
            if (!r)
                return r.error();
            next = r.release_value();
        }
        cur = toll::move(next);
    }
    size_t n = strlen(path);
    if (((how & k_want_dir) || path[n - 1] == '/') && !is_dir(cur.get()))
        return k_enotdir;
    return cur;
}

} // namespace

Result<NodeRef> vfs_lookup(Node* base, const char* path, int how)
{
    int links_left = k_max_symlinks;
    return walk(base ? base : current_cwd(), path, how, &links_left);
}

Result<NodeRef> vfs_parent(Node* base, const char* path, const char** name, size_t* length)
{
    size_t n = strlen(path);
    if (n == 0)
        return k_enoent;
    if (n >= k_path_max)
        return k_enametoolong;
    size_t end = n;
    while (end > 0 && path[end - 1] == '/')
        --end;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        --start;
    *name = path + start;
    *length = end - start;
    if (*length > k_name_max)
        return k_enametoolong;
    if (start == 0)
        return NodeRef{base ? base : current_cwd()};
    // The directory part, up to and including its last slash.
    char* dir = static_cast<char*>(vm::kmalloc(start + 1));
    if (!dir)
        return k_enomem;
    memcpy(dir, path, start);
    dir[start] = '\0';
    Result<NodeRef> parent = vfs_lookup(base, dir, k_follow | k_want_dir);
    vm::kfree(dir);
    return parent;
}

const uint8_t* node_bytes(const Node* node)
{
    return node->data ? node->data : node->image;
}

Errno node_truncate(Node* node, uint64_t size)
{
    if (size > k_max_file)
        return k_efbig;
    // lock: vfs
    if (size > node->capacity || (!node->data && node->image)) {
        // Grow by half again, so that a file written a block at a time is
        // copied O(log n) times, not once per block.
        size_t want = static_cast<size_t>(size);
        if (node->data && want < node->capacity + node->capacity / 2)
            want = node->capacity + node->capacity / 2;
        if (want > k_max_file)
            want = static_cast<size_t>(k_max_file);
        if (want == 0)
            want = 64;
        uint8_t* bigger = static_cast<uint8_t*>(vm::kmalloc(want)); // zeroed
        if (!bigger)
            return k_enomem;
        size_t keep = static_cast<size_t>(node->size < size ? node->size : size);
        memcpy(bigger, node_bytes(node), keep);
        if (node->data) {
            g_bytes.lower(node->capacity);
            vm::kfree(node->data);
        }
        node->data = bigger;
        node->capacity = want;
        node->image = nullptr;
        g_bytes.raise(want);
    } else if (size < node->size && node->data) {
        memset(node->data + size, 0, static_cast<size_t>(node->size - size));
    }
    node->size = size;
    node_touch(node, true);
    return k_ok;
}

long node_write(Node* node, uint64_t offset, uintptr_t buffer, size_t count)
{
    if (count == 0)
        return 0;
    if (offset > k_max_file || count > k_max_file - offset)
        return -k_efbig;
    uint64_t end = offset + count;
    uint64_t size = node->size;
    if (end > node->capacity || !node->data)
        if (Errno e = node_truncate(node, end > size ? end : size); e != k_ok)
            return -e;
    if (Errno e = copyin(node->data + offset, buffer, count); e != k_ok) {
        (void)node_truncate(node, size); // nothing was written
        return -e;
    }
    if (end > node->size)
        node->size = end;
    node_touch(node, true);
    return static_cast<long>(count);
}

Result<FileRef> node_open(const NodeRef& node, int flags)
{
    int access = flags & k_o_accmode;
    int kept = flags & (k_o_accmode | k_o_nonblock | k_o_append);
    Node* n = node.get();
    switch (n->mode & k_s_ifmt) {
    case k_s_ifchr: {
        FileRef f = file_new(n->device, flags & (k_o_accmode | k_o_nonblock));
        if (!f)
            return k_enomem;
        return f;
    }
    case k_s_ifdir: {
        // Linux: a directory may be opened only for reading.
        if (access != k_o_rdonly || (flags & (k_o_creat | k_o_trunc)))
            return k_eisdir;
        FileRef f = file_new(&k_dir_ops, k_o_rdonly);
        if (!f)
            return k_enomem;
        f->object = n;
        ++n->refs; // the File's, dropped by node_release; lock: vfs
        return f;
    }
    case k_s_iflnk:
        return k_eloop; // O_NOFOLLOW met a link
    default:
        break;
    }
    if (flags & k_o_directory)
        return k_enotdir;
    if (n->proc == ProcKind::file) {
        if (access != k_o_rdonly)
            return k_eacces;
        char* text = nullptr;
        Result<size_t> size = proc_generate(n, &text);
        if (!size)
            return size.error();
        FileRef f = file_new(&k_text_ops, k_o_rdonly);
        if (!f) {
            vm::kfree(text);
            return k_enomem;
        }
        f->data = reinterpret_cast<const uint8_t*>(text);
        f->size = size.value();
        f->object = n;
        ++n->refs; // lock: vfs
        return f;
    }
    if ((flags & k_o_trunc) && access != k_o_rdonly)
        if (Errno e = node_truncate(n, 0); e != k_ok)
            return e;
    FileRef f = file_new(&k_node_ops, kept);
    if (!f)
        return k_enomem;
    f->object = n;
    ++n->refs; // lock: vfs
    return f;
}

Node* file_node(const File& file)
{
    if (file.ops == &k_node_ops || file.ops == &k_dir_ops || file.ops == &k_text_ops)
        return node_of(file);
    return nullptr;
}

Result<size_t> node_path(const Node* node, char* out, size_t size)
{
    // From the node up to the root, each name found in its parent's entries.
    if (node == g_root) {
        if (size < 2)
            return k_erange;
        memcpy(out, "/", 2);
        return size_t(1);
    }
    size_t used = 0; // built backwards at the end of out
    if (size == 0)
        return k_erange;
    out[size - 1] = '\0';
    used = 1;
    for (const Node* n = node; n != g_root;) {
        const Node* parent = n->parent;
        if (!parent || (n->links == 0 && n->proc != ProcKind::pid_dir))
            return k_enoent;
        const char* name = nullptr;
        char pid[16];
        if (n->proc == ProcKind::pid_dir) { // /proc/PID is named by no entry
            lib::snformat(pid, sizeof pid, "%d", n->proc_pid);
            name = pid;
        }
        for (DirEntry* e = parent->entries; e && !name; e = e->next)
            if (e->node == n)
                name = e->name;
        if (!name)
            return k_enoent;
        size_t length = strlen(name);
        if (used + length + 1 > size)
            return k_erange;
        used += length + 1;
        memcpy(out + size - used + 1, name, length);
        out[size - used] = '/';
        n = parent;
    }
    memmove(out, out + size - used, used);
    return used - 1;
}

Result<size_t> vfs_real_path(const char* path, char* out, size_t size)
{
    char* work = static_cast<char*>(vm::kmalloc(2 * k_path_max));
    if (!work)
        return k_enomem;
    char* next = work + k_path_max;
    Result<size_t> result = k_eloop;
    lib::snformat(work, k_path_max, "%s", path);
    for (int links = 0; links <= k_max_symlinks; ++links) {
        const char* name;
        size_t length;
        Result<NodeRef> dir = vfs_parent(nullptr, work, &name, &length);
        if (!dir) {
            result = dir.error();
            break;
        }
        NodeRef n = dir_find(dir.value().get(), name, length);
        if (!n) {
            result = k_enoent;
            break;
        }
        Result<size_t> at = node_path(dir.value().get(), next, k_path_max);
        if (!at) {
            result = at.error();
            break;
        }
        size_t used = at.value();
        if ((n->mode & k_s_ifmt) != k_s_iflnk) {
            // The directory's path, a slash (unless it is the root), the name.
            size_t total = used + (used > 1) + length;
            if (total + 1 > size) {
                result = k_erange;
                break;
            }
            memcpy(out, next, used);
            if (used > 1)
                out[used++] = '/';
            memcpy(out + used, name, length);
            out[total] = '\0';
            result = total;
            break;
        }
        // A link: its target, relative to the directory unless absolute.
        size_t target = static_cast<size_t>(n->size);
        const uint8_t* bytes = node_bytes(n.get());
        if (target && bytes[0] == '/')
            used = 0;
        else if (used > 1)
            next[used++] = '/';
        if (used + target + 1 > k_path_max) {
            result = k_enametoolong;
            break;
        }
        memcpy(next + used, bytes, target);
        next[used + target] = '\0';
        memcpy(work, next, used + target + 1);
    }
    vm::kfree(work);
    return result;
}

uint64_t vfs_bytes_used()
{
    return g_bytes.value;
}

} // namespace toll::sys
