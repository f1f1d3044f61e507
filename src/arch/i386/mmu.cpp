// The privileged half of the i386 MMU code: CR3, invlpg, and the boot-time
// direct map. (pmap.cpp holds the page-table logic, which the host tests also
// compile; this file is kernel-only.)
#include "arch/i386/cpu.h"
#include "arch/i386/mmu.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmem.h"

extern "C" uint32_t boot_page_directory[];

namespace toll::i386 {
namespace {
TOLL_COUNTER(g_cr3_loads, "cpu.cr3_loads");
TOLL_COUNTER(g_invlpg, "cpu.tlb.invlpg");
uint32_t g_direct_map_bytes = BOOT_MAPPED_MB << 20;
} // namespace

void load_cr3(uint32_t pd_phys)
{
    g_cr3_loads.add();
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

void direct_map_init(uint64_t phys_top)
{
    uint64_t top = phys_top < k_direct_map_max ? phys_top : k_direct_map_max;
    top = (top + k_large_page - 1) & ~uint64_t(k_large_page - 1);
    if (top < (BOOT_MAPPED_MB << 20))
        top = BOOT_MAPPED_MB << 20;
    // Global pages (CR4.PGE) survive CR3 loads: the kernel's TLB entries stay
    // warm across address-space switches. Intel SDM Vol. 3, 4.10.2.4.
    write_cr4(read_cr4() | CR4_PGE);
    for (uint32_t pa = 0; pa < top; pa += k_large_page)
        boot_page_directory[k_kernel_pde_first + pd_index(pa)] =
            pa | k_pte_present | k_pte_write | k_pde_large | k_pte_global;
    // The identity mapping of the first megabytes was only for the jump to
    // the kernel's high addresses; user space starts empty.
    for (unsigned i = 0; i < k_kernel_pde_first; ++i)
        boot_page_directory[i] = 0;
    g_direct_map_bytes = static_cast<uint32_t>(top);
    load_cr3(kernel_page_directory_phys());
}

} // namespace toll::i386

namespace toll::vm {

void* phys_to_virt(PhysAddr pa)
{
    return reinterpret_cast<void*>(static_cast<uint32_t>(pa) + KERNEL_BASE);
}

PhysAddr virt_to_phys(const void* p)
{
    return reinterpret_cast<uint32_t>(p) - KERNEL_BASE;
}

PhysAddr direct_map_limit()
{
    return i386::g_direct_map_bytes;
}

} // namespace toll::vm
