// The calls about the system and its clocks that a C library's start-up and
// busybox's applets make: uname, sysinfo, getrandom, the resource limits,
// the time calls in their native and 64-bit-time forms, the group list,
// poll and select, sendfile, getrusage and prctl.
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmspace.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

constexpr int64_t k_ns_per_s = 1000000000;

// Linux, include/uapi/linux/utsname.h: struct new_utsname, six fields of 65.
constexpr size_t k_utsname_field = 65;
struct Utsname {
    char sysname[k_utsname_field], nodename[k_utsname_field], release[k_utsname_field],
        version[k_utsname_field], machine[k_utsname_field], domainname[k_utsname_field];
};

// Linux, include/uapi/linux/resource.h: the limits Toll reports.
constexpr unsigned k_rlimit_stack = 3, k_rlimit_nofile = 7, k_rlim_nlimits = 16;

// The current time as seconds and nanoseconds since boot (Toll keeps no
// wall clock: CLOCK_REALTIME counts from boot too).
void now(int64_t* seconds, int64_t* nanoseconds)
{
    uint64_t hz = arch::clock_hz(), t = proc::ticks();
    *seconds = static_cast<int64_t>(t / hz);
    *nanoseconds = static_cast<int64_t>((t % hz) * (k_ns_per_s / hz));
}

bool clock_known(uintptr_t clock)
{
    // CLOCK_REALTIME, MONOTONIC, PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID,
    // MONOTONIC_RAW, REALTIME_COARSE, MONOTONIC_COARSE, BOOTTIME.
    return clock <= 7;
}

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

// poll and select: each pass asks every descriptor's file what holds now
// (FileOps::poll; a file without one is always ready), and a pass that finds
// nothing sleeps until poll_notify() says something changed, the timeout
// passes or a signal comes, then looks again. Two numbers close the race
// between a pass and its sleep. A poller is counted in g_poll_pollers
// before its first pass; a notifier that sees no poller has nothing to do
// (a poller counted later passes after the change, which its pass sees),
// and one that sees a poller bumps the generation and wakes. A poller
// sleeps only if the generation has not moved since its pass began,
// checked under the lock the notifier wakes under.
Spinlock g_poll_lock{"poll"};
uint64_t g_poll_generation; // atomic: bumped by every poll_notify that saw a poller

// Counts the current thread among the pollers for its lifetime.
struct Polling {
    Polling() { __atomic_add_fetch(&g_poll_pollers, 1, __ATOMIC_SEQ_CST); }
    ~Polling() { __atomic_sub_fetch(&g_poll_pollers, 1, __ATOMIC_SEQ_CST); }
    Polling(const Polling&) = delete;
    Polling& operator=(const Polling&) = delete;
};

// What descriptor @p fd of the current process reports: its k_poll* bits,
// or -1 when it is not open.
int fd_ready(int fd)
{
    File* f = fd_get(fd);
    if (!f)
        return -1;
    return f->ops->poll ? f->ops->poll(*f) : k_pollin | k_pollout | k_pollrdnorm | k_pollwrnorm;
}

// The tick at which a wait of @p timeout_ns (> 0) from now ends.
uint64_t deadline_of(int64_t timeout_ns)
{
    uint64_t hz = arch::clock_hz();
    return proc::ticks() + (static_cast<uint64_t>(timeout_ns) * hz + k_ns_per_s - 1) /
                               static_cast<uint64_t>(k_ns_per_s);
}

// Sleeps until poll_notify moves the generation past @p seen, the tick
// @p deadline (0: none) or a signal. Returns false when the deadline passed
// (the caller makes one last pass and returns), true otherwise.
bool poll_sleep(uint64_t seen, uint64_t deadline)
{
    if (deadline && proc::ticks() >= deadline)
        return false;
    SpinGuard g(g_poll_lock);
    if (__atomic_load_n(&g_poll_generation, __ATOMIC_SEQ_CST) == seen)
        proc::sleep_on_interruptible(&g_poll_generation, g_poll_lock, deadline);
    return true;
}

// Waits for @p timeout_ns (< 0: for ever) or a signal; 0 or -EINTR.
long wait_for(int64_t timeout_ns)
{
    if (timeout_ns == 0)
        return 0;
    uint64_t wake = timeout_ns > 0 ? deadline_of(timeout_ns) : 0;
    const void* channel = proc::current();
    while (wake == 0 || proc::ticks() < wake) {
        if (proc::interrupted())
            return -k_eintr;
        proc::sleep_on_interruptible(channel, wake);
    }
    return 0;
}

// poll over @p count struct pollfd at @p fds; @p timeout_ns < 0: no limit.
long do_poll(uintptr_t fds, uintptr_t count, int64_t timeout_ns)
{
    struct PollFd {
        int32_t fd;
        int16_t events, revents;
    };
    if (count > static_cast<uintptr_t>(proc::k_max_fds) * 16)
        return -k_einval; // Linux: nfds past RLIMIT_NOFILE
    if (count == 0)
        return wait_for(timeout_ns);
    // POLLERR, POLLHUP and POLLNVAL are reported whether asked or not.
    constexpr int k_always = k_pollerr | k_pollhup | k_pollnval;
    uint64_t deadline = timeout_ns > 0 ? deadline_of(timeout_ns) : 0;
    bool last = timeout_ns == 0;
    Polling counted;
    for (;;) {
        uint64_t seen = __atomic_load_n(&g_poll_generation, __ATOMIC_SEQ_CST);
        long ready = 0;
        for (uintptr_t i = 0; i < count; ++i) {
            PollFd p;
            if (Errno e = copyin(&p, fds + i * sizeof p, sizeof p); e != k_ok)
                return -e;
            int now = p.fd < 0 ? 0 : fd_ready(p.fd);
            if (now < 0)
                now = k_pollnval;
            p.revents = static_cast<int16_t>(now & (p.events | k_always));
            ready += p.revents != 0;
            if (Errno e = copyout(fds + i * sizeof p + 6, &p.revents, sizeof p.revents); e != k_ok)
                return -e;
        }
        if (ready || last)
            return ready;
        if (proc::interrupted())
            return -k_eintr;
        if (!poll_sleep(seen, deadline))
            last = true;
    }
}

// select over @p n descriptors with the three fd_sets (any may be 0).
long do_select(uintptr_t n, uintptr_t readfds, uintptr_t writefds, uintptr_t exceptfds,
               int64_t timeout_ns)
{
    constexpr size_t k_bits = 8 * sizeof(unsigned long);
    if (static_cast<long>(n) < 0)
        return -k_einval;
    if (n > static_cast<uintptr_t>(proc::k_max_fds))
        n = static_cast<uintptr_t>(proc::k_max_fds);
    size_t words = (n + k_bits - 1) / k_bits;
    constexpr size_t k_words = (proc::k_max_fds + k_bits - 1) / k_bits;
    unsigned long asked[3][k_words] = {};
    uintptr_t users[3] = {readfds, writefds, exceptfds};
    for (int s = 0; s < 3; ++s)
        if (users[s] && words)
            if (Errno e = copyin(asked[s], users[s], words * sizeof(unsigned long)); e != k_ok)
                return -e;
    if (n == 0 || (!readfds && !writefds && !exceptfds))
        return wait_for(timeout_ns);
    // Linux's sets: readable is POLLIN or POLLHUP or POLLERR, writable is
    // POLLOUT or POLLERR, exceptional is POLLPRI.
    constexpr int k_want[3] = {k_pollin | k_pollrdnorm | k_pollhup | k_pollerr,
                               k_pollout | k_pollwrnorm | k_pollerr, k_pollpri};
    uint64_t deadline = timeout_ns > 0 ? deadline_of(timeout_ns) : 0;
    bool last = timeout_ns == 0;
    Polling counted;
    for (;;) {
        uint64_t seen = __atomic_load_n(&g_poll_generation, __ATOMIC_SEQ_CST);
        unsigned long got[3][k_words] = {};
        long ready = 0;
        for (size_t fd = 0; fd < n; ++fd) {
            unsigned long bit = 1ul << (fd % k_bits);
            size_t w = fd / k_bits;
            if (!((asked[0][w] | asked[1][w] | asked[2][w]) & bit))
                continue;
            int now = fd_ready(static_cast<int>(fd));
            if (now < 0)
                return -k_ebadf;
            for (int s = 0; s < 3; ++s)
                if ((asked[s][w] & bit) && (now & k_want[s])) {
                    got[s][w] |= bit;
                    ++ready;
                }
        }
        if (ready || last) {
            for (int s = 0; s < 3; ++s)
                if (users[s] && words)
                    if (Errno e = copyout(users[s], got[s], words * sizeof(unsigned long));
                        e != k_ok)
                        return -e;
            return ready;
        }
        if (proc::interrupted())
            return -k_eintr;
        if (!poll_sleep(seen, deadline))
            last = true;
    }
}

// Reads a timespec of two longs (@p wide false) or two int64s at @p user
// into nanoseconds; a null pointer is -1 (no limit).
Result<int64_t> timeout_of(uintptr_t user, bool wide)
{
    if (!user)
        return int64_t(-1);
    int64_t s, ns;
    if (wide) {
        int64_t ts[2];
        TRY(copyin(ts, user, sizeof ts));
        s = ts[0];
        ns = ts[1];
    } else {
        long ts[2];
        TRY(copyin(ts, user, sizeof ts));
        s = ts[0];
        ns = ts[1];
    }
    if (s < 0 || ns < 0 || ns >= k_ns_per_s)
        return k_einval;
    return s * k_ns_per_s + ns;
}

long timespec_out(uintptr_t user, bool wide)
{
    int64_t s, ns;
    now(&s, &ns);
    if (wide) {
        int64_t ts[2] = {s, ns};
        return -copyout(user, ts, sizeof ts);
    }
    long ts[2] = {static_cast<long>(s), static_cast<long>(ns)};
    return -copyout(user, ts, sizeof ts);
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
    int64_t seconds, ns;
    now(&seconds, &ns);
    s.uptime = static_cast<long>(seconds);
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

long sys_gettimeofday(const SyscallArgs& a)
{
    int64_t s, ns;
    now(&s, &ns);
    if (a.a[0]) {
        long tv[2] = {static_cast<long>(s), static_cast<long>(ns / 1000)};
        if (Errno e = copyout(a.a[0], tv, sizeof tv); e != k_ok)
            return -e;
    }
    if (a.a[1]) {
        int tz[2] = {0, 0}; // UTC, no daylight saving
        if (Errno e = copyout(a.a[1], tz, sizeof tz); e != k_ok)
            return -e;
    }
    return 0;
}

long sys_clock_gettime64(const SyscallArgs& a)
{
    if (!clock_known(a.a[0]))
        return -k_einval;
    return timespec_out(a.a[1], true);
}

namespace {
long clock_getres(const SyscallArgs& a, bool wide)
{
    if (!clock_known(a.a[0]))
        return -k_einval;
    if (!a.a[1])
        return 0;
    int64_t ns = k_ns_per_s / static_cast<int64_t>(arch::clock_hz());
    if (wide) {
        int64_t ts[2] = {0, ns};
        return -copyout(a.a[1], ts, sizeof ts);
    }
    long ts[2] = {0, static_cast<long>(ns)};
    return -copyout(a.a[1], ts, sizeof ts);
}

long clock_nanosleep(const SyscallArgs& a, bool wide)
{
    // clock_nanosleep(clock, flags, request, remain): TIMER_ABSTIME is 1.
    constexpr uintptr_t k_timer_abstime = 1;
    if (!clock_known(a.a[0]))
        return -k_einval;
    Result<int64_t> t = timeout_of(a.a[2], wide);
    if (!t)
        return -t.error();
    if (t.value() < 0)
        return -k_efault;
    int64_t ns = t.value();
    if (a.a[1] & k_timer_abstime) {
        int64_t s, n;
        now(&s, &n);
        int64_t now_ns = s * k_ns_per_s + n;
        ns = ns > now_ns ? ns - now_ns : 0;
    }
    long r = wait_for(ns);
    return r == -k_eintr ? -k_eintr : 0;
}
} // namespace

long sys_clock_getres(const SyscallArgs& a)
{
    return clock_getres(a, false);
}

long sys_clock_getres_time64(const SyscallArgs& a)
{
    return clock_getres(a, true);
}

long sys_clock_nanosleep(const SyscallArgs& a)
{
    return clock_nanosleep(a, false);
}

long sys_clock_nanosleep_time64(const SyscallArgs& a)
{
    return clock_nanosleep(a, true);
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

long sys_poll(const SyscallArgs& a)
{
    int timeout_ms = static_cast<int>(a.a[2]);
    return do_poll(a.a[0], a.a[1], timeout_ms < 0 ? -1 : int64_t(timeout_ms) * 1000000);
}

namespace {
// ppoll(fds, nfds, timeout, sigmask, sigsetsize): poll with the signal mask
// @p sigmask in force while it waits (as sigsuspend, undone after the
// handler ran). musl's pause on arm64 is ppoll with no descriptors.
long ppoll(const SyscallArgs& a, bool wide)
{
    Result<int64_t> t = timeout_of(a.a[2], wide);
    if (!t)
        return -t.error();
    constexpr uintptr_t k_sigset_size = 8; // Linux's sigset_t
    if (a.a[3]) {
        if (a.a[4] != k_sigset_size)
            return -k_einval;
        SigSet mask = 0;
        if (Errno e = copyin(&mask, a.a[3], sizeof mask); e != k_ok)
            return -e;
        proc::suspend_mask(proc::current()->sig, mask);
    }
    uint64_t start = proc::ticks();
    long r = do_poll(a.a[0], a.a[1], t.value());
    if (a.a[2] && t.value() > 0) {
        // Linux writes back the time left.
        uint64_t hz = arch::clock_hz();
        int64_t spent = static_cast<int64_t>((proc::ticks() - start) * (k_ns_per_s / hz));
        int64_t left = spent < t.value() ? t.value() - spent : 0;
        Errno e;
        if (wide) {
            int64_t ts[2] = {left / k_ns_per_s, left % k_ns_per_s};
            e = copyout(a.a[2], ts, sizeof ts);
        } else {
            long ts[2] = {static_cast<long>(left / k_ns_per_s),
                          static_cast<long>(left % k_ns_per_s)};
            e = copyout(a.a[2], ts, sizeof ts);
        }
        if (e != k_ok)
            return -e;
    }
    return r;
}
} // namespace

long sys_ppoll(const SyscallArgs& a)
{
    return ppoll(a, sizeof(long) == sizeof(int64_t));
}

long sys_ppoll_time64(const SyscallArgs& a)
{
    return ppoll(a, true);
}

long sys_select(const SyscallArgs& a)
{
    int64_t timeout = -1;
    if (a.a[4]) {
        long tv[2];
        if (Errno e = copyin(tv, a.a[4], sizeof tv); e != k_ok)
            return -e;
        if (tv[0] < 0 || tv[1] < 0 || tv[1] >= 1000000)
            return -k_einval;
        timeout = int64_t(tv[0]) * k_ns_per_s + int64_t(tv[1]) * 1000;
    }
    return do_select(a.a[0], a.a[1], a.a[2], a.a[3], timeout);
}

long sys_pselect6(const SyscallArgs& a)
{
    Result<int64_t> t = timeout_of(a.a[4], sizeof(long) == sizeof(int64_t));
    if (!t)
        return -t.error();
    return do_select(a.a[0], a.a[1], a.a[2], a.a[3], t.value());
}

long sys_pselect6_time64(const SyscallArgs& a)
{
    Result<int64_t> t = timeout_of(a.a[4], true);
    if (!t)
        return -t.error();
    return do_select(a.a[0], a.a[1], a.a[2], a.a[3], t.value());
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

unsigned g_poll_pollers;

void poll_notify_slow()
{
    __atomic_add_fetch(&g_poll_generation, 1, __ATOMIC_SEQ_CST);
    SpinGuard g(g_poll_lock);
    proc::wakeup(&g_poll_generation);
}

} // namespace toll::sys
