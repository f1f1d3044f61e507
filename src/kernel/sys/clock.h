// Time as the system calls see it: the clock ticks since boot (Toll keeps no
// wall clock, so every clock counts from boot), their conversions to and
// from struct timespec, and sleeping until a tick or for a time.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/sys/uaccess.h"
#include <stdint.h>

namespace toll::sys {

inline constexpr int64_t k_ns_per_s = 1000000000;

/// Clock tick @p ticks as seconds and nanoseconds since boot.
Timespec timespec_of_ticks(uint64_t ticks);

/// The time now: timespec_of_ticks(proc::ticks()).
Timespec clock_now();

/// The clock ticks in @p ts (normalised, as copyin_timespec returns it),
/// rounded up: a wait of it lasts at least that long.
uint64_t ticks_of(const Timespec& ts);

/// The tick at which a wait of @p timeout_ns (> 0) from now ends, rounded up.
uint64_t deadline_after(int64_t timeout_ns);

/// Reads the struct timespec at @p user (copyin_timespec's layouts) as
/// nanoseconds; a null pointer is -1, no limit. Errors as copyin_timespec.
Result<int64_t> timeout_ns_at(uintptr_t user, bool time64);

/// Sleeps until the tick @p wake (0: until a signal). k_ok when it came,
/// k_eintr when a signal that is not blocked is pending first.
Errno sleep_until(uint64_t wake);

/// Sleeps for @p timeout_ns (< 0: until a signal; 0: not at all). 0, or
/// -EINTR when a signal came first.
long sleep_for(int64_t timeout_ns);

} // namespace toll::sys
