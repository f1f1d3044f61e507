// Address-space identifiers on arm64 (Arm ARM, "Translation Lookaside
// Buffers" and TTBR0_EL1.ASID): each process's TLB entries are
// tagged with its ASID (its pages are non-global, nG), so switching TTBR0
// needs no TLB flush. ASIDs are handed out in order and recycled all at once
// when they run out (a rollover: a new generation and one full flush).
// arm64.asid=off goes back to one flush per switch; arm64.asid_bits=N
// pretends the CPU has only N bits, to make rollovers happen in tests.
#pragma once
#include "kernel/arch/physmem.h"
#include <stdint.h>

namespace toll::arm64::asid {

/// Reads arm64.asid and arm64.asid_bits, sizes the ASID space from
/// ID_AA64MMFR0_EL1.ASIDBits (16 bits or 8) and sets TCR_EL1.AS to match.
/// Called once from arch::cpu_init, after mmu_init.
void init();

/// Makes the table at @p l1_phys the user address space (TTBR0_EL1), with
/// the ASID recorded in @p context (a pmap's; 0 = none yet). A context from
/// an older generation gets a fresh ASID first, which at a rollover costs one
/// full TLB flush (vm.pmap.asid.rollovers). With ASIDs off every call flushes
/// the TLB. Counts vm.pmap.ttbr0_loads.
void activate(arch::PhysAddr l1_phys, uint64_t& context);

/// Makes TTBR0_EL1 the empty table (no process runs) under the reserved ASID 0.
void activate_none();

/// For a pmap changed while it is not the live one: entries the TLB holds
/// under its ASID may be stale. Marks @p context so that its next
/// activation first invalidates its ASID's entries (one TLBI ASIDE1,
/// vm.pmap.tlbi.asid), however many pages changed meanwhile.
void forget(uint64_t& context);

/// For a pmap being destroyed: invalidates the TLB entries of its ASID
/// (TLBI ASIDE1, vm.pmap.tlbi.asid) if it still has a live one.
void release(uint64_t& context);

/// True unless arm64.asid=off.
bool enabled();

/// The ASID width in use: 16 or 8, or fewer with arm64.asid_bits=.
unsigned bits();

/// The ASID of @p context if it is live in this generation, else 0.
unsigned live_asid(uint64_t context);

} // namespace toll::arm64::asid
