// The arm64 pmap's hardware operations (maintenance.h): descriptor stores,
// TLB invalidation by range, instruction-cache maintenance by range.
#include "arch/arm64/maintenance.h"
#include "arch/arm64/mmu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"

namespace toll::arm64 {
namespace {

TOLL_COUNTER(g_pte_stores, "vm.pmap.pte_stores");
TOLL_COUNTER(g_icache_syncs, "vm.pmap.icache_syncs");
// The shootdown counters both ports keep: ranges invalidated on every CPU
// (each one batch, however many pages), the pages invalidated by address,
// the ranges that invalidated the whole address space instead, and the
// initiator's wait. arm64 broadcasts and sends no IPI, so its
// vm.tlb.shootdown.ipis is not even defined: it could only ever read 0.
TOLL_COUNTER(g_shootdown_ranges, "vm.tlb.shootdown.ranges");
TOLL_COUNTER(g_shootdown_pages, "vm.tlb.shootdown.pages");
TOLL_COUNTER(g_shootdown_full, "vm.tlb.shootdown.full");
// The initiator's wait for the other CPUs: the DSB ISH after a batch, in
// counter ticks (instructions in deterministic mode).
TOLL_COUNTER(g_shootdown_wait, "vm.tlb.shootdown.wait_cycles");
TOLL_PARAM(g_param_ceiling, "vm.tlb.ceiling",
           "invalidate a range of more than this many pages by flushing the whole address "
           "space (TLBI ASIDE1IS) instead of one TLBI per page (default 64)");

/// Above this many pages a range is invalidated with one TLBI ASIDE1IS
/// instead of one TLBI per page (an L2 promotion would otherwise send 512,
/// or 2048 with a 16 KB granule). FreeBSD loops per page; Linux's arm64
/// __flush_tlb_range switches to flushing the whole ASID above a threshold
/// too (512 pages at 4 KB there). 64 is a choice, not a measurement: under
/// QEMU the whole-ASID flush is always cheaper, and the misses it causes
/// afterwards, which decide on hardware, are not modelled (tlb-arm64-*
/// rows of book/generated/results.csv).
constexpr uint64_t k_range_pages_max_default = 64;
uint64_t g_range_pages_max;

void add(Counter& c, uint64_t n = 1)
{
    __atomic_fetch_add(&c.value, n, __ATOMIC_RELAXED); // from several CPUs at once
}

uint64_t ticks()
{
    uint64_t t;
    asm volatile("isb\n"
                 "mrs %0, cntvct_el0"
                 : "=r"(t));
    return t;
}

} // namespace

void store_entry(uint64_t* slot, uint64_t value)
{
    g_pte_stores.add();
    *static_cast<volatile uint64_t*>(slot) = value;
}

size_t shootdown_ceiling()
{
    if (g_range_pages_max == 0)
        g_range_pages_max = param_get_ulong("vm.tlb.ceiling", k_range_pages_max_default);
    return g_range_pages_max;
}

void invalidate_range(unsigned asid, uint64_t va, uint64_t length, bool leaf_only)
{
    shootdown_ceiling();
    uint64_t pages = (length + k_page_size - 1) / k_page_size;
    add(g_shootdown_ranges);
    if (pages > g_range_pages_max) {
        add(g_shootdown_full);
        if (asid == k_tlbi_any_asid)
            invalidate_all();
        else
            invalidate_asid_everywhere(asid);
        return;
    }
    add(g_shootdown_pages, pages);
    tlbi_begin();
    for (uint64_t a = va; a < va + length; a += k_page_size)
        tlbi_page_nosync(asid, a, leaf_only);
    uint64_t before = ticks();
    tlbi_sync();
    add(g_shootdown_wait, ticks() - before);
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
    // IC IALLUIS: every CPU's instruction cache, since the thread that runs
    // the code may be on another CPU by then (D7.5.9.2); DSB ISH waits for it
    // on all of them.
    asm volatile("dsb ish\n"
                 "ic ialluis\n"
                 "dsb ish\n"
                 "isb" ::
                     : "memory");
}

} // namespace toll::arm64
