// i386's interrupt mask, inline: the spinlocks mask and restore on every
// acquisition, where a call each way would cost more than the lock itself.
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

} // namespace toll::arch
