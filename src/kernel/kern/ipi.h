// Inter-processor interrupts: one CPU asks another to do something now. The
// sender sets a reason bit in the target's Cpu::ipi_pending and has the port
// interrupt it (arch::send_ipi); the target's handler takes every pending bit
// at once, so two requests before it runs cost one interrupt.
#pragma once

namespace toll {

/// Why a CPU is interrupted: bit flags, several may be pending together.
enum class IpiReason : unsigned {
    reschedule = 1, ///< run the scheduler on the way out of the interrupt
    stop = 2,       ///< halt for good, interrupts off (another CPU panicked)
    call = 4,       ///< run the function ipi_call left in the target's Cpu
    tlb = 8,        ///< run the port's TLB shootdown handler (ipi_set_tlb_handler)
};

/// Asks CPU @p cpu_id (online) for @p why: sets the bit in its pending word,
/// then interrupts it. Counted as ipi.sent on this CPU.
void ipi_send(unsigned cpu_id, IpiReason why);

/// The port's IPI handler calls this, interrupts off, inside an
/// InterruptScope: takes this CPU's pending bits and acts on them
/// (reschedule sets the current thread's need_resched, which the preempt
/// point on the way out honours; stop never returns). Counted as
/// ipi.received here.
void ipi_received();

/// Has CPU @p cpu_id (online, not this one) run @p fn(@p arg) in its IPI
/// handler, interrupts off, and returns without waiting for it: the caller
/// learns of the end through what @p fn writes. One call at a time per
/// target: a second before the first ran would replace it. For tests that
/// need code on several CPUs at once (the locks lab's).
void ipi_call(unsigned cpu_id, void (*fn)(void*), void* arg);

/// Sets what IpiReason::tlb runs on its target: a port whose TLB
/// shootdown needs the other CPUs' help (i386, by IPI) registers its handler
/// once at boot. The sender of the IPI waits, interrupts off, for the target
/// to acknowledge, so the handler must not take a lock.
void ipi_set_tlb_handler(void (*handler)());

/// Takes this CPU's pending IpiReason::tlb request, if any, now: called by a
/// CPU that waits with interrupts off (a spinlock's waiter, a shootdown's
/// initiator), since the CPU it waits for may be waiting for it.
void ipi_poll();

/// Stops every other online CPU (panic() calls this before it reports) and
/// returns how many took the stop within a short wait (a CPU spinning with
/// interrupts masked cannot).
unsigned ipi_stop_others();

} // namespace toll
