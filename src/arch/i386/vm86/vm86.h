// The vm86 monitor's interface: BIOS calls from protected mode, made by running
// the BIOS's real-mode code as a virtual-8086 task (Intel SDM Vol. 3, ch. 20).
#pragma once
#include <stdint.h>

namespace toll::i386 {

/// The registers of a BIOS call, in and out. Segment registers are real-mode
/// paragraphs (linear address = segment * 16 + offset).
struct Vm86Regs {
    uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0, esi = 0, edi = 0, ebp = 0;
    uint16_t ds = 0, es = 0;
    uint32_t eflags = 0; ///< Out only: the flags the BIOS returned (CF = error).
};

/// EFLAGS.CF, the BIOS's error flag. Intel SDM Vol. 1, 3.4.3.
constexpr uint32_t k_eflags_cf = 1u << 0;

/// A 4 KB buffer below 1 MB that BIOS calls may read and write (E820 writes
/// its entries here): reach it from real mode as k_vm86_buffer_segment:0 and
/// from the kernel with vm86_buffer().
constexpr uint32_t k_vm86_buffer_phys = 0x2000;
constexpr uint16_t k_vm86_buffer_segment = k_vm86_buffer_phys >> 4;
constexpr uint32_t k_vm86_buffer_size = 4096;

/// What one call cost: the cycle counter (instructions in deterministic mode)
/// from entry to exit, and the #GP traps the monitor emulated.
struct Vm86CallCost {
    uint64_t cycles = 0;
    uint32_t traps = 0;
};

/// Prepares the monitor: the vm86 TSS and its I/O bitmap, the private IDT,
/// the low-memory page table. Needs the GDT (gdt_init) and nothing else, so
/// it can run in i386_boot before the direct map and the allocator exist.
void vm86_init();

/// Calls BIOS interrupt @p vector with @p regs, in virtual-8086 mode, and
/// stores the registers the BIOS returned in @p regs. Serialised and not
/// preemptible: interrupts stay off for the whole call. Returns false if the
/// BIOS did something the monitor does not emulate (the call is then
/// abandoned and reported on the console); the BIOS's own error is CF in
/// regs.eflags. CR3, TR, the TSS descriptors, PDE 0, IDTR, the segment
/// registers and IF are what they were when it returns. @p cost, if given,
/// receives what the call cost.
bool vm86_intcall(uint8_t vector, Vm86Regs& regs, Vm86CallCost* cost = nullptr);

/// The kernel's view of the buffer at k_vm86_buffer_phys.
uint8_t* vm86_buffer();

} // namespace toll::i386
