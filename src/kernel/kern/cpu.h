// Per-CPU state: one Cpu per processor, reached through the port's per-CPU
// register (kernel/arch/cpu_local.h), never through a global. What one CPU
// is doing right now (its thread, its run queue, how deep in interrupts it
// is, which spinlocks it holds) lives here; the rest of the kernel is shared.
#pragma once
#include "kernel/arch/cpu_local.h"
#include <stddef.h>
#include <stdint.h>

namespace toll {

namespace proc {
struct Thread;
}
class Spinlock;

/// The most CPUs Toll brings up (tools/run --cpus accepts 1 to this).
constexpr unsigned k_max_cpus = 8;

/// The most spinlocks one CPU may hold at once (nested).
constexpr unsigned k_max_held_locks = 8;

/// The per-CPU event counts, kept per CPU without a lock and summed when read
/// (cpu_counter_sum, and CpuCounter::read for the COUNTER records).
enum class CpuEvent : unsigned {
    context_switches,
    preemptions,
    clock_ticks,
    interrupts,
    ipi_sent,             ///< inter-processor interrupts this CPU sent (kernel/kern/ipi.h)
    ipi_received,         ///< and those it took
    sched_migrations,     ///< a thread switched in on another CPU than last time
    sched_steals,         ///< an idle CPU took a thread from another's queue
    sched_balance_moves,  ///< the periodic balance moved a thread
    sched_wakeups_local,  ///< a sleeper woken by its own CPU
    sched_wakeups_remote, ///< a sleeper woken by another CPU
    sched_ipis,           ///< reschedule IPIs the scheduler sent
    count_,               ///< the number of events, not one of them
};

/// The most sleeping locks (proc/mutex.h) one thread may hold at once.
constexpr unsigned k_max_held_mutexes = 6;

class LockClass;

/// The sleeping locks one thread holds, in the order taken, and where it
/// took each: a thread's own (proc::Thread::mutexes), kept across its sleeps;
/// the CPU running it points at it (Cpu::mutexes), for the spinlocks' check.
struct MutexesHeld {
    unsigned depth = 0;
    LockClass* lock[k_max_held_mutexes] = {};
    uintptr_t where[k_max_held_mutexes] = {};
};

/// A spinlock this CPU holds, and where it took it.
struct HeldLock {
    const Spinlock* lock;
    uintptr_t where; ///< the return address of the Spinlock::lock() call
};

/// One processor's state.
struct Cpu {
    /// Points to this Cpu: i386 reads the per-CPU pointer as %fs:0, the
    /// first word of the segment. Must stay first.
    Cpu* self = nullptr;
    unsigned id = 0; ///< 0 for the boot CPU, then 1, 2, ... in start-up order
    /// One word the port keeps for its entry code, which reads it at a fixed
    /// offset (i386: where this CPU's exit to user mode builds its iret frame).
    uintptr_t port_word = 0;
    uint64_t hw_id = 0;  ///< the hardware's name for it: local APIC id or MPIDR affinity
    bool online = false; ///< running kernel code (set by the CPU itself)
    proc::Thread* current = nullptr; ///< the thread running on this CPU
    proc::Thread* idle = nullptr;    ///< runs when the run queue is empty
                                     // (the run queue itself: proc/sched.cpp)
    unsigned interrupt_depth = 0;    ///< > 0 inside an interrupt handler
    /// The IpiReason bits other CPUs have asked this one for and it has not
    /// yet taken (kernel/kern/ipi.h); set and taken with atomic operations.
    unsigned ipi_pending = 0;
    /// What IpiReason::call runs here, and its argument (ipi_call sets them).
    void (*ipi_call_fn)(void*) = nullptr;
    void* ipi_call_arg = nullptr;
    /// arch::cycle_counter() when this CPU last took an IPI (its cost, measured).
    uint64_t ipi_received_at = 0;
    /// How many spinlocks this CPU holds; while > 0 its interrupts are masked.
    uintptr_t spin_depth = 0; // a word: the sleep check reads it in one load
    /// The interrupt state the outermost spinlock saved, restored by its release.
    bool spin_interrupts_were = false;
    /// The sleeping locks of the thread running here (its MutexesHeld), or nullptr.
    const MutexesHeld* mutexes = nullptr;
    /// The spinlocks held, in the order taken, with where each was taken.
    HeldLock held[k_max_held_locks] = {};
    /// This CPU's event counts, indexed by CpuEvent; cpu_counter_sum adds them up.
    uint64_t events[static_cast<unsigned>(CpuEvent::count_)] = {};
};
static_assert(offsetof(Cpu, self) == 0, "i386 reads Cpu::self as %fs:0");

/// The CPU this code runs on. A thread that can be preempted may be on
/// another CPU by the next line; the scheduler's own state is read with
/// interrupts off.
inline Cpu& this_cpu()
{
    return *static_cast<Cpu*>(arch::cpu_local());
}

/// The thread running on this CPU: Cpu::current in one read of the
/// per-CPU block (proc::current() is this).
inline proc::Thread* this_cpu_current()
{
    return reinterpret_cast<proc::Thread*>(arch::cpu_local_word<offsetof(Cpu, current)>());
}

/// The Cpu with number @p id (0 <= id < k_max_cpus), online or not.
Cpu& cpu_by_id(unsigned id);

/// The number of CPUs online.
unsigned cpus_online();

/// Prepares the boot CPU's Cpu (number 0) for arch::cpu_init, which points
/// the per-CPU register at it.
Cpu& cpu_boot_prepare();

/// Takes the next Cpu for a CPU being started (number 1, 2, ...); nullptr
/// when all k_max_cpus are in use.
Cpu* cpu_allocate();

/// Called by a CPU on itself once its per-CPU register is set: it is online.
void cpu_mark_online(Cpu& cpu);

/// Counts one @p event on this CPU. Interrupts must be off or the caller
/// must not mind the count landing on the CPU it migrated from.
inline void cpu_count(CpuEvent event, uint64_t n = 1)
{
    this_cpu().events[static_cast<unsigned>(event)] += n;
}

/// The count of @p event summed over every CPU.
uint64_t cpu_counter_sum(CpuEvent event);

/// cpu_counter_sum(@p event) as a function without arguments: what a
/// TOLL_CPU_COUNTER computes when it is read (Counter::compute).
template <CpuEvent event>
uint64_t cpu_event_sum()
{
    return cpu_counter_sum(event);
}

/// Marks an interrupt handler for the lifetime of the guard
/// (Cpu::interrupt_depth).
class [[nodiscard]] InterruptScope {
  public:
    InterruptScope() : m_cpu(this_cpu())
    {
        ++m_cpu.interrupt_depth;
        m_cpu.events[static_cast<unsigned>(CpuEvent::interrupts)]++;
    }
    ~InterruptScope() { --m_cpu.interrupt_depth; }
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

  private:
    Cpu& m_cpu;
};

} // namespace toll
