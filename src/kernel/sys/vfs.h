// The file tree: a writable in-memory file system (like Linux's tmpfs)
// mounted at /, whose first contents are the read-only boot ramdisk. A file
// of the ramdisk keeps pointing at the ramdisk's bytes until its first write
// copies them (copy on write); /dev holds the character devices and /proc is
// made up on each look-up (procfs.cpp).
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/sys/file.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::proc {
struct Process;
}

namespace toll::sys {

// Linux, include/uapi/linux/stat.h: the file types and permission bits of st_mode.
constexpr uint32_t k_s_ifmt = 0170000, k_s_ifreg = 0100000, k_s_ifdir = 040000, k_s_iflnk = 0120000,
                   k_s_ifchr = 020000, k_s_ififo = 010000;
constexpr uint32_t k_s_perm = 07777;
// Linux, include/uapi/linux/limits.h: NAME_MAX and PATH_MAX.
constexpr size_t k_name_max = 255, k_path_max = 4096;
// Linux, fs/namei.c: MAXSYMLINKS, the symbolic links one look-up follows.
constexpr int k_max_symlinks = 40;

/// What /proc makes a node from (procfs.cpp).
enum class ProcKind : uint8_t { none, root, pid_dir, file, net_dir, fd_dir };

/// Seconds and nanoseconds, as a stat time.
struct Timestamp {
    int64_t seconds = 0;
    uint32_t nanoseconds = 0;
};

struct Node;

/// One name in a directory.
struct DirEntry {
    DirEntry* next;
    Node* node;
    char* name; ///< kmalloc'ed, NUL-terminated
};

/// A file, directory, symbolic link or device of the tree (Linux's inode).
/// Alive while a directory names it (links > 0) or something holds a NodeRef
/// to it (an open file, a process's working directory, a look-up in
/// progress): the last of these to go frees it and its data.
struct Node {
    uint32_t mode = 0;  ///< type and permission bits
    uint32_t links = 0; ///< the directory entries naming it (hard links)
    int refs = 0;       ///< NodeRefs held (lock: vfs)
    uint64_t ino = 0;
    uint32_t uid = 0, gid = 0;
    Timestamp atime, mtime, ctime;
    // A regular file or symbolic link (its target): size bytes at data, or
    // at image (the ramdisk's bytes) until the first write copies them.
    uint8_t* data = nullptr;
    size_t capacity = 0;
    uint64_t size = 0;
    const uint8_t* image = nullptr;
    // A directory: its entries (newest first) and where ".." goes.
    DirEntry* entries = nullptr;
    Node* parent = nullptr;
    unsigned subdirs = 0;            ///< entries that are directories (st_nlink is 2 + subdirs)
    const FileOps* device = nullptr; ///< a character device
    bool read_only = false;          ///< a directory whose names are fixed (/dev): EROFS
    ProcKind proc = ProcKind::none;
    int proc_pid = 0;      ///< a /proc/PID directory: the process
    uint8_t proc_file = 0; ///< a /proc file: which one (procfs.cpp)
};

/// Owns one reference to a Node (the pattern of FileRef).
class [[nodiscard]] NodeRef {
  public:
    NodeRef() : m_node(nullptr) {}
    explicit NodeRef(Node* node);
    ~NodeRef() { reset(); }
    NodeRef(const NodeRef& other) : NodeRef(other.m_node) {}
    NodeRef& operator=(const NodeRef& other);
    NodeRef(NodeRef&& other) noexcept : m_node(other.m_node) { other.m_node = nullptr; }
    NodeRef& operator=(NodeRef&& other) noexcept;
    void reset();
    Node* get() const { return m_node; }
    Node* operator->() const { return m_node; }
    explicit operator bool() const { return m_node != nullptr; }

  private:
    Node* m_node;
};

/// A new node of @p mode (type and permissions) with no name yet; empty when
/// memory is short. Counted in the level sys.vfs.nodes.
NodeRef node_new(uint32_t mode);

/// Builds the tree from the ramdisk: its directories, its files (pointing
/// at the ramdisk's bytes), /dev, /proc and /tmp. Called once at boot, after
/// initrd_init.
void vfs_init();

/// The root directory.
Node* vfs_root();

/// How a look-up treats the path's last component.
constexpr int k_follow = 1;   ///< a symbolic link there is followed
constexpr int k_want_dir = 2; ///< it must be a directory (a trailing '/' asks this too)

/// Finds the node @p path (a kernel string) names, relative to @p base
/// (nullptr: the caller's working directory) unless it is absolute.
/// Errors: k_enoent, k_enotdir (a component is no directory), k_eloop,
/// k_enametoolong (a component over NAME_MAX).
Result<NodeRef> vfs_lookup(Node* base, const char* path, int how);

/// The directory that will hold @p path's last component, and that
/// component (a pointer into @p path, its length in @p *length). For the
/// calls that create and remove names. k_enoent for "" ; "/" gives a last
/// component of length 0 (the caller's EEXIST/EBUSY).
Result<NodeRef> vfs_parent(Node* base, const char* path, const char** name, size_t* length);

/// The node @p name (of @p length bytes) in directory @p dir names, or an
/// empty NodeRef ("." and ".." too). /proc's names are made on the spot.
NodeRef dir_find(Node* dir, const char* name, size_t length);

/// Adds the entry @p name -> @p node to @p dir. k_eexist, k_enomem.
Errno dir_link(Node* dir, const char* name, size_t length, Node* node);

/// Removes @p dir's entry @p name; the node loses a link.
void dir_unlink(Node* dir, const char* name, size_t length);

/// May @p dir have names added or removed? k_eacces (/proc), k_erofs
/// (/dev, mounted read-only: its devices cannot be renamed away), k_enoent
/// (a removed directory), k_ok otherwise.
Errno dir_writable(const Node* dir);

/// Sets a regular file's size to @p size (zeros when it grows: sparse
/// files read as zeros, though Toll stores them). k_efbig, k_enomem.
Errno node_truncate(Node* node, uint64_t size);

/// Writes @p count bytes from user @p buffer at @p offset of a regular file,
/// growing it. Returns the bytes written, or -errno.
long node_write(Node* node, uint64_t offset, uintptr_t buffer, size_t count);

/// The bytes of a regular file (the ramdisk's until written), for exec.
const uint8_t* node_bytes(const Node* node);

/// Opens @p node (looked up already) with open(2)'s @p flags: the File, or
/// k_eisdir (a directory opened to write), k_enomem.
Result<FileRef> node_open(const NodeRef& node, int flags);

/// open(2) relative to @p base (nullptr: the working directory): looks
/// @p path up, creating a regular file of @p mode (less the umask) for
/// O_CREAT, and opens it. Linux's errors: k_eexist (O_CREAT|O_EXCL),
/// k_eisdir, k_enotdir, k_enoent, k_eloop, k_eacces, k_enomem.
Result<FileRef> vfs_open(Node* base, const char* path, int flags, uint32_t mode);

/// The node an open file is, or nullptr (pipes, the console opened at boot).
Node* file_node(const File& file);

/// Stamps @p node's modification and change times (both: true) or change
/// time only with now.
void node_touch(Node* node, bool modified);

/// The time now, from boot (Toll keeps no wall clock).
Timestamp vfs_now();

/// Writes @p node's absolute path into @p out (@p size bytes). The length,
/// or k_erange when it does not fit, k_enoent when the node has no name.
Result<size_t> node_path(const Node* node, char* out, size_t size);

/// The absolute path, with no symbolic link left in it, of the file that
/// @p path names (relative to the working directory), into @p out of
/// @p size bytes: what /proc/PID/exe shows for a program exec'ed as
/// /proc/self/exe or through a link. Its length, or why not (k_enoent,
/// k_eloop, k_erange, k_enomem).
Result<size_t> vfs_real_path(const char* path, char* out, size_t size);

/// Bytes of file data the tree holds now (the level sys.vfs.bytes), for
/// /proc/meminfo and df.
uint64_t vfs_bytes_used();

// --- /proc (procfs.cpp) ----------------------------------------------------

/// The /proc directory's node, made by vfs_init.
NodeRef proc_make_root();

/// Looks up @p name in /proc or /proc/PID directory @p dir.
NodeRef proc_find(Node* dir, const char* name, size_t length);

/// The names of /proc directory @p dir, one at a time: the @p index-th
/// into @p name (NUL-terminated) with its d_type. False past the last.
bool proc_entry(const Node* dir, size_t index, char* name, size_t size, uint8_t* type);

/// The text of /proc file @p node, generated now into a kmalloc'ed buffer
/// the caller frees. k_enoent when its process is gone.
Result<size_t> proc_generate(const Node* node, char** text);

/// The files of /proc/net, which the network stack (kernel/net/) writes.
enum class NetProcFile : uint8_t { snmp, dev, arp };

/// Writes /proc/net file @p file's text into @p out (at most @p capacity
/// bytes, NUL included). Returns the length the whole text needs, so that
/// a caller whose buffer was short can grow it and ask again.
size_t net_proc_text(NetProcFile file, char* out, size_t capacity);

} // namespace toll::sys
