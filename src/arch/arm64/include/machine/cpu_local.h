// arm64's per-CPU pointer: TPIDR_EL1, a register only EL1 can read or
// write (Arm ARM D13.2.141), holds the address of this CPU's toll::Cpu.
// TPIDR_EL0 stays the user's thread pointer.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

inline void* cpu_local()
{
    void* self;
    // Volatile: a thread may read it, sleep, and wake on another CPU.
    asm volatile("mrs %0, tpidr_el1" : "=r"(self));
    return self;
}

/// The word at byte @p Offset of this CPU's block.
template <size_t Offset>
inline uintptr_t cpu_local_word()
{
    return *reinterpret_cast<const volatile uintptr_t*>(static_cast<char*>(cpu_local()) + Offset);
}

} // namespace toll::arch
