// i386 descriptor tables and the privileged registers the port touches: GDT
// selectors, the TSS, control registers. Intel SDM Vol. 3, chapters 2-3 and 7.
#pragma once
#include "kernel/kern/cpu.h"
#include "machine/context.h"
#include <stdint.h>

namespace toll::i386 {

// GDT slots. Intel SDM Vol. 3, 3.4.2: selector = index << 3 | RPL.
enum GdtSlot : uint16_t {
    k_gdt_null = 0,
    k_gdt_kernel_code = 1,
    k_gdt_kernel_data = 2,
    k_gdt_user_code = 3,
    k_gdt_user_data = 4,
    k_gdt_tss = 5,
    k_gdt_user_tls = 6, ///< set_thread_area's entry, reloaded on every switch
    k_gdt_double_fault_tss = 7,
    k_gdt_percpu = 8, ///< base: this CPU's toll::Cpu; %fs in the kernel (machine/cpu_local.h)
    k_gdt_count = 9,
};
constexpr uint16_t selector(GdtSlot slot, unsigned rpl = 0)
{
    return static_cast<uint16_t>(slot << 3 | rpl);
}
constexpr uint16_t k_kernel_cs = selector(k_gdt_kernel_code);
constexpr uint16_t k_kernel_ds = selector(k_gdt_kernel_data);
constexpr uint16_t k_user_cs = selector(k_gdt_user_code, 3);
constexpr uint16_t k_user_ds = selector(k_gdt_user_data, 3);
constexpr uint16_t k_percpu_sel = selector(k_gdt_percpu);

/// A segment descriptor in the GDT (Intel SDM Vol. 3, 3.4.5).
struct [[gnu::packed]] SegmentDescriptor {
    uint16_t limit_low;
    uint16_t base_low;
    uint8_t base_mid;
    uint8_t access;
    uint8_t limit_high_flags;
    uint8_t base_high;
};

/// An IDT gate descriptor (Intel SDM Vol. 3, 6.11, Figure 6-2).
struct [[gnu::packed]] Gate {
    uint16_t offset_low;
    uint16_t selector;
    uint8_t zero;
    uint8_t type_attr;
    uint16_t offset_high;
};
/// Its type byte: present, a 32-bit interrupt gate (DPL 0); or'ed with
/// k_gate_dpl3, user mode may raise the vector itself (int n).
constexpr uint8_t k_gate_interrupt32 = 0x8E, k_gate_dpl3 = 0x60;

/// An interrupt gate to @p handler in the kernel code segment.
constexpr Gate interrupt_gate(uint32_t handler, uint8_t type_attr = k_gate_interrupt32)
{
    return Gate{static_cast<uint16_t>(handler & 0xFFFF), k_kernel_cs, 0, type_attr,
                static_cast<uint16_t>(handler >> 16)};
}

/// The operand of lgdt, lidt, sgdt and sidt (Intel SDM Vol. 3, 2.4.1 and
/// 2.4.3): a descriptor table's limit and linear base address.
struct [[gnu::packed]] TableRegister {
    uint16_t limit;
    uint32_t base;
};

/// The 32-bit task-state segment (Intel SDM Vol. 3, 7.2.1).
struct [[gnu::packed]] Tss {
    uint32_t prev_task;
    uint32_t esp0, ss0, esp1, ss1, esp2, ss2;
    uint32_t cr3, eip, eflags, eax, ecx, edx, ebx, esp, ebp, esi, edi;
    uint32_t es, cs, ss, ds, fs, gs, ldt;
    uint16_t trap, iomap_base;
};

/// Builds the GDT and TSS of the CPU @p cpu (each CPU has its own, so that
/// the per-CPU descriptor and the TSS are its own under the same selectors),
/// loads them, and points %fs at @p cpu. Called once on each CPU.
void gdt_init(toll::Cpu& cpu);

/// Every CPU's TSS, by Cpu::id (gdt.cpp).
extern Tss g_cpu_tss[k_max_cpus];

/// What each CPU's user TLS descriptor says now, by Cpu::id (gdt.cpp).
extern arch::TlsSegment g_tls_loaded[k_max_cpus];

/// Sets the kernel stack this CPU switches to on a trap from user mode.
/// Inline: every thread switch under the 3/1 layout does it.
inline void tss_set_kernel_stack(uint32_t esp0)
{
    g_cpu_tss[arch::cpu_local_word<offsetof(Cpu, id)>()].esp0 = esp0;
}

/// gdt_set_user_tls's rewrite of CPU @p cpu's descriptor to @p tls.
void gdt_write_user_tls(uintptr_t cpu, const arch::TlsSegment& tls);

/// Writes this CPU's user TLS descriptor (set_thread_area); an empty @p tls
/// clears it. Most switches go between threads with the same kind of TLS
/// segment (or none), so the test that the entry already says the same
/// thing is inline, and only a change calls gdt_write_user_tls.
inline void gdt_set_user_tls(const arch::TlsSegment& tls)
{
    uintptr_t id = arch::cpu_local_word<offsetof(Cpu, id)>();
    const arch::TlsSegment& loaded = g_tls_loaded[id];
    if (tls.base != loaded.base || tls.limit != loaded.limit || tls.access != loaded.access ||
        tls.flags != loaded.flags)
        gdt_write_user_tls(id, tls);
}

/// The boot CPU's TSS.
Tss& boot_tss();

/// The boot CPU's GDT (the vm86 and double-fault code patch descriptors).
SegmentDescriptor* gdt();

/// The GDT and the TSS of the CPU numbered @p cpu_id (Cpu::id).
SegmentDescriptor* gdt_of(unsigned cpu_id);
Tss& tss_of(unsigned cpu_id);

inline uint32_t read_cr0()
{
    uint32_t v;
    asm volatile("movl %%cr0, %0" : "=r"(v));
    return v;
}
inline void write_cr0(uint32_t v)
{
    asm volatile("movl %0, %%cr0" : : "r"(v) : "memory");
}
inline uint32_t read_cr2()
{
    uint32_t v;
    asm volatile("movl %%cr2, %0" : "=r"(v));
    return v;
}
inline uint32_t read_cr3()
{
    uint32_t v;
    asm volatile("movl %%cr3, %0" : "=r"(v));
    return v;
}
inline uint32_t read_cr4()
{
    uint32_t v;
    asm volatile("movl %%cr4, %0" : "=r"(v));
    return v;
}
inline void write_cr4(uint32_t v)
{
    asm volatile("movl %0, %%cr4" : : "r"(v) : "memory");
}

} // namespace toll::i386
