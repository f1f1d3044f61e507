// Address-space identifiers on arm64 (Arm ARM, "Translation Lookaside
// Buffers" and TTBR0_EL1.ASID): each process's TLB entries are tagged with
// its ASID (its pages are non-global, nG), so switching TTBR0 needs no TLB
// flush. ASIDs come in generations, as in Linux's arm64 allocator: handed
// out in order, and when they run out a new generation begins (a rollover)
// in which the ASIDs the CPUs are running stay with their address spaces and
// every CPU empties its own TLB once, at its next switch (asid.cpp).
// arm64.asid=off goes back to one flush per switch; arm64.asid_bits=N
// pretends the CPU has only N bits, to make rollovers happen in tests;
// arm64.asid_check=1 checks every switch.
#pragma once
#include "arch/arm64/mmu.h"
#include "kernel/arch/physmem.h"
#include <stdint.h>

namespace toll::arm64::asid {

/// Reads arm64.asid and arm64.asid_bits, sizes the ASID space from
/// ID_AA64MMFR0_EL1.ASIDBits (16 bits or 8) and sets TCR_EL1.AS to match.
/// Called once from arch::cpu_init, after mmu_init.
void init();

/// Makes the table at @p l1_phys this CPU's user address space (TTBR0_EL1),
/// with the ASID recorded in @p context (a pmap's; 0 = none yet). A context
/// from an older generation gets an ASID of this one first (the same one if
/// it is free or was kept for it), which may begin a new generation
/// (vm.pmap.asid.rollovers); the first switch of each CPU after a rollover
/// empties that CPU's TLB (vm.pmap.asid.rollover_flushes). With ASIDs off
/// every call flushes this CPU's TLB. Counts vm.pmap.ttbr0_loads. Called
/// with interrupts off.
void activate(arch::PhysAddr l1_phys, uint64_t& context);

/// Makes TTBR0_EL1 the empty table (no process runs) under the reserved
/// ASID 0; nothing is kept for this CPU at a rollover while it stays so.
void activate_none();

/// What tlb_tag() returns for a pmap that has never run: no TLB holds any
/// of its entries, so nothing needs invalidating.
constexpr unsigned k_tag_none = ~0u;
/// What tlb_tag() returns with ASIDs off: invalidate by address, any ASID.
constexpr unsigned k_tag_any = k_tlbi_any_asid;

/// The ASID under which any CPU's TLB may hold entries of the pmap whose
/// context is @p context: the one to name in a broadcast invalidation by
/// address (TLBI VAE1IS). Its generation does not matter: a CPU that ran
/// it in an older generation still runs it (the ASID was kept for it) or
/// empties its TLB before it takes any ASID of the new one.
unsigned tlb_tag(uint64_t context);

/// For a pmap being destroyed: invalidates the TLB entries of its ASID
/// (TLBI ASIDE1, vm.pmap.tlbi.asid) if it still has a live one.
void release(uint64_t& context);

/// True unless arm64.asid=off.
bool enabled();

/// The ASID width in use: 16 or 8, or fewer with arm64.asid_bits=.
unsigned bits();

/// The ASID of @p context if it is live in this generation, else 0.
unsigned live_asid(uint64_t context);

/// How many rollover flushes CPU @p cpu has made (each CPU at most one per
/// rollover).
uint64_t rollover_flushes_on(unsigned cpu);

} // namespace toll::arm64::asid
