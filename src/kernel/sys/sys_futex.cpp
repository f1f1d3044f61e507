// futex(2): the operations musl's and glibc's threads use (wait, wake,
// requeue, their bitset and private forms, with timeouts), decoded here
// and carried out by proc/futex.cpp.
#include "kernel/arch/cpu.h"
#include "kernel/proc/futex.h"
#include "kernel/proc/process.h"
#include "kernel/sys/clock.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"

namespace toll::sys {
namespace {

// futex's operations and flags (Linux, include/uapi/linux/futex.h).
constexpr int k_futex_wait = 0, k_futex_wake = 1, k_futex_requeue = 3, k_futex_cmp_requeue = 4,
              k_futex_wait_bitset = 9, k_futex_wake_bitset = 10;
constexpr int k_futex_private_flag = 128, k_futex_clock_realtime = 256;

// Reads a timeout at @p user (a struct timespec of two longs, or of two
// 64-bit fields for i386's futex_time64) as clock ticks, rounded up;
// k_einval for a negative or unnormalised one.
Result<uint64_t> timeout_ticks(uintptr_t user, bool time64)
{
    Timespec ts = TRY(copyin_timespec(user, time64));
    return ticks_of(ts);
}

long futex(const SyscallArgs& a, bool time64)
{
    uintptr_t uaddr = a.a[0];
    int op = static_cast<int>(a.a[1]);
    auto val = static_cast<uint32_t>(a.a[2]);
    uintptr_t timeout = a.a[3], uaddr2 = a.a[4];
    auto val3 = static_cast<uint32_t>(a.a[5]);
    // Private or not, a futex is keyed by its address space (futex.cpp).
    int cmd = op & ~(k_futex_private_flag | k_futex_clock_realtime);
    if ((op & k_futex_clock_realtime) && cmd != k_futex_wait && cmd != k_futex_wait_bitset)
        return -k_enosys; // Linux: the clock means something to a wait only
    vm::VmSpace* space = proc::current_vm();
    auto answer = [](const Result<int>& r) -> long { return r ? r.value() : -r.error(); };
    switch (cmd) {
    case k_futex_wait:
    case k_futex_wait_bitset: {
        uint32_t bitset = cmd == k_futex_wait ? proc::k_futex_match_any : val3;
        if (!bitset)
            return -k_einval;
        uint64_t deadline = 0;
        if (timeout) {
            Result<uint64_t> t = timeout_ticks(timeout, time64);
            if (!t)
                return -t.error();
            // FUTEX_WAIT's timeout is relative; FUTEX_WAIT_BITSET's is a
            // time on the clock, and every clock counts from boot here.
            deadline = cmd == k_futex_wait ? proc::ticks() + t.value() : t.value();
            deadline = deadline ? deadline : 1; // 0 would mean none: the past is tick 1
        }
        return answer(proc::futex_wait(space, uaddr, val, deadline, bitset));
    }
    case k_futex_wake:
    case k_futex_wake_bitset: {
        uint32_t bitset = cmd == k_futex_wake ? proc::k_futex_match_any : val3;
        if (!bitset || uaddr % sizeof(uint32_t))
            return -k_einval;
        if (!user_range_ok(uaddr, sizeof(uint32_t)))
            return -k_efault;
        // Linux wakes one waiter for a count of 0 or less: it counts a
        // wake before comparing (futex_wake's "++ret >= nr_wake").
        int count = static_cast<int>(val);
        return proc::futex_wake(space, uaddr, count > 0 ? count : 1, bitset);
    }
    case k_futex_requeue:
    case k_futex_cmp_requeue:
        // The fourth argument is the requeue count here, not a timeout.
        return answer(proc::futex_requeue(space, uaddr, static_cast<int>(val),
                                          static_cast<int>(timeout), uaddr2,
                                          cmd == k_futex_cmp_requeue ? &val3 : nullptr));
    default:
        return -k_enosys; // the PI and wake-op forms, which musl does not use
    }
}

} // namespace

long sys_futex(const SyscallArgs& a)
{
    return futex(a, sizeof(long) == sizeof(int64_t));
}

long sys_futex_time64(const SyscallArgs& a)
{
    return futex(a, true);
}

} // namespace toll::sys
