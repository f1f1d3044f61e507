// Sleeping locks: a Mutex has an owner thread, and a thread that finds it
// taken sleeps on the mutex's wait queue instead of spinning. It may be held
// across anything that sleeps (a copy from user memory that faults, another
// mutex, a wait queue), which a spinlock may not; it costs a context switch
// when contended, which a spinlock does not.
//
// The lock-order checker sees mutexes too: each thread keeps the mutexes it
// holds, and a mutex's acquisition, like a spinlock's, adds "held, then
// taken" edges and panics on an inversion or on recursion. Taking a mutex
// in an interrupt handler or with a spinlock held is a report as well: both
// would sleep where sleeping is not allowed.
#pragma once
#include "kernel/proc/waitqueue.h"
#include <stdint.h>

namespace toll::proc {

/// A sleeping lock with an owner thread, order-checked, that counts its cost.
class Mutex : public LockClass {
  public:
    constexpr explicit Mutex(const char* name) : LockClass(name), m_waiters("mutex.queue") {}

    /// Takes the mutex, sleeping while another thread owns it.
    [[gnu::noinline]] void lock();
    /// Releases it and wakes one waiter.
    void unlock();
    /// True when the current thread owns it.
    bool held_by_current() const;

    /// How often it was taken, how many of those found it owned, and how
    /// many sleeps the contended ones took.
    uint64_t acquisitions() const { return m_acquisitions; }
    uint64_t contended() const { return m_contended; }
    uint64_t sleeps() const { return m_sleeps; }

  private:
    WaitQueue m_waiters; // its lock guards m_owner and the counts
    Thread* m_owner = nullptr;
    uintptr_t m_owner_where = 0;
    uint64_t m_acquisitions = 0;
    uint64_t m_contended = 0;
    uint64_t m_sleeps = 0;
};

/// Holds @p m for the lifetime of the guard.
class [[nodiscard]] MutexGuard {
  public:
    explicit MutexGuard(Mutex& m) : m_mutex(m) { m_mutex.lock(); }
    ~MutexGuard() { m_mutex.unlock(); }
    MutexGuard(const MutexGuard&) = delete;
    MutexGuard& operator=(const MutexGuard&) = delete;

  private:
    Mutex& m_mutex;
};

} // namespace toll::proc
