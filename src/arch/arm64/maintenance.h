// The hardware work the arm64 pmap pays for, each counted where it is paid:
// descriptor stores, TLB invalidation over a range, and instruction-cache
// maintenance over a range. pmap.cpp calls only these (and mmu.h), so the
// host tests can replace them with stubs that log every call.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::arm64 {

/// Stores descriptor @p value in the table entry @p slot (vm.pmap.pte_stores).
/// The store is ordered before any later TLB invalidation by that call's
/// barrier (invalidate_page and invalidate_range begin with DSB ISHST).
void store_entry(uint64_t* slot, uint64_t value);

/// Invalidates on every CPU the TLB entries under ASID @p asid
/// (k_tlbi_any_asid: any) that translate any page of [@p va, @p va +
/// @p length): the last-level ones only if @p leaf_only, walk-cache entries
/// too if not. The broadcast forms, no interrupt to any CPU: one TLBI per
/// page and a single DSB ISH for the batch, up to shootdown_ceiling() pages,
/// above which one TLBI ASIDE1IS drops the whole address space instead.
/// Counted as one range in vm.tlb.shootdown.ranges, its pages in
/// vm.tlb.shootdown.pages or one vm.tlb.shootdown.full, the DSB's wait in
/// vm.tlb.shootdown.wait_cycles.
void invalidate_range(unsigned asid, uint64_t va, uint64_t length, bool leaf_only);

/// The most pages invalidate_range invalidates one by one (vm.tlb.ceiling=,
/// default 64).
size_t shootdown_ceiling();

/// Makes the instructions in [@p start, @p start + @p length) (a kernel
/// address) visible to instruction fetches: cleans the data cache to the
/// point of unification line by line, then one instruction-cache
/// invalidation. Counted once per call in vm.pmap.icache_syncs, whatever the
/// length: that is what a contiguous run saves.
void sync_icache_range(const void* start, size_t length);

} // namespace toll::arm64
