// The arm64 pmap's hardware operations (maintenance.h): descriptor stores,
// TLB invalidation by range, instruction-cache maintenance by range.
#include "arch/arm64/maintenance.h"
#include "arch/arm64/mmu.h"
#include "kernel/kern/counters.h"

namespace toll::arm64 {
namespace {

TOLL_COUNTER(g_pte_stores, "vm.pmap.pte_stores");
TOLL_COUNTER(g_icache_syncs, "vm.pmap.icache_syncs");

/// Above this many pages a range is invalidated with one TLBI VMALLE1
/// instead of one TLBI per page (an L2 promotion would otherwise send 512,
/// or 2048 with a 16 KB granule). FreeBSD loops per page; Linux switches to
/// a whole flush above a similar threshold.
constexpr uint64_t k_range_pages_max = 128;

} // namespace

void store_entry(uint64_t* slot, uint64_t value)
{
    g_pte_stores.add();
    *static_cast<volatile uint64_t*>(slot) = value;
}

void invalidate_range(uint64_t va, uint64_t length)
{
    if (length / k_page_size <= k_range_pages_max) {
        for (uint64_t a = va; a < va + length; a += k_page_size)
            invalidate_page(a);
        return;
    }
    invalidate_all();
}

void sync_icache_range(const void* start, size_t length)
{
    g_icache_syncs.add();
    // Arm ARM D7.5.9 (instruction cache coherency): clean the new code to the
    // point of unification line by line (CTR_EL0.DminLine [19:16] is log2 of
    // the smallest data-cache line in words), then invalidate the
    // instruction caches once, whatever the length.
    uint64_t ctr;
    asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
    uint64_t line = 4u << ((ctr >> 16) & 0xF);
    auto first = reinterpret_cast<uint64_t>(start) & ~(line - 1);
    auto end = reinterpret_cast<uint64_t>(start) + length;
    for (uint64_t a = first; a < end; a += line)
        asm volatile("dc cvau, %0" ::"r"(a) : "memory");
    asm volatile("dsb ish\n"
                 "ic iallu\n"
                 "dsb nsh\n"
                 "isb" ::
                     : "memory");
}

} // namespace toll::arm64
