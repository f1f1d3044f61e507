// The global descriptor tables and task-state segments, one of each per CPU:
// flat 4 GB code and data segments for kernel and user, the CPU's TSS, the
// user TLS slot, and the per-CPU segment whose base is the CPU's toll::Cpu.
#include "arch/i386/cpu.h"
#include "arch/i386/trampoline.h"
#include "kernel/kern/cpu.h"
#include "lib/string.h"

namespace toll::i386 {
namespace {

// Intel SDM Vol. 3, 3.4.5 and 3.5: access byte and flag bits.
constexpr uint8_t k_present = 0x80, k_dpl3 = 0x60, k_code_or_data = 0x10;
constexpr uint8_t k_code_readable = 0x0A, k_data_writable = 0x02;
constexpr uint8_t k_tss_available = 0x09;
constexpr uint8_t k_gran_4k_32bit = 0xC0;
constexpr uint8_t k_size_32bit = 0x40; // D/B set, G clear: a byte-granular 32-bit segment

// The GDT and TSS live in the trampoline: the CPU reads them in user mode
// too (segment loads, the stack switch on a trap), whichever CR3 is loaded.
alignas(8) TOLL_TRAMPOLINE_DATA SegmentDescriptor g_gdt[k_max_cpus][k_gdt_count];

SegmentDescriptor make(uint32_t base, uint32_t limit, uint8_t access, uint8_t flags)
{
    return SegmentDescriptor{static_cast<uint16_t>(limit & 0xFFFF),
                             static_cast<uint16_t>(base & 0xFFFF),
                             static_cast<uint8_t>((base >> 16) & 0xFF),
                             access,
                             static_cast<uint8_t>(((limit >> 16) & 0x0F) | flags),
                             static_cast<uint8_t>(base >> 24)};
}

// Cpu::id is read as one word through %fs.
static_assert(sizeof(Cpu::id) == sizeof(uintptr_t));

} // namespace

TOLL_TRAMPOLINE_DATA Tss g_cpu_tss[k_max_cpus];
arch::TlsSegment g_tls_loaded[k_max_cpus];

SegmentDescriptor* gdt()
{
    return g_gdt[0];
}

SegmentDescriptor* gdt_of(unsigned cpu_id)
{
    return g_gdt[cpu_id];
}

Tss& boot_tss()
{
    return g_cpu_tss[0];
}

Tss& tss_of(unsigned cpu_id)
{
    return g_cpu_tss[cpu_id];
}

void gdt_init(Cpu& cpu)
{
    SegmentDescriptor* table = g_gdt[cpu.id];
    // Where this CPU's exit to user mode builds its iret frame (trap_entry.S).
    cpu.port_word = trampoline_stack_top(cpu.id) - (TC_STACK_TOP - TC_EXIT_SP);
    Tss& tss = g_cpu_tss[cpu.id];
    table[k_gdt_kernel_code] =
        make(0, 0xFFFFF, k_present | k_code_or_data | k_code_readable, k_gran_4k_32bit);
    table[k_gdt_kernel_data] =
        make(0, 0xFFFFF, k_present | k_code_or_data | k_data_writable, k_gran_4k_32bit);
    table[k_gdt_user_code] =
        make(0, 0xFFFFF, k_present | k_dpl3 | k_code_or_data | k_code_readable, k_gran_4k_32bit);
    table[k_gdt_user_data] =
        make(0, 0xFFFFF, k_present | k_dpl3 | k_code_or_data | k_data_writable, k_gran_4k_32bit);
    memset(&tss, 0, sizeof tss);
    tss.ss0 = k_kernel_ds;
    tss.iomap_base = sizeof(Tss); // no I/O bitmap: user port I/O faults
    table[k_gdt_tss] =
        make(reinterpret_cast<uint32_t>(&tss), sizeof(Tss) - 1, k_present | k_tss_available, 0);
    // Byte granularity: the limit is the Cpu's size, so a stray %fs offset faults.
    table[k_gdt_percpu] = make(reinterpret_cast<uint32_t>(&cpu), sizeof(Cpu) - 1,
                               k_present | k_code_or_data | k_data_writable, k_size_32bit);

    TableRegister gdtr{sizeof(SegmentDescriptor) * k_gdt_count - 1,
                       reinterpret_cast<uint32_t>(table)};
    asm volatile("lgdt %0\n\t"
                 "ljmp %1, $1f\n"
                 "1:\n\t"
                 "movw %w2, %%ds\n\t"
                 "movw %w2, %%es\n\t"
                 "movw %w2, %%ss\n\t"
                 "movw %w3, %%fs\n\t"
                 "xorl %%eax, %%eax\n\t"
                 "movw %%ax, %%gs\n\t"
                 :
                 : "m"(gdtr), "i"(k_kernel_cs), "r"(static_cast<uint32_t>(k_kernel_ds)),
                   "r"(static_cast<uint32_t>(k_percpu_sel))
                 : "eax", "memory");
    asm volatile("ltr %w0" : : "r"(selector(k_gdt_tss)));
}

void gdt_write_user_tls(uintptr_t id, const arch::TlsSegment& tls)
{
    g_tls_loaded[id] = tls;
    g_gdt[id][k_gdt_user_tls] =
        tls.present() ? make(tls.base, tls.limit, tls.access, tls.flags) : SegmentDescriptor{};
}

} // namespace toll::i386
