// The global descriptor table and the task-state segment: flat 4 GB code and
// data segments for kernel and user, one TSS, and the user TLS slot.
#include "arch/i386/cpu.h"
#include "arch/i386/trampoline.h"
#include "lib/string.h"

namespace toll::i386 {
namespace {

// Intel SDM Vol. 3, 3.4.5 and 3.5: access byte and flag bits.
constexpr uint8_t k_present = 0x80, k_dpl3 = 0x60, k_code_or_data = 0x10;
constexpr uint8_t k_code_readable = 0x0A, k_data_writable = 0x02;
constexpr uint8_t k_tss_available = 0x09;
constexpr uint8_t k_gran_4k_32bit = 0xC0;

// The GDT and TSS live in the trampoline: the CPU reads them in user mode
// too (segment loads, the stack switch on a trap), whichever CR3 is loaded.
alignas(8) TOLL_TRAMPOLINE_DATA SegmentDescriptor g_gdt[k_gdt_count];
TOLL_TRAMPOLINE_DATA Tss g_tss;

SegmentDescriptor make(uint32_t base, uint32_t limit, uint8_t access, uint8_t flags)
{
    return SegmentDescriptor{static_cast<uint16_t>(limit & 0xFFFF),
                             static_cast<uint16_t>(base & 0xFFFF),
                             static_cast<uint8_t>((base >> 16) & 0xFF),
                             access,
                             static_cast<uint8_t>(((limit >> 16) & 0x0F) | flags),
                             static_cast<uint8_t>(base >> 24)};
}

} // namespace

SegmentDescriptor* gdt()
{
    return g_gdt;
}

Tss& boot_tss()
{
    return g_tss;
}

void gdt_init()
{
    g_gdt[k_gdt_kernel_code] =
        make(0, 0xFFFFF, k_present | k_code_or_data | k_code_readable, k_gran_4k_32bit);
    g_gdt[k_gdt_kernel_data] =
        make(0, 0xFFFFF, k_present | k_code_or_data | k_data_writable, k_gran_4k_32bit);
    g_gdt[k_gdt_user_code] =
        make(0, 0xFFFFF, k_present | k_dpl3 | k_code_or_data | k_code_readable, k_gran_4k_32bit);
    g_gdt[k_gdt_user_data] =
        make(0, 0xFFFFF, k_present | k_dpl3 | k_code_or_data | k_data_writable, k_gran_4k_32bit);
    memset(&g_tss, 0, sizeof g_tss);
    g_tss.ss0 = k_kernel_ds;
    g_tss.iomap_base = sizeof(Tss); // no I/O bitmap: user port I/O faults
    g_gdt[k_gdt_tss] =
        make(reinterpret_cast<uint32_t>(&g_tss), sizeof(Tss) - 1, k_present | k_tss_available, 0);

    TableRegister gdtr{sizeof g_gdt - 1, reinterpret_cast<uint32_t>(g_gdt)};
    asm volatile("lgdt %0\n\t"
                 "ljmp %1, $1f\n"
                 "1:\n\t"
                 "movw %w2, %%ds\n\t"
                 "movw %w2, %%es\n\t"
                 "movw %w2, %%ss\n\t"
                 "xorl %%eax, %%eax\n\t"
                 "movw %%ax, %%fs\n\t"
                 "movw %%ax, %%gs\n\t"
                 :
                 : "m"(gdtr), "i"(k_kernel_cs), "r"(static_cast<uint32_t>(k_kernel_ds))
                 : "eax", "memory");
    asm volatile("ltr %w0" : : "r"(selector(k_gdt_tss)));
}

void tss_set_kernel_stack(uint32_t esp0)
{
    g_tss.esp0 = esp0;
}

void gdt_set_user_tls(const arch::TlsSegment& tls)
{
    // Most switches go between threads with the same kind of TLS segment (or
    // none); skip the rewrite when the entry already says the same thing.
    static arch::TlsSegment s_loaded;
    if (tls.base == s_loaded.base && tls.limit == s_loaded.limit && tls.access == s_loaded.access &&
        tls.flags == s_loaded.flags)
        return;
    s_loaded = tls;
    g_gdt[k_gdt_user_tls] =
        tls.present() ? make(tls.base, tls.limit, tls.access, tls.flags) : SegmentDescriptor{};
}

} // namespace toll::i386
