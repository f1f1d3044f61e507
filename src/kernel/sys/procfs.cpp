// /proc: the kernel's state as files, made on each look-up and each open
// (nothing is stored). /proc/self names the caller's /proc/PID; /proc/PID
// holds stat, status and cmdline (what busybox ps reads) and exe; /proc
// itself meminfo, uptime, loadavg, mounts and version (free, uptime, df,
// mount); /proc/net the network stack's counters (snmp, dev: netstat's) and
// its neighbour table (arp).
#include "kernel/arch/cpu.h"
#include "kernel/fs/mount.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/phys.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

// Linux, include/linux/fs_types.h: the d_type values.
constexpr uint8_t k_dt_dir = 4, k_dt_reg = 8, k_dt_lnk = 10;

enum ProcFile : uint8_t {
    k_meminfo = 1,
    k_uptime,
    k_loadavg,
    k_mounts,
    k_version,
    k_pid_stat,
    k_pid_status,
    k_pid_cmdline,
    k_net_snmp,
    k_net_dev,
    k_net_arp,
};

struct Name {
    const char* name;
    uint8_t file; ///< a ProcFile, or 0 for a symbolic link
};

constexpr Name k_root_files[] = {{"self", 0},
                                 {"meminfo", k_meminfo},
                                 {"uptime", k_uptime},
                                 {"loadavg", k_loadavg},
                                 {"mounts", k_mounts},
                                 {"version", k_version},
                                 {"net", 0}};
constexpr Name k_net_files[] = {{"snmp", k_net_snmp}, {"dev", k_net_dev}, {"arp", k_net_arp}};
constexpr Name k_pid_files[] = {
    {"exe", 0}, {"stat", k_pid_stat}, {"status", k_pid_status}, {"cmdline", k_pid_cmdline}};

bool same(const char* a, const char* name, size_t length)
{
    return strlen(a) == length && memcmp(a, name, length) == 0;
}

// A symbolic link to @p target, made now and named by nobody.
NodeRef make_link(const char* target)
{
    NodeRef n = node_new(k_s_iflnk | 0777);
    size_t length = strlen(target);
    if (!n || node_truncate(n.get(), length) != k_ok)
        return NodeRef{};
    memcpy(n->data, target, length);
    return n;
}

NodeRef make_file(uint8_t file, int pid)
{
    NodeRef n = node_new(k_s_ifreg | 0444);
    if (n) {
        n->proc = ProcKind::file;
        n->proc_file = file;
        n->proc_pid = pid;
    }
    return n;
}

// A growing text buffer for the files' contents.
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

    void append(const char* from, size_t n)
    {
        if (reserve(n)) {
            memcpy(bytes + used, from, n);
            used += n;
        }
    }

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

// What /proc/PID shows of a process, copied under the table's lock.
struct Snapshot {
    int pid = 0, parent_pid = 0, pgid = 0, sid = 0;
    bool zombie = false, running = false;
    char name[sizeof proc::Process{}.name] = {};
    char cmdline[sizeof proc::Process{}.cmdline] = {};
    size_t cmdline_length = 0;
};

char state_letter(const Snapshot& p)
{
    if (p.zombie)
        return 'Z';
    return p.running ? 'R' : 'S';
}

void pid_stat(Text& t, const Snapshot& p)
{
    // Linux, Documentation/filesystems/proc.rst, table 1-4: 52 fields; Toll
    // keeps no times or fault counts, which read 0.
    int ppid = p.parent_pid;
    t.add("%d (%s) %c %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0 ", p.pid, p.name,
          state_letter(p), ppid, p.pgid, p.sid);
    t.add("18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
}

void pid_status(Text& t, const Snapshot& p)
{
    int ppid = p.parent_pid;
    t.add("Name:\t%s\nState:\t%c\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\n", p.name, state_letter(p), p.pid,
          p.pid, ppid);
    t.add("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nThreads:\t1\n");
}

struct Counted {
    int processes = 0;
    int running = 0;
};

void count_process(proc::Process& p, void* context)
{
    Counted* c = static_cast<Counted*>(context);
    ++c->processes;
    if (p.zombie)
        return;
    for (proc::Thread* t = p.threads; t; t = t->peer)
        c->running += t->state == proc::ThreadState::running; // Linux counts threads
}

void generate(Text& t, const Node* n, const Snapshot* p)
{
    uint64_t hz = arch::clock_hz(), ticks = proc::ticks();
    switch (n->proc_file) {
    case k_meminfo: {
        vm::PhysAllocator& phys = vm::phys_allocator();
        uint64_t kb = vm::k_page_size / 1024;
        uint64_t total = phys.total_pages() * kb, free = phys.free_pages() * kb;
        uint64_t files = vfs_bytes_used() / 1024;
        t.add("MemTotal:       %8llu kB\nMemFree:        %8llu kB\nMemAvailable:   %8llu kB\n",
              (unsigned long long)total, (unsigned long long)free, (unsigned long long)free);
        t.add("Buffers:        %8u kB\nCached:         %8llu kB\nShmem:          %8llu kB\n", 0u,
              (unsigned long long)files, (unsigned long long)files);
        t.add("SwapTotal:      %8u kB\nSwapFree:       %8u kB\n", 0u, 0u);
        break;
    }
    case k_uptime:
        t.add("%llu.%02llu 0.00\n", (unsigned long long)(ticks / hz),
              (unsigned long long)(ticks % hz * 100 / hz));
        break;
    case k_loadavg: {
        Counted c;
        proc::for_each_process(count_process, &c);
        t.add("0.00 0.00 0.00 %d/%d %d\n", c.running, c.processes,
              proc::current_process() ? proc::current_process()->pid : 0);
        break;
    }
    case k_mounts: {
        char disk[96];
        t.add("tmpfs / tmpfs rw 0 0\nproc /proc proc rw 0 0\n");
        if (fs::mount_describe(disk, sizeof disk))
            t.add("%s", disk);
        break;
    }
    case k_version:
        t.add("Toll version 1 (a teaching kernel)\n");
        break;
    case k_pid_stat:
        pid_stat(t, *p);
        break;
    case k_pid_status:
        pid_status(t, *p);
        break;
    case k_pid_cmdline:
        // The arguments, each NUL-terminated, as exec recorded them.
        t.append(p->cmdline, p->cmdline_length);
        break;
    case k_net_snmp:
    case k_net_dev:
    case k_net_arp: {
        NetProcFile which = n->proc_file == k_net_snmp  ? NetProcFile::snmp
                            : n->proc_file == k_net_dev ? NetProcFile::dev
                                                        : NetProcFile::arp;
        size_t need = net_proc_text(which, nullptr, 0);
        if (t.reserve(need + 1)) {
            size_t got = net_proc_text(which, t.bytes + t.used, t.capacity - t.used);
            t.used += got < need ? got : need;
        }
        break;
    }
    default:
        break;
    }
}

int parse_pid(const char* name, size_t length)
{
    if (length == 0 || length > 9)
        return 0;
    int pid = 0;
    for (size_t i = 0; i < length; ++i) {
        if (name[i] < '0' || name[i] > '9')
            return 0;
        pid = pid * 10 + (name[i] - '0');
    }
    return pid;
}

struct Listing {
    size_t index;
    size_t seen = 0;
    int pid = 0;
};

void find_nth(proc::Process& p, void* context)
{
    Listing* l = static_cast<Listing*>(context);
    if (l->seen++ == l->index)
        l->pid = p.pid;
}

} // namespace

NodeRef proc_make_root()
{
    NodeRef root = node_new(k_s_ifdir | 0555);
    if (root)
        root->proc = ProcKind::root;
    return root;
}

NodeRef proc_find(Node* dir, const char* name, size_t length)
{
    if (dir->proc == ProcKind::root) {
        for (const Name& f : k_root_files)
            if (same(f.name, name, length)) {
                if (f.file)
                    return make_file(f.file, 0);
                if (same("net", name, length)) {
                    NodeRef d = node_new(k_s_ifdir | 0555);
                    if (d) {
                        d->proc = ProcKind::net_dir;
                        d->parent = dir;
                    }
                    return d;
                }
                char pid[16];
                proc::Process* me = proc::current_process();
                lib::snformat(pid, sizeof pid, "%d", me ? me->pid : 0);
                return make_link(pid);
            }
        int pid = parse_pid(name, length);
        bool exists;
        {
            SpinGuard g(proc::process_table_lock()); // find_process's rule
            exists = pid && proc::find_process(pid);
        }
        if (!exists)
            return NodeRef{};
        NodeRef d = node_new(k_s_ifdir | 0555);
        if (d) {
            d->proc = ProcKind::pid_dir;
            d->proc_pid = pid;
            d->parent = dir;
        }
        return d;
    }
    if (dir->proc == ProcKind::net_dir) {
        for (const Name& f : k_net_files)
            if (same(f.name, name, length))
                return make_file(f.file, 0);
        return NodeRef{};
    }
    if (dir->proc != ProcKind::pid_dir)
        return NodeRef{};
    char exe[sizeof proc::Process{}.exe];
    {
        SpinGuard g(proc::process_table_lock());
        proc::Process* p = proc::find_process(dir->proc_pid);
        if (!p)
            return NodeRef{};
        memcpy(exe, p->exe, sizeof exe);
    }
    exe[sizeof exe - 1] = '\0';
    for (const Name& f : k_pid_files)
        if (same(f.name, name, length))
            return f.file ? make_file(f.file, dir->proc_pid) : make_link(exe);
    return NodeRef{};
}

bool proc_entry(const Node* dir, size_t index, char* name, size_t size, uint8_t* type)
{
    if (dir->proc == ProcKind::net_dir) {
        constexpr size_t k_count = sizeof k_net_files / sizeof k_net_files[0];
        if (index >= k_count)
            return false;
        lib::snformat(name, size, "%s", k_net_files[index].name);
        *type = k_dt_reg;
        return true;
    }
    if (dir->proc == ProcKind::pid_dir) {
        constexpr size_t k_count = sizeof k_pid_files / sizeof k_pid_files[0];
        if (index >= k_count)
            return false;
        lib::snformat(name, size, "%s", k_pid_files[index].name);
        *type = k_pid_files[index].file ? k_dt_reg : k_dt_lnk;
        return true;
    }
    constexpr size_t k_count = sizeof k_root_files / sizeof k_root_files[0];
    if (index < k_count) {
        lib::snformat(name, size, "%s", k_root_files[index].name);
        *type = k_root_files[index].file                  ? k_dt_reg
                : strcmp(k_root_files[index].name, "net") ? k_dt_lnk
                                                          : k_dt_dir;
        return true;
    }
    Listing l{index - k_count};
    proc::for_each_process(find_nth, &l);
    if (!l.pid)
        return false;
    lib::snformat(name, size, "%d", l.pid);
    *type = k_dt_dir;
    return true;
}

Result<size_t> proc_generate(const Node* node, char** text)
{
    // A copy of the process's entry, taken under the table's lock: the text
    // is made from it after the lock is gone (for_each_process takes it).
    Snapshot* copy = nullptr;
    if (node->proc_pid) {
        copy = make<Snapshot>();
        if (!copy)
            return k_enomem;
        bool found = false;
        {
            SpinGuard g(proc::process_table_lock());
            if (proc::Process* live = proc::find_process(node->proc_pid)) {
                copy->pid = live->pid;
                copy->parent_pid = live->parent ? live->parent->pid : 0;
                copy->pgid = live->pgid;
                copy->sid = live->sid;
                copy->zombie = live->zombie;
                copy->running = live == proc::current_process();
                memcpy(copy->name, live->name, sizeof copy->name);
                memcpy(copy->cmdline, live->cmdline, sizeof copy->cmdline);
                copy->cmdline_length = live->cmdline_length;
                found = true;
            }
        }
        if (!found) {
            destroy(copy);
            return k_enoent;
        }
    }
    const Snapshot* p = copy;
    Text t;
    t.reserve(0);
    generate(t, node, p);
    destroy(copy);
    if (t.failed) {
        vm::kfree(t.bytes);
        return k_enomem;
    }
    *text = t.bytes;
    return t.used;
}

} // namespace toll::sys
