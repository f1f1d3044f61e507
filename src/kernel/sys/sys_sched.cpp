// The scheduler's system calls beyond sched_yield: CPU affinity
// (sched_setaffinity, sched_getaffinity) and getcpu, with Linux's rules for
// the mask's size (kernel/sched/core.c) and its errors.
#include "kernel/arch/cpu.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/sched.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

// The kernel's cpumask as the calls copy it: one unsigned long (Toll has at
// most k_max_cpus = 8 CPUs), as Linux's cpumask_size() rounds the mask up to
// whole longs.
constexpr size_t k_mask_bytes = sizeof(unsigned long);
static_assert(k_max_cpus <= 8 * k_mask_bytes, "a CPU mask fits one long");

// Runs @p op on the thread @p pid names (0 or the caller's own thread id:
// the caller), or returns k_esrch. Another process's thread is reached under the
// process table's lock, held while @p op runs so that it cannot exit
// meanwhile (the lock comes before the run queues' locks).
template <typename Op>
Errno with_target(uintptr_t pid, Op op)
{
    if (static_cast<long>(pid) < 0)
        return k_esrch;
    proc::Process* self = proc::current_process();
    if (pid == 0 || (self && static_cast<int>(pid) == proc::current()->tid))
        return op(proc::current());
    // Linux's pid here is a thread id: the thread, not its process.
    SpinGuard g(proc::process_table_lock());
    proc::Thread* t = proc::find_thread(static_cast<int>(pid));
    if (!t)
        return k_esrch;
    return op(t);
}

// Linux's nr_cpu_ids: the CPUs the kernel runs (no hotplug here).
unsigned cpu_ids()
{
    uint32_t online = proc::sched_online_mask();
    unsigned n = 0;
    while (online >> n)
        ++n;
    return n;
}

} // namespace

// sched_setaffinity(pid, cpusetsize, mask): a shorter mask is zero-filled,
// a longer one read only as far as the kernel's; no CPU of the mask online
// (and allowed) is EINVAL.
long sys_sched_setaffinity(const SyscallArgs& a)
{
    size_t len = a.a[1];
    unsigned long mask = 0;
    if (Errno e = copyin(&mask, a.a[2], len < k_mask_bytes ? len : k_mask_bytes); e != k_ok)
        return -e;
    Errno e = with_target(a.a[0], [mask](proc::Thread* t) {
        return proc::sched_set_affinity(t, static_cast<uint32_t>(mask));
    });
    return e == k_ok ? 0 : -e;
}

// sched_getaffinity(pid, cpusetsize, mask): EINVAL for a size that cannot
// hold nr_cpu_ids bits or is not a multiple of a long; returns the bytes
// written.
long sys_sched_getaffinity(const SyscallArgs& a)
{
    size_t len = a.a[1];
    if (len * 8 < cpu_ids() || len % sizeof(unsigned long) != 0)
        return -k_einval;
    unsigned long mask = 0;
    Errno found = with_target(a.a[0], [&mask](proc::Thread* t) {
        mask = proc::sched_get_affinity(t);
        return k_ok;
    });
    if (found != k_ok)
        return -found;
    size_t n = len < k_mask_bytes ? len : k_mask_bytes;
    if (Errno e = copyout(a.a[2], &mask, n); e != k_ok)
        return -e;
    return static_cast<long>(n);
}

// getcpu(cpu, node, tcache): the caller's CPU and NUMA node (always 0);
// either pointer may be null; the third argument is unused since Linux 2.6.24.
long sys_getcpu(const SyscallArgs& a)
{
    unsigned cpu = proc::sched_this_cpu(), node = 0;
    if (a.a[0])
        if (Errno e = copyout(a.a[0], &cpu, sizeof cpu); e != k_ok)
            return -e;
    if (a.a[1])
        if (Errno e = copyout(a.a[1], &node, sizeof node); e != k_ok)
            return -e;
    return 0;
}

// times(buf): the caller's CPU time in clock ticks of USER_HZ (100, Linux's
// sysconf(_SC_CLK_TCK)), as the scheduler's clock charged it: every tick
// that found the thread running counts as user time (Toll does not split
// user from system time); the children's times are not kept and read 0.
// Returns the ticks since boot.
long sys_times(const SyscallArgs& a)
{
    constexpr uint64_t k_user_hz = 100; // Linux, include/asm-generic/param.h: USER_HZ
    uint64_t hz = arch::clock_hz();
    struct {
        long utime, stime, cutime, cstime;
    } tms = {static_cast<long>(proc::current()->ticks_run * k_user_hz / hz), 0, 0, 0};
    if (a.a[0])
        if (Errno e = copyout(a.a[0], &tms, sizeof tms); e != k_ok)
            return -e;
    return static_cast<long>(proc::ticks() * k_user_hz / hz);
}

} // namespace toll::sys
