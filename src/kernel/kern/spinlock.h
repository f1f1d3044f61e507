// Spinlocks: mutual exclusion between CPUs for short critical sections.
// Taking one masks interrupts on this CPU first (an interrupt handler that
// wanted the same lock would otherwise spin forever on the CPU that holds
// it), and the outermost lock's release puts them back as they were. Each
// lock records its holder (CPU and the return address of lock()) and counts
// its acquisitions, the contended ones, and the spins those waited.
//
// The lock-order checker rides on every acquisition: taking a lock that
// inverts an order seen before, taking a lock this CPU holds already, or
// sleeping with a spinlock held panics, naming the locks and where each was
// taken (lock_order.h has the idea; lock_order_check_sleep() the last case).
#pragma once
#include "kernel/arch/cpu.h"
#include "kernel/kern/cpu.h"
#include <stdint.h>

namespace toll {

/// What the lock-order checker knows of any lock, spinning or sleeping: its
/// name and its node in the order graph. Locks that share a name (every
/// pipe's lock is "pipe") share a node, a *class* in lockdep's terms: an
/// order learnt on one instance holds for all of them.
class LockClass {
  public:
    constexpr explicit LockClass(const char* name) : m_name(name) {}
    LockClass(const LockClass&) = delete;
    LockClass& operator=(const LockClass&) = delete;

    /// The name it reports under (in lock-order reports).
    const char* name() const { return m_name; }

    /// The lock-order graph's node for this lock's class (lock_order.h),
    /// assigned at the first acquisition; ~0u for none yet or untracked.
    unsigned order_node() const { return m_order_node; }

  private:
    friend unsigned lock_order_node(LockClass& lock);

    const char* m_name;
    unsigned m_order_node = ~0u;
    bool m_order_assigned = false;
};

/// A lock between CPUs for a short critical section, taken with interrupts
/// masked; it names its holder and counts what it cost.
class Spinlock : public LockClass {
  public:
    constexpr explicit Spinlock(const char* name) : LockClass(name) {}

    /// Masks interrupts, checks the lock order, and spins until the lock is
    /// ours. Inline for the usual case, the first lock this CPU takes, free,
    /// with no sleeping lock held (nothing to check the order against: the
    /// lock is only noted); the rest is lock_slow's.
#ifdef TOLL_HOST_TEST
    void lock(); // the host tests' stub, on no CPU of the kernel's
#else
    void lock()
    {
        uintptr_t where = arch::code_address_here();
        bool were = arch::interrupts_disable();
        Cpu& cpu = this_cpu();
        if (__builtin_expect(cpu.spin_depth == 0 && order_node() != ~0u &&
                                 !(cpu.mutexes && cpu.mutexes->depth) &&
                                 __atomic_exchange_n(&m_locked, 1, __ATOMIC_ACQUIRE) == 0,
                             1)) {
            cpu.spin_depth = 1;
            cpu.spin_interrupts_were = were;
            cpu.held[0] = HeldLock{this, where};
            ++m_acquisitions;
            m_holder_where = where;
            __atomic_store_n(&m_holder_cpu, static_cast<int>(cpu.id), __ATOMIC_RELAXED);
            return;
        }
        lock_slow(where, were);
    }
#endif

    /// Releases the lock; the outermost release restores interrupts. Inline
    /// for the usual case, the last lock this CPU took released first by its
    /// holder; anything else (another order, a release by a CPU that does
    /// not hold it, which panics) is unlock_slow's.
#ifdef TOLL_HOST_TEST
    void unlock(); // the host tests' stub, on no CPU of the kernel's
#else
    void unlock()
    {
        Cpu& cpu = this_cpu();
        uintptr_t depth = cpu.spin_depth;
        if (__builtin_expect(__atomic_load_n(&m_holder_cpu, __ATOMIC_RELAXED) !=
                                     static_cast<int>(cpu.id) ||
                                 depth - 1 >= k_max_held_locks || cpu.held[depth - 1].lock != this,
                             0)) {
            unlock_slow();
            return;
        }
        cpu.held[depth - 1].lock = nullptr; // its where is dead: the next acquisition writes both
        m_holder_where = 0;
        __atomic_store_n(&m_holder_cpu, -1, __ATOMIC_RELAXED);
        __atomic_store_n(&m_locked, 0, __ATOMIC_RELEASE);
        cpu.spin_depth = depth - 1;
        if (depth == 1)
            arch::interrupts_restore(cpu.spin_interrupts_were);
    }
#endif

    /// True when this CPU holds the lock.
    bool held_here() const;

    /// The CPU number holding it, or -1.
    int holder_cpu() const
    {
        return __atomic_load_n(&m_holder_cpu, __ATOMIC_RELAXED);
    }
    /// Where the holder called lock() (its return address), or 0.
    uintptr_t holder_where() const
    {
        return m_holder_where;
    }
    /// How often the lock was taken.
    uint64_t acquisitions() const
    {
        return m_acquisitions;
    }
    /// How many of those found it held and had to wait.
    uint64_t contended() const
    {
        return m_contended;
    }
    /// Turns of the wait loop, summed over the contended acquisitions.
    uint64_t spins() const
    {
        return m_spins;
    }

    /// For the watchdog's test: marks the lock held by CPU @p cpu, which
    /// will never release it, as a CPU that died holding it would.
    void plant_holder_for_test(int cpu);

  private:
    // lock() for a lock taken under another, a sleeping lock, or held
    // already; interrupts are masked (they were enabled when @p were).
    [[gnu::noinline]] void lock_slow(uintptr_t where, bool were);
    // unlock() for a lock released out of order, or by a CPU not holding it.
    [[gnu::noinline]] void unlock_slow();
    // The wait loop, out of line: it counts the contended acquisition.
    [[gnu::noinline]] void spin(uintptr_t where);
    // The watchdog's report (k_watchdog_spins): panics.
    [[noreturn]] [[gnu::noinline]] void watchdog(uintptr_t where, uint64_t spins);

    uint32_t m_locked = 0;
    int m_holder_cpu = -1;
    uintptr_t m_holder_where = 0;
    uint64_t m_acquisitions = 0;
    uint64_t m_contended = 0;
    uint64_t m_spins = 0;
};

/// The watchdog: a CPU that has turned the wait loop this often, with its
/// interrupts masked, is taken to be stuck (the holder will never let go: a
/// deadlock, or a holder that stopped) and panics, naming itself, the lock,
/// its holder and its own backtrace, instead of hanging without a word.
/// The default, 2^26 turns, is a second or more under QEMU and far more than
/// any critical section of Toll's takes; `lock.watchdog=N` on the command
/// line sets it to 2^N turns (the watchdog's test uses a small one).
constexpr unsigned k_watchdog_shift = 26;

/// Holds @p lock for the lifetime of the guard.
class [[nodiscard]] SpinGuard {
  public:
    explicit SpinGuard(Spinlock& lock) : m_lock(lock) { m_lock.lock(); }
    ~SpinGuard() { m_lock.unlock(); }
    SpinGuard(const SpinGuard&) = delete;
    SpinGuard& operator=(const SpinGuard&) = delete;

  private:
    Spinlock& m_lock;
};

/// The lock-order check of one acquisition (called by Spinlock::lock with
/// interrupts off, before it spins): panics on an inversion or on a lock
/// this CPU holds already, then pushes @p lock on this CPU's held list.
/// The current thread's sleeping locks (mutex.h) count as held before it.
void lock_order_acquire(Cpu& cpu, Spinlock& lock, uintptr_t where);

/// @p lock's node in the order graph, assigned (by its name) on first use.
unsigned lock_order_node(LockClass& lock);

/// The order check of a sleeping lock's acquisition by a thread holding
/// @p held (its sleeping locks, taken at @p held_where, @p count of them):
/// panics on an inversion or on a lock among them already.
void lock_order_acquire_sleeping(LockClass& lock, uintptr_t where, LockClass* const* held,
                                 const uintptr_t* held_where, unsigned count);

/// Reports (panics with) a lock-order violation described by @p fmt; the
/// ktests' hook (lock_order_set_hook_for_test) catches it instead.
[[gnu::format(printf, 1, 2)]] void lock_order_violation(const char* fmt, ...);

/// Panics when this CPU holds a spinlock: about to sleep or switch away,
/// which would leave the lock held by a thread that is not running. The
/// test is inline (it is on every sleep); the report is not.
void lock_order_check_sleep_slow(const char* what);
inline void lock_order_check_sleep(const char* what)
{
    if (arch::cpu_local_word<offsetof(Cpu, spin_depth)>())
        lock_order_check_sleep_slow(what);
}

/// For the ktests: while set, a lock-order violation calls @p hook with the
/// message that would have panicked, and the acquisition goes on.
using LockOrderHook = void (*)(const char* message);
void lock_order_set_hook_for_test(LockOrderHook hook);

/// The lock-order graph's size: nodes (locks seen) and edges (orders seen).
unsigned lock_order_nodes();
unsigned lock_order_edges();

} // namespace toll
