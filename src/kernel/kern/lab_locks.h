// The locks lab's two pieces (labs/lab-locks): a ticket lock, the spinlock
// that serves its waiters in the order they came, and a per-CPU counter,
// which each CPU bumps in its own slot so that no two ever write one word.
// Neither masks interrupts nor joins the lock-order checker: the kernel's
// Spinlock (kernel/kern/spinlock.h) does both; these are what is under it.
#pragma once
#include "kernel/kern/cpu.h"
#include <stdint.h>

namespace toll {

/// A ticket lock: acquire takes the next ticket and spins until the lock
/// serves it; release serves the next one.
class TicketLock {
  public:
    /// Takes the lock; returns the turns spent waiting (0 if it was free).
    uint64_t acquire();
    /// Lets the next ticket in. The caller holds the lock.
    void release();
    /// True while some CPU holds the lock or waits for it: a ticket was
    /// taken that has not yet been served and released.
    bool busy() const
    {
        return __atomic_load_n(&next_, __ATOMIC_RELAXED) !=
               __atomic_load_n(&serving_, __ATOMIC_RELAXED);
    }

  private:
    unsigned next_ = 0;    ///< the ticket the next acquire takes
    unsigned serving_ = 0; ///< the ticket that holds the lock
};

/// A counter that every CPU may add to at once without a lock: each adds to
/// its own slot, on its own cache line; read sums the slots.
class PerCpuCounter {
  public:
    /// Adds @p n to the count (on this CPU, interrupts off or pinned).
    void add(unsigned long n = 1);
    /// The sum over every CPU.
    unsigned long read() const;

  private:
    static constexpr unsigned k_line = 64; ///< bytes of a cache line on both ports
    struct alignas(k_line) Slot {
        unsigned long value = 0; // a word: one load or store on both ports
    };
    Slot slots_[k_max_cpus];
    unsigned long shared_ = 0; ///< what a counter without slots would use
};

} // namespace toll
