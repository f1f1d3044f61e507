// Threads and the scheduler: preemptive run queues, one per CPU, sleep and
// wakeup on channels, kernel threads. A user thread belongs to a process
// (Thread::process), which may have several (process.h). The scheduler's
// own state is under spinlocks (sched.cpp); policies and affinity are in
// sched.h.
#pragma once
#include "kernel/arch/context.h"
#include "kernel/arch/physmem.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/errno.h"
#include "kernel/proc/signal.h"
#include <stddef.h>
#include <stdint.h>

namespace toll {
class Spinlock;
} // namespace toll

namespace toll::proc {

struct Process;

enum class ThreadState { runnable, running, sleeping, dead };

/// exit_work bits, one for each kind of work on the way back to user mode,
/// so that the usual return tests one byte. k_exit_restart: the last system
/// call was interrupted by a signal (it returned ERESTARTSYS) and runs again
/// or returns EINTR on the way out. k_exit_check_frame: the user frame may
/// no longer be restorable, because the program wrote it (sigreturn) or
/// changed a descriptor it names (i386's set_thread_area); a frame the CPU
/// saved at a trap holds only what the CPU had loaded, so these are the only
/// two ways. k_exit_suspend: sigsuspend is returning, its temporary mask to
/// be undone. k_exit_signal: a signal is pending for the thread or its
/// process (set with the pending bit, cleared when none is left), the
/// process is stopped, or the thread must exit (Thread::must_exit). k_exit_child_settid: a thread
/// made by clone(CLONE_CHILD_SETTID) stores its id in its own memory before
/// its first instruction (Linux does it in schedule_tail, for the same
/// reason: only the child's address space holds the word).
constexpr uint8_t k_exit_restart = 1, k_exit_check_frame = 2, k_exit_suspend = 4, k_exit_signal = 8,
                  k_exit_child_settid = 16;

/// A kernel-schedulable thread: its own kernel stack and saved context. The
/// port owns @c context (its registers, opaque here); everything else is the
/// core's, the fields the trap and signal paths share included.
struct Thread {
    arch::ThreadContext context; ///< Saved registers while switched out (the architecture's).
    /// Where the kernel stack ends (it is k_kstack_size long): a trap from
    /// user mode starts there. 0 for the boot thread, which never leaves the
    /// kernel. A port's context_switch reads it from the thread it switches
    /// to (thread_of), where it points the CPU's trap stack.
    uintptr_t kstack_top = 0;
    arch::TrapFrame* frame = nullptr; ///< A user thread's trap frame, at the top of its stack.
    uint8_t exit_work = 0;            ///< k_exit_* bits: work for the way back to user mode
    /// Set by the clock when others wait: switch at the next chance. Beside
    /// exit_work, so that the way out of a trap tests both in one word
    /// (exit_pending).
    bool need_resched = false;
    uintptr_t syscall_saved = 0; ///< k_exit_restart: the register the result overwrote
    ThreadState state = ThreadState::runnable; ///< Where the scheduler has it.
    const void* wait_channel = nullptr;        ///< What it sleeps on (sleep_on); nullptr otherwise.
    uint64_t wake_tick = 0;                    ///< For timed sleeps; 0 when none.
    Thread* next = nullptr;                    ///< Run-queue link.
    Process* process = nullptr;                ///< nullptr for a kernel thread.
    bool preemptible = false;                  ///< A kernel thread that runs with interrupts on.
    uint64_t switches_in = 0;                  ///< How often it was switched to.
    MutexesHeld mutexes;                       ///< The sleeping locks it holds (proc/mutex.h).
    // Scheduling (sched.cpp), under the run-queue lock of CPU @c cpu.
    uint32_t affinity = ~0u;       ///< CPUs it may run on, bit n for CPU n
    unsigned cpu = 0;              ///< the CPU it runs on, is queued on or last ran on
    unsigned last_ran = 0;         ///< the CPU it last ran on (a change counts a migration)
    bool on_cpu = false;           ///< its registers are live on CPU @c cpu, or being saved
    bool queued = false;           ///< on CPU @c cpu's run queue
    uint8_t level = 0;             ///< its MLFQ level, 0 the highest
    uint32_t slice_used = 0;       ///< ticks used of its quantum (MLFQ: of its level's allotment)
    uint64_t ticks_run = 0;        ///< clock ticks that found it running
    char name[16] = {};            ///< For the console.
    int id = 0;                    ///< Unique number, for the console.
    int tid = 0;                   ///< Linux's thread id (gettid); the first thread's is the pid.
    uintptr_t clear_child_tid = 0; ///< set_tid_address: user word zeroed, futex woken, at exit
    uintptr_t set_child_tid = 0;   ///< k_exit_child_settid: where the id goes
    bool vfork_waiting = false;    ///< in vfork: until the child execs or exits
    ThreadSignals sig;             ///< its mask, the signals sent to it, its altstack
    Thread* peer = nullptr;        ///< the next thread of its process (Process::threads)
    bool must_exit = false;        ///< its process ends or execs: it exits on its way to user mode
};

/// Sets @p bits in @p t's exit_work. Another CPU may set bits of a thread's
/// exit_work (a signal sent to it) while the thread clears its own, so both
/// are atomic read-modify-writes: a plain `|=` racing a plain `&=` loses one.
inline void exit_work_set(Thread& t, uint8_t bits)
{
    __atomic_or_fetch(&t.exit_work, bits, __ATOMIC_SEQ_CST);
}

/// Clears @p bits in @p t's exit_work (exit_work_set says why atomically).
inline void exit_work_clear(Thread& t, uint8_t bits)
{
    __atomic_and_fetch(&t.exit_work, static_cast<uint8_t>(~bits), __ATOMIC_SEQ_CST);
}

/// Size of every kernel stack.
constexpr size_t k_kstack_size = 16384;
/// The page order of a thread's kernel stack (thread_alloc): 2^order pages.
constexpr unsigned k_kstack_order = arch::k_page_shift < 14 ? 14 - arch::k_page_shift : 0;
static_assert(arch::k_page_size << k_kstack_order == k_kstack_size);

/// The lowest address of @p t's kernel stack.
inline uintptr_t kstack_base(const Thread& t)
{
    return t.kstack_top - k_kstack_size;
}

/// The thread whose saved registers are @p ctx. A port's context_switch is
/// handed only the two threads' contexts; through this it reads what the
/// core keeps for the thread it switches to (kstack_top) at the cost of a
/// load, since @c context is the thread's first member.
inline const Thread& thread_of(const arch::ThreadContext& ctx)
{
    static_assert(__builtin_offsetof(Thread, context) == 0, "thread_of needs context first");
    return reinterpret_cast<const Thread&>(ctx);
}

/// The thread running now, on this CPU.
inline Thread* current()
{
    return this_cpu_current();
}

/// Starts the scheduler on the boot stack: turns the boot flow into the
/// first thread ("boot"), and creates the idle thread.
void sched_init();

/// Makes the start-up flow of a CPU other than the boot CPU, on its
/// start-up stack (whose lowest address is @p stack_base), that CPU's idle
/// and current thread. Call it before the CPU says it is online, so that
/// whoever sees it online sees its idle thread too.
void sched_init_secondary(uintptr_t stack_base);

/// Ends the start-up of a CPU other than the boot CPU (after
/// sched_init_secondary): it becomes its idle loop, which runs what is
/// queued on it and steals from the busiest CPU. Does not return.
[[noreturn]] void sched_idle_secondary();

/// Creates a runnable kernel thread running fn(arg). Returns nullptr when
/// memory is short.
Thread* thread_create_kernel(const char* name, void (*fn)(void*), void* arg, bool preemptible);

/// Allocates a thread with a kernel stack for a user process; not yet runnable.
Thread* thread_alloc(const char* name);

/// Makes @p t runnable: queues it on a CPU it may run on (sched.cpp says which).
void make_runnable(Thread* t);

/// Gives up the CPU to the next runnable thread, if any.
void yield();

/// Sleeps on @p channel until wakeup(channel) (or the tick @p wake_tick, if
/// non-zero). The caller rechecks its condition on return. Channels hash to
/// a fixed set of wait queues (proc/sleep.cpp).
void sleep_on(const void* channel, uint64_t wake_tick = 0);

/// sleep_on with @p held, a spinlock that guards the caller's condition,
/// released while asleep and taken again before it returns: the caller
/// checks the condition under @p held, and a waker that changes it under
/// @p held cannot slip its wakeup in before the sleep (the lost wake-up).
void sleep_on(const void* channel, Spinlock& held, uint64_t wake_tick = 0);

/// The two sleeps for callers that give up on a signal (they check
/// interrupted() before sleeping and after): a signal sent from another CPU
/// while the caller gets ready to sleep is not lost, the sleep then returns
/// at once.
void sleep_on_interruptible(const void* channel, uint64_t wake_tick = 0);
void sleep_on_interruptible(const void* channel, Spinlock& held, uint64_t wake_tick = 0);

/// Wakes every thread sleeping on @p channel.
void wakeup(const void* channel);

/// Wakes the timed sleepers whose tick has come (from the clock interrupt).
void sleep_clock_tick(uint64_t now);

/// Gives up the CPU with the current thread asleep: for the wait queues,
/// which have set its state and queued it, with interrupts off. It runs
/// again once a waker passes it to make_runnable; a waker that comes before
/// the thread is off this CPU (its on_cpu flag) queues it here again, and
/// the switch picks it up.
void block();

/// Ends the current thread; another thread frees its stack.
[[noreturn]] void thread_exit();

/// Frees a dead thread's stack and descriptor (not the current thread).
void thread_free(Thread* t);

/// Called from the clock interrupt: counts a tick, wakes timed sleepers and
/// marks the current thread for preemption at the end of its quantum.
void sched_clock_tick();

/// Called by the arch on the way out of a trap: switches if the current thread
/// should give up the CPU and the trap came from user mode (or a preemptible
/// kernel thread).
void sched_preempt_point(bool from_user);

/// Whether sched_preempt_point may have work: the current thread was asked
/// to give up the CPU (need_resched). Inline, so that the way out of a trap
/// (trap_exit) tests one byte and calls only when it must; whatever else
/// sched_preempt_point checks, it checks itself.
inline bool sched_preempt_wanted()
{
    return current()->need_resched;
}

/// Whether the way out of a trap has anything to do for @p t: its exit_work
/// bits and its need_resched, read as one 16-bit word (Linux's exit-to-user
/// loop tests its thread-info flags the same way). Zero, the usual case,
/// costs the return one load and one branch.
inline uint16_t exit_pending(const Thread& t)
{
    static_assert(offsetof(Thread, need_resched) == offsetof(Thread, exit_work) + 1 &&
                      sizeof(bool) == 1 && offsetof(Thread, exit_work) % 2 == 0,
                  "exit_work and need_resched make one aligned 16-bit word");
    uint16_t word;
    __builtin_memcpy(&word, &t.exit_work, sizeof word);
    return word;
}

/// Clock ticks since boot.
uint64_t ticks();

} // namespace toll::proc
