// Wait queues: where threads sleep until a condition holds. A queue is a
// list of waiters, each an entry on its own thread's stack, behind a
// spinlock; a waker takes the lock and makes waiters runnable.
//
// The rule that makes it work on several CPUs: the condition is checked,
// and the waiter enqueued and marked asleep, under one lock that the waker
// also takes to change the condition and wake. Otherwise the waker can
// change the condition and wake an empty queue between the waiter's check
// and its sleep, and the waiter sleeps forever (the lost wake-up). The lock
// is either the queue's own (wait_until, sleep_locked) or one that guards
// the condition already (wait, which releases it while asleep and takes it
// again before it returns).
//
// The scheduler gives two things (proc/thread.h): block the current thread
// and make a thread runnable; the queue is the rest.
#pragma once
#include "kernel/kern/spinlock.h"
#include <stdint.h>

namespace toll::proc {

struct Thread;

/// One sleeping thread, on its own stack while it waits.
struct WaitEntry {
    Thread* thread = nullptr;
    const void* channel = nullptr; ///< for the channel queues (sleep_on); else nullptr
    uint64_t deadline = 0;         ///< tick to wake at regardless (channel queues only); 0 for none
    WaitEntry* next = nullptr;
    bool queued = false; ///< still on the queue (a waker clears it)
};

/// Threads waiting for a condition, behind a spinlock.
class WaitQueue {
  public:
    constexpr explicit WaitQueue(const char* name) : m_lock(name) {}
    WaitQueue(const WaitQueue&) = delete;
    WaitQueue& operator=(const WaitQueue&) = delete;

    /// The lock that guards the queue, and may guard the condition too.
    Spinlock& lock() { return m_lock; }

    /// Sleeps until @p done() is true, checking it under the queue's lock
    /// (the lock is not held on return).
    template <typename Done>
    void wait_until(Done done)
    {
        SpinGuard g(m_lock);
        while (!done())
            sleep_locked();
    }

    /// With the queue's lock held: sleeps once, with the lock released while
    /// asleep and held again on return. The caller rechecks its condition.
    void sleep_locked(const void* channel = nullptr, uint64_t deadline = 0,
                      bool interruptible = false);

    /// With @p held (a lock guarding the caller's condition) held, and not
    /// the queue's: sleeps once, releasing @p held while asleep, and takes
    /// it again before returning.
    void wait(Spinlock& held, const void* channel = nullptr, uint64_t deadline = 0,
              bool interruptible = false);

    /// Wakes the first waiter; false when there was none.
    bool wake_one();
    /// Wakes every waiter; returns how many.
    unsigned wake_all();
    /// The thread of the first waiter, or nullptr; the queue's lock held.
    Thread* first_locked() const { return m_head ? m_head->thread : nullptr; }
    /// wake_one with the queue's lock held.
    bool wake_one_locked();
    /// Wakes the waiters on @p channel (nullptr: all), with the lock held.
    unsigned wake_locked(const void* channel);
    /// Wakes the waiters whose deadline is at or before @p now, lock held.
    unsigned wake_expired_locked(uint64_t now);

    /// True when nobody waits (a hint without the lock).
    bool empty() const { return __atomic_load_n(&m_head, __ATOMIC_RELAXED) == nullptr; }

    /// Sleeps so far (for the counters and the ktests).
    uint64_t sleeps() const { return m_sleeps; }

  private:
    void enqueue(WaitEntry& e);
    void remove(WaitEntry& e);
    /// For an interruptible sleep: a signal that came while the thread was
    /// getting ready to sleep takes it off the queue again (true).
    bool signalled_before_sleep(WaitEntry& e, bool interruptible);
    void wake_entry(WaitEntry& e);

    Spinlock m_lock;
    WaitEntry* m_head = nullptr;
    WaitEntry* m_tail = nullptr;
    uint64_t m_sleeps = 0;
};

} // namespace toll::proc
