// The arm64 kernel's translation tables and the switch to the upper half.
// arm64_mmu_boot runs with the MMU off, called by entry.S before any other
// C++: every address it takes (adrp, PC-relative) is physical, so it must not
// use the direct map or anything that holds a pointer.
#include "arch/arm64/mmu.h"
#include "arch/arm64/semihosting.h"
#include "kernel/arch/kmem.h"

namespace toll::arm64 {
namespace {

// The kernel's level-1 table and its level-2 tables of blocks: at 4 KB one
// for the devices' gigabyte and one for RAM's; at 16 KB a level-1 entry
// spans 64 GB and one table holds both.
static_assert(l1_index(k_device_start) == l1_index(k_device_end - 1) &&
              l1_index(k_ram_map_start) == l1_index(k_ram_map_end - 1));
static_assert(k_device_start % k_l2_block == 0 && k_device_end % k_l2_block == 0 &&
              k_ram_map_start % k_l2_block == 0 && k_ram_map_end % k_l2_block == 0);
constexpr unsigned k_kernel_l2_tables =
    l1_index(k_device_start) == l1_index(k_ram_map_start) ? 1 : 2;
alignas(k_page_size) uint64_t g_kernel_l1[k_entries];
alignas(k_page_size) uint64_t g_kernel_l2[k_kernel_l2_tables][k_entries];
// TTBR0_EL1 while no process runs: nothing is valid.
alignas(k_page_size) uint64_t g_empty_l1[k_entries];

// Arm ARM D13.2.120, TCR_EL1. Both regimes: 39-bit (T0SZ [5:0], T1SZ
// [21:16] = 64 - 39), write-back write-allocate walks (IRGN [9:8]/[25:24]
// and ORGN [11:10]/[27:26] = 0b01), inner shareable (SH [13:12]/[29:28] =
// 0b11). The granule fields use different encodings: TG0 [15:14] is 0b00
// for 4 KB and 0b10 for 16 KB; TG1 [31:30] is 0b10 for 4 KB and 0b01 for
// 16 KB. IPS [34:32] is copied from ID_AA64MMFR0_EL1.PARange.
constexpr uint64_t k_tcr_regime0 = (64 - k_va_bits) | 1u << 8 | 1u << 10 | 3u << 12;
constexpr uint64_t k_tcr_regime1 = k_tcr_regime0 << 16;
constexpr uint64_t k_tcr_tg0 = (k_page_shift == 14 ? 2ull : 0ull) << 14;
constexpr uint64_t k_tcr_tg1 = (k_page_shift == 14 ? 1ull : 2ull) << 30;
constexpr unsigned k_tcr_ips_shift = 32;
constexpr uint64_t k_parange_mask = 7;
// SCTLR_EL1 (D13.2.118): M [0] MMU on, C [2] data caches, SA0 [4] SP
// alignment check at EL0 (a load or store through an SP that is not a
// multiple of 16 faults, as Linux has it: SIGBUS), I [12] instruction caches.
constexpr uint64_t k_sctlr_m = 1u << 0, k_sctlr_c = 1u << 2, k_sctlr_sa0 = 1u << 4,
                   k_sctlr_i = 1u << 12;
// ID_AA64MMFR0_EL1 (D13.2.64): TGran16 [23:20] is 0 when there is no 16 KB
// granule; TGran4 [31:28] is 0xF when there is no 4 KB granule.
constexpr unsigned k_tgran16_shift = 20, k_tgran4_shift = 28;
constexpr uint64_t k_tgran_mask = 0xF, k_tgran16_absent = 0, k_tgran4_absent = 0xF;
// Arm Semihosting v2.0, SYS_WRITE0 (0x04): writes a NUL-terminated string.
constexpr uint64_t k_sys_write0 = 0x04;

// Kernel RAM: Normal, never executable at EL0; devices: never executable.
// Neither is accessible at EL0 (AP[1] clear) and both are global.
constexpr uint64_t k_kernel_ram = k_desc_block | k_attr_normal | k_sh_inner | k_af | k_uxn;
constexpr uint64_t k_kernel_device = k_desc_block | k_attr_device | k_af | k_uxn | k_pxn;

// Maps [start, end) at the same offset in either half with level-2 blocks.
// The MMU is off: the tables' addresses are their physical addresses.
void map_blocks(uint64_t start, uint64_t end, uint64_t attributes, uint64_t* l2)
{
    g_kernel_l1[l1_index(start)] = reinterpret_cast<uintptr_t>(l2) | k_desc_table;
    for (uint64_t pa = start; pa < end; pa += k_l2_block)
        l2[l2_index(pa)] = pa | attributes;
}

// No console yet: say why through the emulator, then end the run.
[[noreturn]] void boot_fail(const char* why)
{
    arm64_semihosting_call(k_sys_write0, reinterpret_cast<uintptr_t>(why));
    uint64_t block[2] = {k_adp_stopped_application_exit, 1};
    arm64_semihosting_call(k_sys_exit, reinterpret_cast<uintptr_t>(block));
    for (;;)
        asm volatile("wfe");
}

} // namespace

arch::PhysAddr kernel_l1_phys()
{
    return arch::virt_to_phys(g_kernel_l1);
}

arch::PhysAddr empty_user_table_phys()
{
    return arch::virt_to_phys(g_empty_l1);
}

} // namespace toll::arm64

extern "C" void arm64_mmu_boot()
{
    using namespace toll::arm64;
    uint64_t mmfr0;
    asm volatile("mrs %0, id_aa64mmfr0_el1" : "=r"(mmfr0));
    uint64_t tgran16 = (mmfr0 >> k_tgran16_shift) & k_tgran_mask;
    uint64_t tgran4 = (mmfr0 >> k_tgran4_shift) & k_tgran_mask;
    if (k_page_shift == 14 && tgran16 == k_tgran16_absent)
        boot_fail("toll: this kernel uses the 16 KB granule, which this CPU lacks "
                  "(ID_AA64MMFR0_EL1.TGran16 = 0); run it with -cpu max\n");
    if (k_page_shift == 12 && tgran4 == k_tgran4_absent)
        boot_fail("toll: this kernel uses the 4 KB granule, which this CPU lacks\n");

    map_blocks(k_device_start, k_device_end, k_kernel_device, g_kernel_l2[0]);
    map_blocks(k_ram_map_start, k_ram_map_end, k_kernel_ram, g_kernel_l2[k_kernel_l2_tables - 1]);

    uint64_t tcr = k_tcr_regime0 | k_tcr_regime1 | k_tcr_tg0 | k_tcr_tg1 |
                   ((mmfr0 & k_parange_mask) << k_tcr_ips_shift);
    uint64_t table = reinterpret_cast<uintptr_t>(g_kernel_l1);
    asm volatile("msr mair_el1, %0\n"
                 "msr tcr_el1, %1\n"
                 "msr ttbr0_el1, %2\n"
                 "msr ttbr1_el1, %2\n"
                 "isb\n"
                 "tlbi vmalle1\n"
                 "dsb nsh\n"
                 "isb" ::"r"(k_mair),
                 "r"(tcr), "r"(table)
                 : "memory");
    uint64_t sctlr;
    asm volatile("mrs %0, sctlr_el1" : "=r"(sctlr));
    sctlr |= k_sctlr_m | k_sctlr_c | k_sctlr_sa0 | k_sctlr_i;
    asm volatile("msr sctlr_el1, %0; isb" ::"r"(sctlr) : "memory");
}
