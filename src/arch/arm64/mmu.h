// arm64 translation tables (Arm ARM DDI 0487, D8 "The AArch64 Virtual Memory
// System Architecture"): a 4 KB or 16 KB granule (the build's choice,
// kernel/arch/physmem.h), 39-bit addresses, three levels. Two regimes split the
// address space: TTBR0_EL1 translates user space, the low 512 GB, with a
// private table per process; TTBR1_EL1 translates the kernel's upper half,
// where RAM and the devices are mapped with level-2 blocks at KERNEL_VA_BASE
// + their physical address (layout.h).
#pragma once
#include "arch/arm64/layout.h"
#include "kernel/arch/physmem.h"
#include <stdint.h>

namespace toll::arm64 {

// Arm ARM D8.2, "Translation granule": a table is one granule of 8-byte
// descriptors, so each level resolves (page shift - 3) bits of the address.
// 4 KB granule: 512 entries; level 3 maps 4 KB pages, level 2 2 MB blocks,
// level 1 1 GB. 16 KB granule: 2048 entries; 16 KB pages, 32 MB blocks, and
// level 1 entries of 64 GB, which may only point to tables.
constexpr unsigned k_page_shift = arch::k_page_shift;
constexpr uint64_t k_page_size = arch::k_page_size;
constexpr unsigned k_table_shift = k_page_shift - 3;
constexpr unsigned k_entries = 1u << k_table_shift;
constexpr unsigned k_l3_shift = k_page_shift;
constexpr unsigned k_l2_shift = k_l3_shift + k_table_shift;
constexpr unsigned k_l1_shift = k_l2_shift + k_table_shift;
constexpr uint64_t k_l2_block = 1ull << k_l2_shift;
/// Bits of virtual address each of TTBR0 and TTBR1 translates (T0SZ = 64 - 39).
constexpr unsigned k_va_bits = 39;
static_assert(k_page_shift == 12 || k_page_shift == 14, "arm64 supports 4 KB and 16 KB granules");

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
// And an entry being removed or broken: made invalid, its address kept, until
// the TLB invalidation of the whole range is done (pmap.cpp).
constexpr uint64_t k_soft_gone = 1ull << 56;
/// The output address of a descriptor: bits [47:page shift] (D8.3.1; the
/// bits below a 16 KB page's address are RES0).
constexpr uint64_t k_desc_address = 0x0000FFFFFFFFFFFFull & ~(k_page_size - 1);

/// MAIR_EL1 (D13.2.97): attribute 0 is Normal write-back cacheable memory,
/// attribute 1 Device-nGnRE, matching k_attr_normal and k_attr_device.
constexpr uint64_t k_mair = 0xFFull | (0x04ull << 8);

/// User space: all that TTBR0_EL1 translates, [0, 512 GB). Kernel addresses
/// lie in the other regime, so no user table holds anything but user pages.
constexpr uint64_t k_user_limit = 1ull << k_va_bits;
/// Where the kernel sees physical address 0 (layout.h): the kernel's
/// pointer to physical address p is k_kernel_base + p.
constexpr uint64_t k_kernel_base = KERNEL_VA_BASE;
/// The devices the kernel uses, [128 MB, 192 MB): GIC, PL011 and the
/// virtio-mmio transports at 160 MB (two 32 MB blocks at 16 KB, thirty-two
/// 2 MB blocks at 4 KB).
constexpr uint64_t k_device_start = 0x08000000, k_device_end = 0x0C000000;
/// RAM is mapped as far as the end of the second gigabyte.
constexpr uint64_t k_ram_map_start = 0x40000000, k_ram_map_end = 0x80000000;

constexpr unsigned l1_index(uint64_t va)
{
    return (va >> k_l1_shift) & (k_entries - 1);
}
constexpr unsigned l2_index(uint64_t va)
{
    return (va >> k_l2_shift) & (k_entries - 1);
}
constexpr unsigned l3_index(uint64_t va)
{
    return (va >> k_l3_shift) & (k_entries - 1);
}

/// The kernel's level-1 table, the one in TTBR1_EL1: its physical address.
arch::PhysAddr kernel_l1_phys();

/// The physical address of an all-invalid level-1 table, which TTBR0_EL1
/// holds while no process runs: every user address then faults.
arch::PhysAddr empty_user_table_phys();

/// Finishes what arm64_mmu_boot (called by entry.S) began: drops the
/// identity map the jump to the upper half needed (TTBR0_EL1 gets the empty
/// table) and reports the granule.
void mmu_init();

/// Loads TTBR0_EL1 with @p l1_phys and ASID @p asid (vm.pmap.ttbr0_loads),
/// and empties this CPU's TLB if @p flush (asid.cpp decides).
void set_user_table(arch::PhysAddr l1_phys, unsigned asid, bool flush);

// The TLBI operand (Arm ARM C5.5, "TLB maintenance instructions"): VA[55:12]
// in bits [43:0] whatever the granule (with a 16 KB granule its low 2 bits
// are ignored), the ASID in bits [63:48].
constexpr unsigned k_tlbi_va_shift = 12;
constexpr uint64_t k_tlbi_va_mask = (1ull << 44) - 1;
constexpr unsigned k_tlbi_asid_shift = 48;
/// For tlbi_page_nosync: by address, whatever the ASID (ASIDs off).
constexpr unsigned k_tlbi_any_asid = ~0u - 1;

/// Invalidates the TLB entries for the page at @p va (every ASID) on every
/// CPU, and waits for it (vm.pmap.tlbi.page).
void invalidate_page(uint64_t va);

/// Orders the descriptor stores made so far before the TLBIs that follow
/// (DSB ISHST): the start of a batch of tlbi_page_nosync calls.
void tlbi_begin();

/// Issues one broadcast TLBI for the page at @p va under ASID @p asid
/// (k_tlbi_any_asid: any) on every CPU: the last-level entry only if
/// @p leaf_only (VALE1IS), walk-cache entries too if not (VAE1IS). Does not
/// wait: tlbi_sync() does, once for a batch (vm.pmap.tlbi.page).
void tlbi_page_nosync(unsigned asid, uint64_t va, bool leaf_only);

/// Waits until every CPU has completed the TLBIs issued before (DSB ISH).
void tlbi_sync();

/// Invalidates every entry of ASID @p asid on every CPU (TLBI ASIDE1IS), and
/// waits for it.
void invalidate_asid_everywhere(unsigned asid);

/// Invalidates every TLB entry of the EL1&0 regime on this CPU only (TLBI
/// VMALLE1: a rollover's flush, or a switch with ASIDs off)
/// (vm.pmap.tlbi.all).
void invalidate_local_all();

/// Invalidates every TLB entry of the EL1&0 regime on every CPU
/// (vm.pmap.tlbi.all).
void invalidate_all();

} // namespace toll::arm64

/// Called by entry.S with the MMU off, so every address it uses is physical:
/// builds the kernel's tables, sets the translation controls with the kernel
/// table in both TTBR1_EL1 (the upper half) and TTBR0_EL1 (an identity map
/// for the few instructions before the jump up), and turns the MMU on.
/// Returns only if the CPU has the build's granule.
extern "C" void arm64_mmu_boot();
