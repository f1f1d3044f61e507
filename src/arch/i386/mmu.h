// i386 two-level paging (Intel SDM Vol. 3, 4.3): entry bits, the TLB and CR3
// operations the pmap needs, and the kernel's direct map.
#pragma once
#include "arch/i386/layout.h"
#include "kernel/arch/physmem.h"
#include <stdint.h>

namespace toll::i386 {

// Intel SDM Vol. 3, tables 4-5 and 4-6: PDE and PTE bits.
constexpr uint32_t k_pte_present = 1u << 0, k_pte_write = 1u << 1, k_pte_user = 1u << 2,
                   k_pte_accessed = 1u << 5, k_pte_dirty = 1u << 6, k_pde_large = 1u << 7,
                   k_pte_global = 1u << 8;
constexpr uint32_t k_pte_frame = 0xFFFFF000u;
constexpr uint32_t k_large_page = 4u << 20;
constexpr unsigned k_entries = 1024;

constexpr unsigned pd_index(uint32_t va)
{
    return va >> 22;
}
constexpr unsigned pt_index(uint32_t va)
{
    return (va >> 12) & 0x3FF;
}

/// First page-directory slot of the kernel's part of every address space.
constexpr unsigned k_kernel_pde_first = KERNEL_BASE >> 22;
/// The direct map covers physical memory up to this size (896 MB): the rest of
/// the kernel's gigabyte holds windows and the trampoline.
constexpr uint32_t k_direct_map_max = 896u << 20;

/// Loads CR3 (flushing every non-global TLB entry) and counts it.
void load_cr3(uint32_t page_directory_phys);

/// Invalidates one page's TLB entry (invlpg) and counts it.
void invalidate_page(uint32_t va);

/// Builds the direct map in the boot page directory: physical memory up to
/// @p phys_top (capped at k_direct_map_max) at KERNEL_BASE, with 4 MB global
/// pages. Called by i386_boot before the core starts.
void direct_map_init(uint64_t phys_top);

/// Physical address of the kernel page directory (the boot one, kept).
uint32_t kernel_page_directory_phys();

/// The trampoline slot's directory entry (the same in every directory).
uint32_t trampoline_pde();

/// The user directory of "no process" under the isolated layouts: nothing
/// but the trampoline, so a kernel thread never exposes the kernel's directory.
uint32_t empty_user_directory_phys();

/// Entry @p index of the kernel-window page table (KERNEL_WINDOW_BASE).
uint32_t* kernel_window_pte(unsigned index);

} // namespace toll::i386

namespace toll::arch {
struct Pmap;
/// The directory user mode runs on for @p pmap (the user one when isolated).
uint32_t pmap_user_directory_phys(Pmap* pmap);
/// The space CPU @p cpu_id has loaded (pmap_activate's), nullptr for none.
Pmap* pmap_loaded_on(unsigned cpu_id);
} // namespace toll::arch

namespace toll::i386 {
/// Reads vm.tlb.ceiling= and registers the shootdown's IPI handler (shootdown.cpp).
void shootdown_init();
/// Makes every other CPU that still has @p pmap loaded (lazily, running a
/// kernel thread) load none, and waits: called before the space's tables go.
void shootdown_leave(arch::Pmap* pmap);
} // namespace toll::i386
