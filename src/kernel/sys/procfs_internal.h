// What the files of /proc share (procfs.cpp, procfs_pid.cpp): the growing
// text buffer their contents are made in, and the symbolic links they make.
#pragma once
#include "kernel/sys/vfs.h"
#include "kernel/vm/kmalloc.h"
#include "lib/format.h"
#include "lib/string.h"
#include <stdarg.h>

namespace toll::sys {

/// A growing text buffer for a /proc file's contents. Allocation may fail
/// (then @c failed is set and the rest is dropped); the owner kfrees bytes.
/// Safe under any lock above `vm.heap`, which is all it takes.
struct Text {
    char* bytes = nullptr;
    size_t used = 0, capacity = 0;
    bool failed = false;

    /// Makes room for @p n more bytes and a NUL; false when memory is short.
    bool reserve(size_t n)
    {
        if (used + n < capacity)
            return true;
        size_t bigger = capacity ? capacity * 2 : 1024;
        while (bigger < used + n + 1)
            bigger *= 2;
        char* grown = static_cast<char*>(vm::kmalloc(bigger));
        if (!grown) {
            failed = true;
            return false;
        }
        memcpy(grown, bytes, used);
        vm::kfree(bytes);
        bytes = grown;
        capacity = bigger;
        return true;
    }

    /// Appends @p n bytes from @p from.
    void append(const char* from, size_t n)
    {
        if (reserve(n)) {
            memcpy(bytes + used, from, n);
            used += n;
        }
    }

    /// Appends one formatted piece of at most 255 bytes.
    void add(const char* fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        va_list args;
        va_start(args, fmt);
        char line[256];
        size_t n = lib::vsnformat(line, sizeof line, fmt, args);
        va_end(args);
        append(line, n < sizeof line ? n : sizeof line - 1);
    }
};

/// A symbolic link to @p target with permission bits @p mode, made now and
/// named by nobody; empty when memory is short.
NodeRef proc_make_link(const char* target, uint32_t mode = 0777);

/// Appends to @p t the lines of /proc/@p pid/maps: one per region of its
/// address space, in Linux's format (start-end perms offset dev inode
/// name). Nothing for a zombie, whose address space is gone. Holds the
/// process table's lock and the space's lock while it walks the regions:
/// O(regions).
void proc_pid_maps(Text& t, int pid);

/// The size of @p pid's address space (the sum of its regions) and its
/// resident pages, for stat and status; zeros for a zombie or no process.
/// Called with the process table's lock held.
void proc_pid_memory(proc::Process& p, uint64_t* bytes, uint64_t* resident_pages);

/// Looks up @p name in a /proc/PID/fd directory @p dir: a link to what the
/// descriptor is (a path, /dev/console, pipe:[N], socket:[N]), or empty when
/// the process has no such descriptor (or has gone).
NodeRef proc_fd_find(Node* dir, const char* name, size_t length);

/// The @p index-th open descriptor of @p dir's process, as a name; false
/// past the last (or when the process has gone).
bool proc_fd_entry(const Node* dir, size_t index, char* name, size_t size, uint8_t* type);

} // namespace toll::sys
