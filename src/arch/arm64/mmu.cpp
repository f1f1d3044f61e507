// The arm64 MMU once it is on (mmu_boot.cpp turned it on): leaving the boot
// identity map, and the TLB and cache operations the pmap (pmap.cpp) needs.
#include "arch/arm64/mmu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"

namespace toll::arm64 {
namespace {

TOLL_COUNTER(g_table_loads, "vm.pmap.ttbr0_loads");
// TLB invalidations by kind (Arm ARM D8.13 "TLB maintenance"): one page
// (TLBI VAAE1), or everything (TLBI VMALLE1).
TOLL_COUNTER(g_tlbi_page, "vm.pmap.tlbi.page");
TOLL_COUNTER(g_tlbi_all, "vm.pmap.tlbi.all");

} // namespace

void mmu_init()
{
    // The identity map in TTBR0_EL1 served only the jump to the upper half
    // (entry.S); from now on a low address is a user address.
    asm volatile("msr ttbr0_el1, %0\n"
                 "isb\n"
                 "tlbi vmalle1\n"
                 "dsb nsh\n"
                 "isb" ::"r"(empty_user_table_phys())
                 : "memory");
    kprintf("mmu: %llu KB granule, %u-bit virtual addresses, kernel at 0x%llx (TTBR1)\n",
            (unsigned long long)(k_page_size >> 10), k_va_bits, (unsigned long long)k_kernel_base);
}

void set_user_table(arch::PhysAddr l1_phys, unsigned asid, bool flush)
{
    g_table_loads.add();
    // TTBR0_EL1: the table's address, the ASID in bits [63:48].
    constexpr unsigned k_ttbr_asid_shift = 48;
    asm volatile("dsb ishst\n"
                 "msr ttbr0_el1, %0\n"
                 "isb" ::"r"(l1_phys | uint64_t(asid) << k_ttbr_asid_shift)
                 : "memory");
    if (flush)
        invalidate_all();
}

void invalidate_page(uint64_t va)
{
    g_tlbi_page.add();
    // TLBI VAAE1: by address, any ASID; the operand holds VA[55:12] in bits
    // [43:0] whatever the granule (with a 16 KB granule its low 2 bits are ignored).
    constexpr unsigned k_tlbi_va_shift = 12;
    // The inner-shareable form reaches every CPU's TLB: a CPU that ran
    // this address space earlier may hold the entry too.
    asm volatile("dsb ishst\n"
                 "tlbi vaae1is, %0\n"
                 "dsb ish\n"
                 "isb" ::"r"(va >> k_tlbi_va_shift)
                 : "memory");
}

void invalidate_all()
{
    g_tlbi_all.add();
    // TLBI VMALLE1IS invalidates every stage 1 entry of this EL1&0 regime,
    // walk caches too, on every PE of the inner shareable domain (every CPU).
    asm volatile("dsb ishst\n"
                 "tlbi vmalle1is\n"
                 "dsb ish\n"
                 "isb" ::
                     : "memory");
}

} // namespace toll::arm64
