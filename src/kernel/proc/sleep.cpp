// Sleeping on channels, on top of wait queues: a channel (any address) hashes
// to one of a fixed set of queues, and a waiter's entry names its channel, so
// that wakeup(channel) wakes only its own. Timed sleepers sit on the same
// queues with a deadline; the clock scans the queues only while there are any.
#include "kernel/proc/thread.h"
#include "kernel/proc/waitqueue.h"

namespace toll::proc {
namespace {

// Enough queues that unrelated channels rarely share a lock, few enough
// that the clock's scan for timed sleepers stays short.
constexpr unsigned k_channel_queues = 32;

struct ChannelQueue {
    WaitQueue queue{"sleep.channel"};
};
ChannelQueue g_channels[k_channel_queues];
unsigned g_timed; // timed sleepers, on any queue

WaitQueue& queue_of(const void* channel)
{
    // Fibonacci hashing of the address without its low bits (Knuth 6.4).
    auto a = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(channel) >> 3);
    return g_channels[(a * 2654435769u) >> 27].queue;
}
static_assert(k_channel_queues == 1u << (32 - 27), "the hash's shift picks one of the queues");

} // namespace

namespace {

void sleep_alone(const void* channel, uint64_t wake_tick, bool interruptible)
{
    WaitQueue& q = queue_of(channel);
    if (wake_tick)
        __atomic_add_fetch(&g_timed, 1, __ATOMIC_RELAXED);
    {
        SpinGuard g(q.lock());
        q.sleep_locked(channel, wake_tick, interruptible);
    }
    if (wake_tick)
        __atomic_sub_fetch(&g_timed, 1, __ATOMIC_RELAXED);
}

void sleep_held(const void* channel, Spinlock& held, uint64_t wake_tick, bool interruptible)
{
    WaitQueue& q = queue_of(channel);
    if (wake_tick)
        __atomic_add_fetch(&g_timed, 1, __ATOMIC_RELAXED);
    q.wait(held, channel, wake_tick, interruptible);
    if (wake_tick)
        __atomic_sub_fetch(&g_timed, 1, __ATOMIC_RELAXED);
}

} // namespace

void sleep_on(const void* channel, uint64_t wake_tick)
{
    sleep_alone(channel, wake_tick, false);
}

void sleep_on(const void* channel, Spinlock& held, uint64_t wake_tick)
{
    sleep_held(channel, held, wake_tick, false);
}

void sleep_on_interruptible(const void* channel, uint64_t wake_tick)
{
    sleep_alone(channel, wake_tick, true);
}

void sleep_on_interruptible(const void* channel, Spinlock& held, uint64_t wake_tick)
{
    sleep_held(channel, held, wake_tick, true);
}

void wakeup(const void* channel)
{
    WaitQueue& q = queue_of(channel);
    if (q.empty())
        return; // nobody to wake: the common case, without the lock
    SpinGuard g(q.lock());
    q.wake_locked(channel);
}

void sleep_clock_tick(uint64_t now)
{
    if (!__atomic_load_n(&g_timed, __ATOMIC_RELAXED))
        return;
    for (ChannelQueue& c : g_channels) {
        if (c.queue.empty())
            continue;
        SpinGuard g(c.queue.lock());
        c.queue.wake_expired_locked(now);
    }
}

} // namespace toll::proc
