// poll, ppoll, select and pselect6, in their native and 64-bit-time forms,
// and poll_notify's wake-up of the threads asleep in them (file.h).
#include "kernel/arch/cpu.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/clock.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"

namespace toll::sys {
namespace {

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
        return sleep_for(timeout_ns);
    // POLLERR, POLLHUP and POLLNVAL are reported whether asked or not.
    constexpr int k_always = k_pollerr | k_pollhup | k_pollnval;
    uint64_t deadline = timeout_ns > 0 ? deadline_after(timeout_ns) : 0;
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
        return sleep_for(timeout_ns);
    // Linux's sets: readable is POLLIN or POLLHUP or POLLERR, writable is
    // POLLOUT or POLLERR, exceptional is POLLPRI.
    constexpr int k_want[3] = {k_pollin | k_pollrdnorm | k_pollhup | k_pollerr,
                               k_pollout | k_pollwrnorm | k_pollerr, k_pollpri};
    uint64_t deadline = timeout_ns > 0 ? deadline_after(timeout_ns) : 0;
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

} // namespace

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
    Result<int64_t> t = timeout_ns_at(a.a[2], wide);
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
        if (Errno e =
                copyout_timespec(a.a[2], Timespec{left / k_ns_per_s, left % k_ns_per_s}, wide);
            e != k_ok)
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
    Result<int64_t> t = timeout_ns_at(a.a[4], sizeof(long) == sizeof(int64_t));
    if (!t)
        return -t.error();
    return do_select(a.a[0], a.a[1], a.a[2], a.a[3], t.value());
}

long sys_pselect6_time64(const SyscallArgs& a)
{
    Result<int64_t> t = timeout_ns_at(a.a[4], true);
    if (!t)
        return -t.error();
    return do_select(a.a[0], a.a[1], a.a[2], a.a[3], t.value());
}

unsigned g_poll_pollers;

void poll_notify_slow()
{
    __atomic_add_fetch(&g_poll_generation, 1, __ATOMIC_SEQ_CST);
    SpinGuard g(g_poll_lock);
    proc::wakeup(&g_poll_generation);
}

} // namespace toll::sys
