// Turning on the arm64 MMU: the kernel's identity tables, the memory
// attributes and translation controls, and the TLB and cache operations the
// pmap (pmap.cpp) needs.
#include "arch/arm64/mmu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/vm/kmem.h"

namespace toll::arm64 {
namespace {

alignas(k_page_size) uint64_t g_kernel_l1[k_entries];
// Level-2 tables for the kernel's blocks: at 4 KB one for the devices' gigabyte
// and one for RAM's; at 16 KB a level-1 entry spans 64 GB and one table holds both.
constexpr unsigned k_kernel_l2_tables = 2;
alignas(k_page_size) uint64_t g_kernel_l2[k_kernel_l2_tables][k_entries];
unsigned g_kernel_l2_used;

TOLL_COUNTER(g_table_loads, "vm.pmap.ttbr0_loads");
TOLL_COUNTER(g_page_flushes, "vm.pmap.tlb_page_flushes");

// Arm ARM D13.2.120, TCR_EL1: T0SZ [5:0] = 64 - 39; IRGN0 [9:8] and ORGN0
// [11:10] = 0b01 (write-back, write-allocate walks); SH0 [13:12] = 0b11
// (inner shareable); TG0 [15:14] = 0b00 for 4 KB, 0b10 for 16 KB; EPD1 [23]
// disables TTBR1 walks (the kernel lives in TTBR0's identity map); IPS
// [34:32] is copied from ID_AA64MMFR0_EL1.PARange.
constexpr uint64_t k_tcr_t0sz = 64 - k_va_bits, k_tcr_irgn0_wb = 1u << 8, k_tcr_orgn0_wb = 1u << 10,
                   k_tcr_sh0_inner = 3u << 12, k_tcr_epd1 = 1u << 23;
constexpr uint64_t k_tcr_tg0 = (k_page_shift == 14 ? 2u : 0u) << 14;
constexpr unsigned k_tcr_ips_shift = 32;
constexpr uint64_t k_parange_mask = 7;
// SCTLR_EL1 (D13.2.118): M [0] MMU on, C [2] data caches, I [12] instruction caches.
constexpr uint64_t k_sctlr_m = 1u << 0, k_sctlr_c = 1u << 2, k_sctlr_i = 1u << 12;
// CPACR_EL1.FPEN [21:20] = 0b11: FP/SIMD instructions do not trap at EL0 or EL1.
constexpr uint64_t k_cpacr_fpen = 3u << 20;

constexpr uint64_t k_kernel_ram = k_desc_block | k_attr_normal | k_sh_inner | k_af | k_uxn;
constexpr uint64_t k_kernel_device = k_desc_block | k_attr_device | k_af | k_uxn | k_pxn;

// Identity-maps [start, end) with level-2 blocks of attributes @p attributes.
void map_kernel_blocks(uint64_t start, uint64_t end, uint64_t attributes)
{
    for (uint64_t pa = start; pa < end; pa += k_l2_block) {
        uint64_t& l1e = g_kernel_l1[l1_index(pa)];
        if (!(l1e & k_desc_valid)) {
            if (g_kernel_l2_used == k_kernel_l2_tables)
                panic("mmu: the kernel map needs more than %u level-2 tables", k_kernel_l2_tables);
            l1e = vm::virt_to_phys(g_kernel_l2[g_kernel_l2_used++]) | k_desc_table;
        }
        static_cast<uint64_t*>(vm::phys_to_virt(l1e & k_desc_address))[l2_index(pa)] =
            pa | attributes;
    }
}

} // namespace

vm::PhysAddr kernel_l1_phys()
{
    return vm::virt_to_phys(g_kernel_l1);
}

void mmu_init()
{
    static_assert(k_device_start % k_l2_block == 0 && k_device_end % k_l2_block == 0 &&
                  k_ram_map_start % k_l2_block == 0 && k_ram_map_end % k_l2_block == 0);
    map_kernel_blocks(k_device_start, k_device_end, k_kernel_device);
    map_kernel_blocks(k_ram_map_start, k_ram_map_end, k_kernel_ram);

    uint64_t mmfr0;
    asm volatile("mrs %0, id_aa64mmfr0_el1" : "=r"(mmfr0));
    // D13.2.64, ID_AA64MMFR0_EL1: TGran16 [23:20] is 0 when there is no 16 KB
    // granule; TGran4 [31:28] is 0xF when there is no 4 KB granule.
    unsigned tgran16 = (mmfr0 >> 20) & 0xF, tgran4 = (mmfr0 >> 28) & 0xF;
    if (k_page_shift == 14 && tgran16 == 0)
        panic("mmu: this kernel uses the 16 KB granule, which this CPU lacks "
              "(ID_AA64MMFR0_EL1.TGran16 = 0); run it with -cpu max");
    if (k_page_shift == 12 && tgran4 == 0xF)
        panic("mmu: this kernel uses the 4 KB granule, which this CPU lacks");
    uint64_t tcr = k_tcr_t0sz | k_tcr_irgn0_wb | k_tcr_orgn0_wb | k_tcr_sh0_inner | k_tcr_tg0 |
                   k_tcr_epd1 | ((mmfr0 & k_parange_mask) << k_tcr_ips_shift);
    uint64_t cpacr;
    asm volatile("mrs %0, cpacr_el1" : "=r"(cpacr));
    asm volatile("msr cpacr_el1, %0" ::"r"(cpacr | k_cpacr_fpen));
    asm volatile("msr mair_el1, %0\n"
                 "msr tcr_el1, %1\n"
                 "msr ttbr0_el1, %2\n"
                 "isb\n"
                 "tlbi vmalle1\n"
                 "dsb nsh\n"
                 "isb" ::"r"(k_mair),
                 "r"(tcr), "r"(kernel_l1_phys())
                 : "memory");
    uint64_t sctlr;
    asm volatile("mrs %0, sctlr_el1" : "=r"(sctlr));
    sctlr |= k_sctlr_m | k_sctlr_c | k_sctlr_i;
    asm volatile("msr sctlr_el1, %0; isb" ::"r"(sctlr) : "memory");
    kprintf("mmu: %llu KB granule, %u-bit virtual addresses\n",
            (unsigned long long)(k_page_size >> 10), k_va_bits);
}

void set_user_table(vm::PhysAddr l1_phys)
{
    g_table_loads.add();
    asm volatile("dsb ishst\n"
                 "msr ttbr0_el1, %0\n"
                 "isb\n"
                 "tlbi vmalle1\n"
                 "dsb nsh\n"
                 "isb" ::"r"(l1_phys)
                 : "memory");
}

void invalidate_page(uint64_t va)
{
    g_page_flushes.add();
    // TLBI VAAE1: by address, any ASID; the operand holds VA[55:12] in bits
    // [43:0] whatever the granule (with a 16 KB granule its low 2 bits are ignored).
    constexpr unsigned k_tlbi_va_shift = 12;
    asm volatile("dsb ishst\n"
                 "tlbi vaae1, %0\n"
                 "dsb nsh\n"
                 "isb" ::"r"(va >> k_tlbi_va_shift)
                 : "memory");
}

void sync_instruction_cache(const void* page)
{
    // Arm ARM D7.5.9: clean the new code to the point of unification line by
    // line (CTR_EL0.DminLine [19:16] is log2 of the smallest line in words),
    // then invalidate the instruction caches.
    uint64_t ctr;
    asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
    uint64_t line = 4u << ((ctr >> 16) & 0xF);
    auto start = reinterpret_cast<uint64_t>(page);
    for (uint64_t a = start; a < start + k_page_size; a += line)
        asm volatile("dc cvau, %0" ::"r"(a) : "memory");
    asm volatile("dsb ish\n"
                 "ic iallu\n"
                 "dsb nsh\n"
                 "isb"
                 :
                 :
                 : "memory");
}

} // namespace toll::arm64
