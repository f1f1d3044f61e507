// /proc: the kernel's state as files, made on each look-up and each open
// (nothing is stored). /proc/self names the caller's /proc/PID; /proc/PID
// holds stat, status and cmdline (what busybox ps reads), exe, and maps and
// fd/ (procfs_pid.cpp: what pmap and ls -l /proc/PID/fd read); /proc
// itself meminfo, uptime, loadavg, mounts and version (free, uptime, df,
// mount); /proc/net the network stack's counters (snmp, dev: netstat's) and
// its neighbour table (arp).
#include "kernel/arch/cpu.h"
#include "kernel/fs/mount.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/procfs_internal.h"
#include "kernel/vm/phys.h"

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
    k_stat,
    k_pid_stat,
    k_pid_status,
    k_pid_cmdline,
    k_pid_maps,
    k_net_snmp,
    k_net_dev,
    k_net_arp,
};

struct Name {
    const char* name;
    uint8_t file; ///< a ProcFile, 0 for a symbolic link, k_fd_dir for /proc/PID/fd
};

constexpr uint8_t k_fd_dir = 0xFF;

constexpr Name k_root_files[] = {
    {"self", 0},          {"meminfo", k_meminfo}, {"uptime", k_uptime}, {"loadavg", k_loadavg},
    {"mounts", k_mounts}, {"version", k_version}, {"stat", k_stat},     {"net", 0}};
constexpr Name k_net_files[] = {{"snmp", k_net_snmp}, {"dev", k_net_dev}, {"arp", k_net_arp}};
constexpr Name k_pid_files[] = {{"exe", 0},
                                {"stat", k_pid_stat},
                                {"status", k_pid_status},
                                {"cmdline", k_pid_cmdline},
                                {"maps", k_pid_maps},
                                {"fd", k_fd_dir}};

bool same(const char* a, const char* name, size_t length)
{
    return strlen(a) == length && memcmp(a, name, length) == 0;
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

// What /proc/PID shows of a process, copied under the table's lock.
struct Snapshot {
    int pid = 0, parent_pid = 0, pgid = 0, sid = 0, threads = 0;
    bool zombie = false, running = false;
    uint64_t vm_bytes = 0, resident_pages = 0;
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
    // keeps no times or fault counts, which read 0. Field 7, tty_nr, is the
    // console's device (5, 1) for every process, all of which share it;
    // 20 is num_threads, 23 vsize in bytes, 24 rss in pages.
    constexpr int k_console_tty = (5 << 8) | 1;
    int ppid = p.parent_pid;
    t.add("%d (%s) %c %d %d %d %d -1 0 0 0 0 0 0 0 0 0 20 0 %d 0 0 %llu %llu ", p.pid, p.name,
          state_letter(p), ppid, p.pgid, p.sid, k_console_tty, p.threads,
          (unsigned long long)p.vm_bytes, (unsigned long long)p.resident_pages);
    t.add("18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
}

void pid_status(Text& t, const Snapshot& p)
{
    int ppid = p.parent_pid;
    t.add("Name:\t%s\nState:\t%c\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\n", p.name, state_letter(p), p.pid,
          p.pid, ppid);
    t.add("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n");
    if (!p.zombie) // Linux shows no memory of a zombie
        t.add("VmSize:\t%8llu kB\nVmRSS:\t%8llu kB\n", (unsigned long long)(p.vm_bytes / 1024),
              (unsigned long long)(p.resident_pages * (vm::k_page_size / 1024)));
    t.add("Threads:\t%d\n", p.threads);
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
    case k_stat: {
        // Linux, Documentation/filesystems/proc.rst 1.7: CPU time in
        // USER_HZ (100) ticks by mode, then event counts (what top reads).
        // Toll keeps no CPU time by mode: every CPU's time since boot reads
        // as idle, so top shows 0% busy; the counts are the kernel's own.
        Counted c;
        proc::for_each_process(count_process, &c);
        uint64_t idle = ticks * 100 / hz;
        t.add("cpu  0 0 0 %llu 0 0 0 0 0 0\n", (unsigned long long)(idle * cpus_online()));
        for (unsigned i = 0; i < cpus_online(); ++i)
            t.add("cpu%u 0 0 0 %llu 0 0 0 0 0 0\n", i, (unsigned long long)idle);
        t.add("intr %llu\nctxt %llu\nbtime 0\nprocesses %d\nprocs_running %d\n",
              (unsigned long long)cpu_counter_sum(CpuEvent::interrupts),
              (unsigned long long)cpu_counter_sum(CpuEvent::context_switches), c.processes,
              c.running);
        t.add("procs_blocked 0\n");
        break;
    }
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
    case k_pid_maps:
        proc_pid_maps(t, p->pid);
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

NodeRef proc_make_link(const char* target, uint32_t mode)
{
    NodeRef n = node_new(k_s_iflnk | mode);
    size_t length = strlen(target);
    if (!n || node_truncate(n.get(), length) != k_ok)
        return NodeRef{};
    memcpy(n->data, target, length);
    return n;
}

NodeRef proc_make_root()
{
    NodeRef root = node_new(k_s_ifdir | 0555);
    if (root)
        root->proc = ProcKind::root;
    return root;
}

NodeRef proc_find(Node* dir, const char* name, size_t length)
{
    if (dir->proc == ProcKind::fd_dir) {
        if (same("..", name, length)) { // made anew: the fd directory keeps no parent
            char pid[16];
            lib::snformat(pid, sizeof pid, "%d", dir->proc_pid);
            NodeRef root = dir_find(vfs_root(), "proc", 4);
            return root ? proc_find(root.get(), pid, strlen(pid)) : NodeRef{};
        }
        return proc_fd_find(dir, name, length);
    }
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
                return proc_make_link(pid);
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
    for (const Name& f : k_pid_files) {
        if (!same(f.name, name, length))
            continue;
        if (f.file != k_fd_dir)
            return f.file ? make_file(f.file, dir->proc_pid) : proc_make_link(exe);
        NodeRef d = node_new(k_s_ifdir | 0500);
        if (d) {
            d->proc = ProcKind::fd_dir;
            d->proc_pid = dir->proc_pid;
        }
        return d;
    }
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
    if (dir->proc == ProcKind::fd_dir)
        return proc_fd_entry(dir, index, name, size, type);
    if (dir->proc == ProcKind::pid_dir) {
        constexpr size_t k_count = sizeof k_pid_files / sizeof k_pid_files[0];
        if (index >= k_count)
            return false;
        lib::snformat(name, size, "%s", k_pid_files[index].name);
        uint8_t file = k_pid_files[index].file;
        *type = file == k_fd_dir ? k_dt_dir : file ? k_dt_reg : k_dt_lnk;
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
                copy->threads = live->live_threads;
                proc_pid_memory(*live, &copy->vm_bytes, &copy->resident_pages);
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
