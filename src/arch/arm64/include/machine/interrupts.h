// arm64's interrupt mask, inline: the spinlocks mask and restore on every
// acquisition, where a call each way would cost more than the lock itself
// (and where each lock was taken, which they record).
// PSTATE.I, read as DAIF bit 7 (Arm ARM C5.2.2), masks IRQs; DAIFSet and
// DAIFClr with immediate 2 (the I bit of their 4-bit field) set and clear it.
#pragma once
#include <stdint.h>

namespace toll::arch {

/// DAIF.I, the IRQ mask bit (Arm ARM C5.2.2).
constexpr uint64_t k_daif_irq_mask = 1u << 7;

inline bool interrupts_disable()
{
    uint64_t daif;
    asm volatile("mrs %0, daif; msr daifset, #2" : "=r"(daif)::"memory");
    return !(daif & k_daif_irq_mask);
}

inline void interrupts_restore(bool were_enabled)
{
    if (were_enabled)
        asm volatile("msr daifclr, #2" ::: "memory");
}

/// An address inside the calling code (inline: the caller's own), which
/// the spinlocks record as where a lock was taken: ADR of the instruction
/// itself.
inline uintptr_t code_address_here()
{
    uintptr_t pc;
    asm volatile("adr %0, ." : "=r"(pc));
    return pc;
}

} // namespace toll::arch
