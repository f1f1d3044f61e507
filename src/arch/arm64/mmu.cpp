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
    asm volatile("dsb ishst\n"
                 "msr ttbr0_el1, %0\n"
                 "isb" ::"r"(l1_phys | uint64_t(asid) << k_tlbi_asid_shift)
                 : "memory");
    if (flush)
        invalidate_local_all();
}

void invalidate_page(uint64_t va)
{
    g_tlbi_page.add();
    // TLBI VAAE1IS: by address, any ASID, on every CPU of the inner
    // shareable domain.
    asm volatile("dsb ishst\n"
                 "tlbi vaae1is, %0\n"
                 "dsb ish\n"
                 "isb" ::"r"(va >> k_tlbi_va_shift)
                 : "memory");
}

void tlbi_page_nosync(unsigned asid, uint64_t va, bool leaf_only)
{
    g_tlbi_page.add();
    uint64_t operand = (va >> k_tlbi_va_shift) & k_tlbi_va_mask;
    if (asid == k_tlbi_any_asid) {
        if (leaf_only)
            asm volatile("tlbi vaale1is, %0" ::"r"(operand) : "memory");
        else
            asm volatile("tlbi vaae1is, %0" ::"r"(operand) : "memory");
        return;
    }
    operand |= uint64_t(asid) << k_tlbi_asid_shift;
    // TLBI VALE1IS: the last-level entry (page, run or block) of one ASID;
    // TLBI VAE1IS: that and the walk-cache entries above it (a table entry
    // that became a block or went).
    if (leaf_only)
        asm volatile("tlbi vale1is, %0" ::"r"(operand) : "memory");
    else
        asm volatile("tlbi vae1is, %0" ::"r"(operand) : "memory");
}

void tlbi_begin()
{
    // The descriptor stores before any TLBI: a CPU that walks again after
    // the invalidation must see them (DSB ISHST orders them first).
    asm volatile("dsb ishst" ::: "memory");
}

void tlbi_sync()
{
    // DSB ISH waits until every CPU of the domain has completed the
    // broadcast invalidations before it; the ISB makes this CPU's later
    // instructions use the result.
    asm volatile("dsb ish\n"
                 "isb" ::
                     : "memory");
}

void invalidate_asid_everywhere(unsigned asid)
{
    // TLBI ASIDE1IS: every non-global entry of one ASID, on every CPU.
    asm volatile("dsb ishst\n"
                 "tlbi aside1is, %0\n"
                 "dsb ish\n"
                 "isb" ::"r"(uint64_t(asid) << k_tlbi_asid_shift)
                 : "memory");
}

void invalidate_local_all()
{
    g_tlbi_all.add();
    // TLBI VMALLE1 (not broadcast): every stage 1 entry of this EL1&0
    // regime on this CPU only; DSB NSH waits for this CPU alone.
    asm volatile("dsb nshst\n"
                 "tlbi vmalle1\n"
                 "dsb nsh\n"
                 "isb" ::
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
