// Turning on the arm64 MMU: the kernel's identity tables, the memory
// attributes and translation controls, and the TLB and cache operations the
// pmap (pmap.cpp) needs.
#include "arch/arm64/mmu.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmem.h"

namespace toll::arm64 {
namespace {

alignas(k_page_size) uint64_t g_kernel_l1[k_entries];
alignas(k_page_size) uint64_t g_kernel_l2_low[k_entries]; // the first gigabyte: devices

TOLL_COUNTER(g_table_loads, "vm.pmap.ttbr0_loads");
TOLL_COUNTER(g_page_flushes, "vm.pmap.tlb_page_flushes");

// Arm ARM D13.2.120, TCR_EL1: T0SZ [5:0] = 64 - 39; IRGN0 [9:8] and ORGN0
// [11:10] = 0b01 (write-back, write-allocate walks); SH0 [13:12] = 0b11
// (inner shareable); TG0 [15:14] = 0b00 (4 KB); EPD1 [23] disables TTBR1
// walks (the kernel lives in TTBR0's identity map); IPS [34:32] is copied
// from ID_AA64MMFR0_EL1.PARange.
constexpr uint64_t k_tcr_t0sz = 64 - 39, k_tcr_irgn0_wb = 1u << 8, k_tcr_orgn0_wb = 1u << 10,
                   k_tcr_sh0_inner = 3u << 12, k_tcr_epd1 = 1u << 23;
constexpr unsigned k_tcr_ips_shift = 32;
constexpr uint64_t k_parange_mask = 7;
// SCTLR_EL1 (D13.2.118): M [0] MMU on, C [2] data caches, I [12] instruction caches.
constexpr uint64_t k_sctlr_m = 1u << 0, k_sctlr_c = 1u << 2, k_sctlr_i = 1u << 12;
// CPACR_EL1.FPEN [21:20] = 0b11: FP/SIMD instructions do not trap at EL0 or EL1.
constexpr uint64_t k_cpacr_fpen = 3u << 20;

constexpr uint64_t k_kernel_ram = k_desc_block | k_attr_normal | k_sh_inner | k_af | k_uxn;
constexpr uint64_t k_kernel_device = k_desc_block | k_attr_device | k_af | k_uxn | k_pxn;

} // namespace

vm::PhysAddr kernel_l1_phys()
{
    return vm::virt_to_phys(g_kernel_l1);
}

void mmu_init()
{
    for (uint64_t pa = k_device_start; pa < k_device_end; pa += k_l2_block)
        g_kernel_l2_low[l2_index(pa)] = pa | k_kernel_device;
    g_kernel_l1[0] = vm::virt_to_phys(g_kernel_l2_low) | k_desc_table;
    for (uint64_t pa = k_ram_map_start; pa < k_ram_map_end; pa += k_l1_block)
        g_kernel_l1[l1_index(pa)] = pa | k_kernel_ram;

    uint64_t mmfr0;
    asm volatile("mrs %0, id_aa64mmfr0_el1" : "=r"(mmfr0));
    uint64_t tcr = k_tcr_t0sz | k_tcr_irgn0_wb | k_tcr_orgn0_wb | k_tcr_sh0_inner | k_tcr_epd1 |
                   ((mmfr0 & k_parange_mask) << k_tcr_ips_shift);
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
    // TLBI VAAE1: by address, any ASID; the operand holds VA[55:12] in bits [43:0].
    asm volatile("dsb ishst\n"
                 "tlbi vaae1, %0\n"
                 "dsb nsh\n"
                 "isb" ::"r"(va >> 12)
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
