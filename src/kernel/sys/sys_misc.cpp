// The calls about the system that a C library's start-up and busybox's
// applets make: uname, sysinfo, getrandom, the resource limits, the group
// list and the ids of Toll's one user, sendfile, getrusage and prctl. The
// time calls are in sys_time.cpp, poll and select in sys_poll.cpp.
#include "kernel/arch/cpu.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/clock.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmspace.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

// Linux, include/uapi/linux/utsname.h: struct new_utsname, six fields of 65.
constexpr size_t k_utsname_field = 65;
struct Utsname {
    char sysname[k_utsname_field], nodename[k_utsname_field], release[k_utsname_field],
        version[k_utsname_field], machine[k_utsname_field], domainname[k_utsname_field];
};

// Linux, include/uapi/linux/resource.h: the limits Toll reports.
constexpr unsigned k_rlimit_stack = 3, k_rlimit_nofile = 7, k_rlim_nlimits = 16;

// A limit as Linux's struct rlimit64: the one table every form reads.
struct Limit {
    uint64_t soft, hard;
};
constexpr uint64_t k_infinity = ~uint64_t(0);

Limit limit_of(unsigned resource)
{
    if (resource == k_rlimit_stack)
        return Limit{vm::k_user_stack_size, vm::k_user_stack_size};
    if (resource == k_rlimit_nofile)
        return Limit{static_cast<uint64_t>(proc::k_max_fds),
                     static_cast<uint64_t>(proc::k_max_fds)};
    return Limit{k_infinity, k_infinity};
}

// setrlimit's rule: soft <= hard (EINVAL), and no raise past what Toll has
// (EPERM, as for an unprivileged raise of the hard limit).
Errno limit_set(unsigned resource, Limit l)
{
    if (resource >= k_rlim_nlimits)
        return k_einval;
    if (l.soft > l.hard)
        return k_einval;
    Limit have = limit_of(resource);
    if (l.hard > have.hard)
        return k_eperm;
    return k_ok; // lowering is accepted; Toll does not enforce limits
}

long do_sendfile(uintptr_t out_fd, uintptr_t in_fd, uintptr_t offset_user, size_t count, bool wide)
{
    File* out = fd_get(static_cast<int>(out_fd));
    File* in = fd_get(static_cast<int>(in_fd));
    if (!out || !in)
        return -k_ebadf;
    if ((in->flags & k_o_accmode) == k_o_wronly || (out->flags & k_o_accmode) == k_o_rdonly)
        return -k_ebadf;
    Node* from = file_node(*in);
    Node* to = file_node(*out);
    // Kernel to kernel: from a file of the tree to a file of the tree. Any
    // other pair is EINVAL, as on Linux for a source it cannot map; callers
    // (busybox's copyfd among them) then fall back to read and write.
    if (!from || !to || in->data || out->data || (from->mode & k_s_ifmt) != k_s_ifreg ||
        (to->mode & k_s_ifmt) != k_s_ifreg)
        return -k_einval;
    uint64_t position = in->offset;
    if (offset_user) {
        if (wide) {
            int64_t o;
            if (Errno e = copyin(&o, offset_user, sizeof o); e != k_ok)
                return -e;
            if (o < 0)
                return -k_einval;
            position = static_cast<uint64_t>(o);
        } else {
            long o;
            if (Errno e = copyin(&o, offset_user, sizeof o); e != k_ok)
                return -e;
            if (o < 0)
                return -k_einval;
            position = static_cast<uint64_t>(o);
        }
    }
    size_t n = 0;
    if (position < from->size)
        n = static_cast<size_t>(from->size - position) < count
                ? static_cast<size_t>(from->size - position)
                : count;
    uint64_t at = (out->flags & k_o_append) ? to->size : out->offset;
    if (n) {
        uint64_t end = at + n;
        if (end > to->size || !to->data)
            if (Errno e = node_truncate(to, end > to->size ? end : to->size); e != k_ok)
                return -e;
        // lock: vfs (both nodes)
        memmove(to->data + at, node_bytes(from) + position, n);
        node_touch(to, true);
    }
    out->offset = at + n;
    if (offset_user) {
        uint64_t next = position + n;
        Errno e = wide ? copyout(offset_user, &next, sizeof(int64_t))
                       : copyout(offset_user, &next, sizeof(long));
        if (e != k_ok)
            return -e;
    } else {
        in->offset = position + n;
    }
    return static_cast<long>(n);
}

} // namespace

long sys_uname(const SyscallArgs& a)
{
    Utsname u{};
    memcpy(u.sysname, "Linux", 6); // what programs test for: Toll speaks Linux's ABI
    memcpy(u.nodename, "toll", 5);
    memcpy(u.release, "6.1.0-toll", 11);
    memcpy(u.version, "#1 Toll teaching kernel", 24);
    size_t m = strnlen(arch::uname_machine(), k_utsname_field - 1);
    memcpy(u.machine, arch::uname_machine(), m);
    memcpy(u.domainname, "(none)", 7);
    return -copyout(a.a[0], &u, sizeof u);
}

long sys_sysinfo(const SyscallArgs& a)
{
    // Linux, include/uapi/linux/sysinfo.h.
    struct Sysinfo {
        long uptime;
        unsigned long loads[3];
        unsigned long totalram, freeram, sharedram, bufferram, totalswap, freeswap;
        unsigned short procs, pad;
        unsigned long totalhigh, freehigh;
        unsigned int mem_unit;
        char padding[20 - 2 * sizeof(long) - sizeof(int)];
    };
    Sysinfo s{};
    s.uptime = static_cast<long>(clock_now().seconds);
    vm::PhysAllocator& phys = vm::phys_allocator();
    s.totalram = phys.total_pages();
    s.freeram = phys.free_pages();
    s.sharedram = static_cast<unsigned long>(vfs_bytes_used() / vm::k_page_size);
    s.procs = static_cast<unsigned short>(proc::process_count());
    s.mem_unit = vm::k_page_size;
    return -copyout(a.a[0], &s, sizeof s);
}

long sys_getrandom(const SyscallArgs& a)
{
    // getrandom(buffer, count, flags): GRND_NONBLOCK 1, GRND_RANDOM 2,
    // GRND_INSECURE 4 (include/uapi/linux/random.h). Toll has no entropy
    // source: the bytes come from a generator (xorshift) seeded by the
    // clock, good enough for hash seeds and never for keys.
    if (a.a[2] & ~uintptr_t(7))
        return -k_einval;
    static uint64_t state = 0x9E3779B97F4A7C15ull; // lock: random
    state ^= proc::ticks();
    size_t count = a.a[1] > 256 ? 256 : a.a[1]; // Linux may return short too
    uint8_t bytes[256];
    for (size_t i = 0; i < count; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes[i] = static_cast<uint8_t>(state >> 24);
    }
    if (Errno e = copyout(a.a[0], bytes, count); e != k_ok)
        return -e;
    return static_cast<long>(count);
}

long sys_getrlimit(const SyscallArgs& a)
{
    if (a.a[0] >= k_rlim_nlimits)
        return -k_einval;
    Limit l = limit_of(static_cast<unsigned>(a.a[0]));
    // The native struct rlimit: two unsigned longs, RLIM_INFINITY all ones.
    unsigned long r[2] = {static_cast<unsigned long>(l.soft), static_cast<unsigned long>(l.hard)};
    return -copyout(a.a[1], r, sizeof r);
}

long sys_setrlimit(const SyscallArgs& a)
{
    unsigned long r[2];
    if (Errno e = copyin(r, a.a[1], sizeof r); e != k_ok)
        return -e;
    auto wide = [](unsigned long v) { return v == ~0ul ? k_infinity : uint64_t(v); };
    return -limit_set(static_cast<unsigned>(a.a[0]), Limit{wide(r[0]), wide(r[1])});
}

long sys_prlimit64(const SyscallArgs& a)
{
    // prlimit64(pid, resource, new, old): pid 0 or the caller's own.
    int pid = static_cast<int>(a.a[0]);
    if (pid != 0 && pid != proc::current_process()->pid) {
        SpinGuard g(proc::process_table_lock()); // find_process's rule
        return proc::find_process(pid) ? -k_eperm : -k_esrch;
    }
    unsigned resource = static_cast<unsigned>(a.a[1]);
    if (resource >= k_rlim_nlimits)
        return -k_einval;
    Limit wanted;
    if (a.a[2])
        if (Errno e = copyin(&wanted, a.a[2], sizeof wanted); e != k_ok)
            return -e;
    if (a.a[3]) {
        Limit l = limit_of(resource);
        if (Errno e = copyout(a.a[3], &l, sizeof l); e != k_ok)
            return -e;
    }
    return a.a[2] ? -limit_set(resource, wanted) : 0;
}

long sys_getgroups(const SyscallArgs& a)
{
    // Toll's one user, root, is in group 0 only.
    int size = static_cast<int>(a.a[0]);
    if (size < 0)
        return -k_einval;
    if (size == 0)
        return 1;
    uint32_t group = 0;
    return copyout(a.a[1], &group, sizeof group) == k_ok ? 1 : -k_efault;
}

long sys_getgroups16(const SyscallArgs& a)
{
    int size = static_cast<int>(a.a[0]);
    if (size < 0)
        return -k_einval;
    if (size == 0)
        return 1;
    uint16_t group = 0;
    return copyout(a.a[1], &group, sizeof group) == k_ok ? 1 : -k_efault;
}

long sys_setgroups(const SyscallArgs& a)
{
    // Linux: a list longer than NGROUPS_MAX (65536) is EINVAL; root may set
    // any list. Toll keeps none, so only the check runs.
    constexpr uintptr_t k_ngroups_max = 65536;
    return a.a[0] > k_ngroups_max ? -k_einval : 0;
}

long sys_sendfile(const SyscallArgs& a)
{
    return do_sendfile(a.a[0], a.a[1], a.a[2], a.a[3], false);
}

long sys_sendfile64(const SyscallArgs& a)
{
    return do_sendfile(a.a[0], a.a[1], a.a[2], a.a[3], true);
}

long sys_getrusage(const SyscallArgs& a)
{
    // RUSAGE_SELF 0, RUSAGE_CHILDREN -1, RUSAGE_THREAD 1. Toll keeps no
    // resource accounting: everything reads 0.
    int who = static_cast<int>(a.a[0]);
    if (who != 0 && who != -1 && who != 1)
        return -k_einval;
    long rusage[18] = {};
    return -copyout(a.a[1], rusage, sizeof rusage);
}

long sys_prctl(const SyscallArgs& a)
{
    // Linux, include/uapi/linux/prctl.h: PR_SET_NAME 15, PR_GET_NAME 16
    // (16 bytes with the NUL); the other options are EINVAL here.
    constexpr uintptr_t k_pr_set_name = 15, k_pr_get_name = 16;
    proc::Process* p = proc::current_process();
    if (a.a[0] == k_pr_get_name)
        return -copyout(a.a[1], p->name, sizeof p->name);
    if (a.a[0] == k_pr_set_name) {
        char name[sizeof p->name];
        Result<size_t> n = copyinstr(name, a.a[1], sizeof name);
        if (!n && n.error() != k_enametoolong)
            return -n.error();
        name[sizeof name - 1] = '\0';
        memcpy(p->name, name, sizeof name);
        return 0;
    }
    return -k_einval;
}

long sys_getresuid(const SyscallArgs& a)
{
    // getresuid and getresgid (32-bit ids): root's 0 three times.
    uint32_t zero = 0;
    for (int i = 0; i < 3; ++i)
        if (Errno e = copyout(a.a[i], &zero, sizeof zero); e != k_ok)
            return -e;
    return 0;
}

long sys_setuid(const SyscallArgs& a)
{
    // setuid/setgid and friends: root may become only root here (one user).
    return static_cast<uint32_t>(a.a[0]) == 0 ? 0 : -k_eperm;
}
} // namespace toll::sys
