// The arm64 MMU once it is on (mmu_boot.cpp turned it on): leaving the boot
// identity map, and the TLB and cache operations the pmap (pmap.cpp) needs.
#include "arch/arm64/mmu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"

namespace toll::arm64 {
namespace {

TOLL_COUNTER(g_table_loads, "vm.pmap.ttbr0_loads");
TOLL_COUNTER(g_page_flushes, "vm.pmap.tlb_page_flushes");

// CPACR_EL1.FPEN [21:20] = 0b11: FP/SIMD instructions do not trap at EL0 or EL1.
constexpr uint64_t k_cpacr_fpen = 3u << 20;

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
    uint64_t cpacr;
    asm volatile("mrs %0, cpacr_el1" : "=r"(cpacr));
    asm volatile("msr cpacr_el1, %0; isb" ::"r"(cpacr | k_cpacr_fpen));
    kprintf("mmu: %llu KB granule, %u-bit virtual addresses, kernel at 0x%llx (TTBR1)\n",
            (unsigned long long)(k_page_size >> 10), k_va_bits, (unsigned long long)k_kernel_base);
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
