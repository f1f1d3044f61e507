// arm64 translation tables (Arm ARM DDI 0487, D8 "The AArch64 Virtual Memory
// System Architecture"), 4 KB granule, 39-bit addresses in TTBR0, three
// levels. The kernel is identity-mapped in every table: RAM (the second
// gigabyte) as one 1 GB block, the devices as 2 MB blocks in the first
// gigabyte, below which user space lives.
#pragma once
#include "kernel/vm/physmem.h"
#include <stdint.h>

namespace toll::arm64 {

constexpr unsigned k_entries = 512;
constexpr uint64_t k_page_size = 4096;
constexpr uint64_t k_l2_block = 2ull << 20;
constexpr uint64_t k_l1_block = 1ull << 30;

// Arm ARM D8.3, VMSAv8-64 descriptors: bits [1:0] are 0b11 for a table (at
// levels 0-2) or a page (level 3), 0b01 for a block (levels 1-2).
constexpr uint64_t k_desc_valid = 1u << 0, k_desc_table = 3, k_desc_page = 3, k_desc_block = 1;
// Lower attributes (D8.3.2): AttrIndx [4:2], AP [7:6], SH [9:8], AF [10], nG [11].
constexpr uint64_t k_attr_normal = 0u << 2, k_attr_device = 1u << 2;
constexpr uint64_t k_ap_el0 = 1u << 6, k_ap_read_only = 1u << 7;
constexpr uint64_t k_sh_inner = 3u << 8;
constexpr uint64_t k_af = 1u << 10, k_not_global = 1u << 11;
// Upper attributes: PXN [53] and UXN [54] forbid execution at EL1 and EL0.
constexpr uint64_t k_pxn = 1ull << 53, k_uxn = 1ull << 54;
// Bits [58:55] are reserved for software; Toll marks PROT_NONE pages here
// (in a descriptor that is not valid, so the hardware ignores it).
constexpr uint64_t k_soft_none = 1ull << 55;
/// The output address of a descriptor: bits [47:12].
constexpr uint64_t k_desc_address = 0x0000FFFFFFFFF000ull;

/// MAIR_EL1 (D13.2.97): attribute 0 is Normal write-back cacheable memory,
/// attribute 1 Device-nGnRE, matching k_attr_normal and k_attr_device.
constexpr uint64_t k_mair = 0xFFull | (0x04ull << 8);

/// User space: [0, 128 MB), the part of the first gigabyte below QEMU
/// virt's devices (hw/arm/virt.c puts the GIC at 128 MB).
constexpr uint64_t k_user_limit = 0x08000000;
/// The devices the kernel uses, [128 MB, 160 MB): GIC and PL011.
constexpr uint64_t k_device_start = 0x08000000, k_device_end = 0x0A000000;
/// RAM is identity-mapped as far as the end of the second gigabyte.
constexpr uint64_t k_ram_map_start = 0x40000000, k_ram_map_end = 0x80000000;

constexpr unsigned l1_index(uint64_t va)
{
    return (va >> 30) & (k_entries - 1);
}
constexpr unsigned l2_index(uint64_t va)
{
    return (va >> 21) & (k_entries - 1);
}
constexpr unsigned l3_index(uint64_t va)
{
    return (va >> 12) & (k_entries - 1);
}

/// The kernel's own level-1 table (every pmap copies its kernel entries):
/// its physical address, once mmu_init() built it.
vm::PhysAddr kernel_l1_phys();

/// Builds the kernel's tables and turns the MMU and caches on (identity
/// map: nothing moves). Also lets EL0 and EL1 use the FP/SIMD registers.
void mmu_init();

/// Loads TTBR0_EL1 with @p l1_phys and flushes the TLB (Toll uses no ASIDs).
void set_user_table(vm::PhysAddr l1_phys);

/// Invalidates the TLB entries for the page at @p va (every ASID).
void invalidate_page(uint64_t va);

/// Makes the instructions written into @p page (a kernel address) visible
/// to instruction fetches.
void sync_instruction_cache(const void* page);

} // namespace toll::arm64
