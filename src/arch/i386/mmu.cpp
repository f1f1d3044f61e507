// The privileged half of the i386 MMU code: CR3, invlpg, the boot-time direct
// map, the trampoline slot, and the vm.split= layout. (pmap.cpp holds the
// page-table logic, which the host tests also compile; this file is
// kernel-only.)
#include "arch/i386/mmu.h"
#include "arch/i386/cpu.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/walks.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "lib/cmdline.h"
#include "lib/string.h"
#include <stddef.h>

extern "C" uint32_t boot_page_directory[];

// The layout, in kernel data: the trampoline's copy (read by the entry code)
// is written once the trampoline is mapped. 4/4 is the default, as in FreeBSD.
extern "C" uint32_t i386_layout = LAYOUT_4_4;

// Counted by trap_entry.S too (COUNTER_VALUE in asm_offsets.h), hence a C name.
extern "C" {
TOLL_COUNTER(i386_cr3_loads, "cpu.cr3_loads");
}

namespace {
// i386 has no PCID outside IA-32e mode, so every CR3 load flushes every
// non-global TLB entry: the full flushes are the CR3 loads, worked out when
// read rather than counted a second time on every trap (two instructions
// each way on the isolated layouts' system call).
uint64_t full_flushes()
{
    return i386_cr3_loads.value;
}
TOLL_IN_SECTION(toll_counters)
constinit toll::Counter g_tlb_full_flushes{"cpu.tlb.full_flushes", 0, full_flushes};
} // namespace

namespace toll::i386 {
namespace {

TOLL_COUNTER(g_invlpg, "cpu.tlb.invlpg");
TOLL_PARAM(param_split, "vm.split", "address-space layout: 3/1, 3/1-pti or 4/4 (the default)");
TOLL_PARAM(param_global, "vm.global", "off: no global pages (CR4.PGE clear); on is the default");

uint32_t g_direct_map_bytes = BOOT_MAPPED_MB << 20;

uint64_t g_identity_top; // 4/4: memory above k_direct_map_max, identity-mapped

// The trampoline's page table: the last 4 MB of every address space.
alignas(4096) uint32_t g_trampoline_pt[k_entries];
// The kernel windows of the 4/4 copy slow path (kernel directory only).
alignas(4096) uint32_t g_window_pt[k_entries];

} // namespace

const char* layout_name()
{
    switch (layout()) {
    case Layout::split_3_1:
        return "3/1";
    case Layout::split_3_1_pti:
        return "3/1-pti";
    case Layout::split_4_4:
        return "4/4";
    }
    return "?";
}

void layout_init()
{
    // Indexed by LAYOUT_*; 4/4 is FreeBSD's default since 2018, and a value
    // that names no layout is reported and gets it too.
    static const char* const names[] = {"3/1", "3/1-pti", "4/4"};
    static_assert(LAYOUT_3_1 == 0 && LAYOUT_3_1_PTI == 1 && LAYOUT_4_4 == 2);
    i386_layout = static_cast<uint32_t>(param_get_choice("vm.split", names, LAYOUT_4_4));
}

void load_cr3(uint32_t pd_phys)
{
    walks_at_cr3_load();
    i386_cr3_loads.add();
    asm volatile("movl %0, %%cr3" : : "r"(pd_phys) : "memory");
}

void invalidate_page(uint32_t va)
{
    g_invlpg.add();
    asm volatile("invlpg (%0)" : : "r"(va) : "memory");
}

uint32_t kernel_page_directory_phys()
{
    return reinterpret_cast<uint32_t>(boot_page_directory) - KERNEL_BASE;
}

uint32_t trampoline_pde()
{
    return boot_page_directory[k_entries - 1];
}

uint32_t empty_user_directory_phys()
{
    alignas(4096) static uint32_t empty[k_entries];
    empty[k_entries - 1] = trampoline_pde();
    return reinterpret_cast<uint32_t>(empty) - KERNEL_BASE;
}

uint32_t* kernel_window_pte(unsigned index)
{
    return &g_window_pt[index];
}

void direct_map_init(uint64_t phys_top)
{
    bool isolated = layout_isolated();
    uint64_t top = phys_top < k_direct_map_max ? phys_top : k_direct_map_max;
    top = (top + k_large_page - 1) & ~uint64_t(k_large_page - 1);
    if (top < (BOOT_MAPPED_MB << 20))
        top = BOOT_MAPPED_MB << 20;
    // Global pages (CR4.PGE) survive CR3 loads: under 3/1 the kernel's TLB
    // entries stay warm across address-space switches (Intel SDM Vol. 3,
    // 4.10.2.4). Under the isolated layouts a global kernel entry would
    // outlive the switch to the user's CR3, so only the trampoline (mapped
    // identically everywhere) is global there.
    // vm.global=off leaves CR4.PGE clear, so that no entry is global, to
    // measure what global pages save (vm.walks=count).
    static const char* const global_names[] = {"on", "off"};
    if (param_get_choice("vm.global", global_names, 0) == 0)
        write_cr4(read_cr4() | CR4_PGE);
    uint32_t global = isolated ? 0 : k_pte_global;
    for (uint32_t pa = 0; pa < top; pa += k_large_page)
        boot_page_directory[k_kernel_pde_first + pd_index(pa)] =
            pa | k_pte_present | k_pte_write | k_pde_large | global;
    // The identity mapping of the first megabytes was only for the jump to
    // the kernel's high addresses; user space starts empty.
    for (unsigned i = 0; i < k_kernel_pde_first; ++i)
        boot_page_directory[i] = 0;
    g_direct_map_bytes = static_cast<uint32_t>(top);
    // 4/4: the kernel's directory has no user part, so memory above 896 MB
    // is mapped there at its own address, up to the kernel's 3 GB mark: the
    // breathing space the 4/4 split buys.
    if (layout() == Layout::split_4_4 && phys_top > k_direct_map_max) {
        uint64_t id_top = phys_top < KERNEL_BASE ? phys_top : uint64_t(KERNEL_BASE);
        id_top &= ~uint64_t(k_large_page - 1);
        for (uint32_t pa = k_direct_map_max; pa < id_top; pa += k_large_page)
            boot_page_directory[pd_index(pa)] = pa | k_pte_present | k_pte_write | k_pde_large;
        g_identity_top = id_top;
    }
    // The trampoline slot: its pages, supervisor-only and global.
    uint32_t phys = reinterpret_cast<uint32_t>(__trampoline_phys);
    uint32_t pages = (reinterpret_cast<uint32_t>(__trampoline_end) -
                      reinterpret_cast<uint32_t>(__trampoline_start)) /
                     4096;
    for (uint32_t i = 0; i < pages; ++i)
        g_trampoline_pt[i] = (phys + i * 4096) | k_pte_present | k_pte_write | k_pte_global;
    boot_page_directory[k_entries - 1] =
        (reinterpret_cast<uint32_t>(g_trampoline_pt) - KERNEL_BASE) | k_pte_present | k_pte_write;
    boot_page_directory[pd_index(KERNEL_WINDOW_BASE)] =
        (reinterpret_cast<uint32_t>(g_window_pt) - KERNEL_BASE) | k_pte_present | k_pte_write;
    load_cr3(kernel_page_directory_phys());
    trampoline_layout = i386_layout;
    for (TrampolineCpu& t : trampoline_cpus) {
        t.kernel_cr3 = kernel_page_directory_phys();
        t.user_cr3 = empty_user_directory_phys();
    }
}

} // namespace toll::i386

namespace toll::arch {

void* phys_to_virt(PhysAddr pa)
{
    if (pa < i386::k_direct_map_max)
        return reinterpret_cast<void*>(static_cast<uint32_t>(pa) + KERNEL_BASE);
    return reinterpret_cast<void*>(static_cast<uint32_t>(pa)); // 4/4 identity part
}

PhysAddr virt_to_phys(const void* p)
{
    uint32_t va = reinterpret_cast<uint32_t>(p);
    if (va >= KERNEL_BASE && va < KERNEL_BASE + i386::k_direct_map_max)
        return va - KERNEL_BASE;
    return va;
}

PhysAddr direct_map_limit()
{
    return i386::g_identity_top ? i386::g_identity_top : i386::g_direct_map_bytes;
}

PhysAddr allocatable_floor()
{
    // The first megabyte stays with the BIOS: the real-mode interrupt vector
    // table and BIOS data area, the vm86 monitor's low pages, and the option
    // ROMs and BIOS image at 0xA0000-0xFFFFF (the PC memory map).
    constexpr PhysAddr k_low_memory_end = 1u << 20;
    return k_low_memory_end;
}

} // namespace toll::arch
