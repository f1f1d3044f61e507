// i386's per-CPU pointer: in the kernel %fs holds the per-CPU selector
// (GdtSlot k_gdt_percpu), whose descriptor in this CPU's own GDT has the
// CPU's toll::Cpu as its base; the first word of a Cpu points to itself.
// The user's %fs and %gs are saved in the trap frame and come back on exit.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

inline void* cpu_local()
{
    void* self;
    // Volatile: a thread may read it, sleep, and wake on another CPU.
    asm volatile("movl %%fs:0, %0" : "=r"(self));
    return self;
}

/// The word at byte @p Offset of this CPU's block: one load through %fs.
template <size_t Offset>
inline uintptr_t cpu_local_word()
{
    uintptr_t word;
    asm volatile("movl %%fs:%c1, %0" : "=r"(word) : "i"(Offset));
    return word;
}

} // namespace toll::arch
