// i386's interrupt mask, inline: the spinlocks mask and restore on every
// acquisition, where a call each way would cost more than the lock itself
// (and where each lock was taken, which they record).
// EFLAGS.IF (bit 9, Intel SDM Vol. 1, 3.4.3.3) says whether maskable
// interrupts are taken; cli and sti clear and set it.
#pragma once
#include <stdint.h>

namespace toll::arch {

/// EFLAGS.IF, the interrupt enable flag (Intel SDM Vol. 1, 3.4.3.3).
constexpr uint32_t k_eflags_interrupt_enable = 1u << 9;

inline bool interrupts_disable()
{
    uint32_t flags;
    asm volatile("pushfl; popl %0; cli" : "=r"(flags)::"memory");
    return flags & k_eflags_interrupt_enable;
}

inline void interrupts_restore(bool were_enabled)
{
    if (were_enabled)
        asm volatile("sti" ::: "memory");
}

/// An address inside the calling code (inline: the caller's own), which
/// the spinlocks record as where a lock was taken. The kernel is linked at
/// a fixed address, so the label's absolute address is an immediate.
inline uintptr_t code_address_here()
{
    uintptr_t pc;
    asm volatile("movl $1f, %0\n1:" : "=r"(pc));
    return pc;
}

} // namespace toll::arch
