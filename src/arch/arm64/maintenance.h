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

/// Invalidates the TLB entries, leaf and walk-cache, that translate any page
/// of [@p va, @p va + @p length): one TLBI per page up to a threshold, one
/// whole-TLB invalidation above it (vm.pmap.tlbi.page, vm.pmap.tlbi.all).
void invalidate_range(uint64_t va, uint64_t length);

/// Makes the instructions in [@p start, @p start + @p length) (a kernel
/// address) visible to instruction fetches: cleans the data cache to the
/// point of unification line by line, then one instruction-cache
/// invalidation. Counted once per call in vm.pmap.icache_syncs, whatever the
/// length: that is what a contiguous run saves.
void sync_icache_range(const void* start, size_t length);

} // namespace toll::arm64
