// The calls about time, in their native and 64-bit-time forms: the clocks
// (every one counts from boot), gettimeofday, nanosleep and clock_nanosleep.
#include "kernel/arch/cpu.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/clock.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"

namespace toll::sys {
namespace {

bool clock_known(uintptr_t clock)
{
    // CLOCK_REALTIME, MONOTONIC, PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID,
    // MONOTONIC_RAW, REALTIME_COARSE, MONOTONIC_COARSE, BOOTTIME.
    return clock <= 7;
}

long clock_gettime(const SyscallArgs& a, bool time64)
{
    if (!clock_known(a.a[0]))
        return -k_einval;
    // Every clock counts from boot in clock ticks (Toll keeps no wall time).
    return -copyout_timespec(a.a[1], clock_now(), time64);
}

long clock_getres(const SyscallArgs& a, bool wide)
{
    if (!clock_known(a.a[0]))
        return -k_einval;
    if (!a.a[1])
        return 0;
    int64_t ns = k_ns_per_s / static_cast<int64_t>(arch::clock_hz());
    return -copyout_timespec(a.a[1], Timespec{0, ns}, wide);
}

long clock_nanosleep(const SyscallArgs& a, bool wide)
{
    // clock_nanosleep(clock, flags, request, remain): TIMER_ABSTIME is 1.
    constexpr uintptr_t k_timer_abstime = 1;
    if (!clock_known(a.a[0]))
        return -k_einval;
    Result<int64_t> t = timeout_ns_at(a.a[2], wide);
    if (!t)
        return -t.error();
    if (t.value() < 0)
        return -k_efault;
    int64_t ns = t.value();
    if (a.a[1] & k_timer_abstime) {
        Timespec now = clock_now();
        int64_t now_ns = now.seconds * k_ns_per_s + now.nanoseconds;
        ns = ns > now_ns ? ns - now_ns : 0;
    }
    long r = sleep_for(ns);
    return r == -k_eintr ? -k_eintr : 0;
}

} // namespace

long sys_gettimeofday(const SyscallArgs& a)
{
    Timespec now = clock_now();
    if (a.a[0]) {
        long tv[2] = {static_cast<long>(now.seconds), static_cast<long>(now.nanoseconds / 1000)};
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

long sys_clock_gettime(const SyscallArgs& a)
{
    return clock_gettime(a, false);
}

long sys_clock_gettime64(const SyscallArgs& a)
{
    return clock_gettime(a, true);
}

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

long sys_nanosleep(const SyscallArgs& a)
{
    Result<Timespec> ts = copyin_timespec(a.a[0], false);
    if (!ts)
        return -ts.error();
    uint64_t wake = proc::ticks() + ticks_of(ts.value());
    if (sleep_until(wake) == k_ok)
        return 0;
    // Interrupted: the time left goes to rem (Linux writes it only then).
    uint64_t now = proc::ticks();
    if (a.a[1])
        if (Errno e =
                copyout_timespec(a.a[1], timespec_of_ticks(wake > now ? wake - now : 0), false);
            e != k_ok)
            return -e;
    return -k_eintr;
}

} // namespace toll::sys
