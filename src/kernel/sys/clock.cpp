// The conversions between clock ticks and struct timespec that the time,
// poll and futex calls share, and their sleeps (clock.h).
#include "kernel/sys/clock.h"
#include "kernel/arch/cpu.h"
#include "kernel/proc/signal.h"
#include "kernel/proc/thread.h"

namespace toll::sys {

Timespec timespec_of_ticks(uint64_t ticks)
{
    uint64_t hz = arch::clock_hz();
    return Timespec{static_cast<int64_t>(ticks / hz),
                    static_cast<int64_t>((ticks % hz) * (k_ns_per_s / hz))};
}

Timespec clock_now()
{
    return timespec_of_ticks(proc::ticks());
}

uint64_t ticks_of(const Timespec& ts)
{
    constexpr auto ns_per_s = static_cast<uint64_t>(k_ns_per_s);
    uint64_t hz = arch::clock_hz();
    return static_cast<uint64_t>(ts.seconds) * hz +
           (static_cast<uint64_t>(ts.nanoseconds) * hz + ns_per_s - 1) / ns_per_s;
}

uint64_t deadline_after(int64_t timeout_ns)
{
    uint64_t hz = arch::clock_hz();
    return proc::ticks() + (static_cast<uint64_t>(timeout_ns) * hz + k_ns_per_s - 1) /
                               static_cast<uint64_t>(k_ns_per_s);
}

Result<int64_t> timeout_ns_at(uintptr_t user, bool time64)
{
    if (!user)
        return int64_t(-1);
    Timespec ts = TRY(copyin_timespec(user, time64));
    return ts.seconds * k_ns_per_s + ts.nanoseconds;
}

Errno sleep_until(uint64_t wake)
{
    const void* channel = proc::current();
    while (wake == 0 || proc::ticks() < wake) {
        if (proc::interrupted())
            return k_eintr;
        proc::sleep_on_interruptible(channel, wake);
    }
    return k_ok;
}

long sleep_for(int64_t timeout_ns)
{
    if (timeout_ns == 0)
        return 0;
    return sleep_until(timeout_ns > 0 ? deadline_after(timeout_ns) : 0) == k_ok ? 0 : -k_eintr;
}

} // namespace toll::sys
