// The machine-dependent page tables ("pmap", after BSD): the interface the
// core's virtual memory uses, implemented by each architecture. A pmap only
// records translations; which pages exist is the core's business. Ranges
// rather than single pages, and a size index on enter, let an architecture
// map a superpage (an arm64 L2 block or contiguous run) as one unit.
#pragma once
#include "kernel/arch/physmem.h"
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// Access rights of a mapping (combinable).
enum Prot : unsigned {
    k_prot_none = 0,
    k_prot_read = 1,
    k_prot_write = 2,
    k_prot_exec = 4,
    /// Not a right but a hint to pmap_enter: the caller knows the page's
    /// instructions are visible to instruction fetch already (it was synced
    /// since it was last written), so an executable mapping of it needs no
    /// instruction-cache sync. A port whose caches are coherent ignores it.
    k_prot_icache_clean = 8,
};

/// One address space's page tables (defined by the architecture).
struct Pmap;

/// The most mapping sizes any architecture offers (base page included).
constexpr unsigned k_max_page_sizes = 4;

/// How many mapping sizes this architecture can make, by size index ("psind",
/// after FreeBSD's pagesizes[]): 1 means base pages only (i386); arm64 says 3
/// (page, contiguous run, L2 block) always. vm.superpages=0 switches off the
/// reservations (reserv_enabled()) and so every promotion and superpage
/// fork, not the sizes the pmap can make. This is the core's one test for
/// superpage work: no #ifdef.
unsigned pmap_page_size_count();

/// The size in bytes of size index @p psind, in increasing order: index 0 is
/// k_page_size. @p psind must be below pmap_page_size_count(): the core
/// only asks for sizes it was told of, so any other index is a kernel bug
/// (an assertion, not a 0 that a caller might divide by).
size_t pmap_page_size(unsigned psind);

/// Creates the page tables of a new user address space (kernel part shared).
/// Returns nullptr when memory is short.
Pmap* pmap_create();

/// Frees the page tables of @p pmap (not the pages it maps).
void pmap_destroy(Pmap* pmap);

/// Maps user address @p va to physical address @p pa with @p prot.
///
/// Size index 0 maps one page and replaces any previous mapping of it (a
/// page inside a superpage demotes it first). A size index above 0 maps the
/// whole naturally aligned superpage at @p va (both @p va and @p pa aligned
/// to pmap_page_size(@p psind), every page of it ready) in one step, and only
/// where nothing is mapped yet: k_eexist otherwise. An executable mapping has
/// its instruction cache made coherent once for the whole size.
/// Returns k_enomem if a page table cannot be allocated, k_einval for a
/// misaligned superpage or a size the architecture lacks.
Errno pmap_enter(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot, unsigned psind = 0);

/// Receives each page that pmap_remove() unmapped, after its translation is
/// gone from the tables and the TLB.
using PmapPageSink = void (*)(void* context, uintptr_t va, PhysAddr pa);

/// Unmaps every page of [@p start, @p end) (page aligned) and hands each
/// mapped one to @p sink (may be null). A superpage wholly inside the range
/// goes as one unit; one that straddles an end is demoted first. Returns
/// k_enomem, having changed nothing, if a demotion needs a page table that
/// cannot be allocated.
Errno pmap_remove(Pmap* pmap, uintptr_t start, uintptr_t end, PmapPageSink sink, void* context);

/// Unmaps the one page at @p va: returns the physical page it mapped;
/// k_enoent if none was, k_enomem (nothing changed) if the superpage around
/// it could not be demoted.
inline Result<PhysAddr> pmap_remove_page(Pmap* pmap, uintptr_t va)
{
    Optional<PhysAddr> found;
    auto note = [](void* context, uintptr_t, PhysAddr pa) {
        *static_cast<Optional<PhysAddr>*>(context) = pa;
    };
    TRY(pmap_remove(pmap, va, va + k_page_size, note, &found));
    if (!found)
        return k_enoent;
    return found.value();
}

/// Changes the rights of every mapped page of [@p start, @p end) to @p prot.
/// A superpage wholly inside keeps its size (one entry or run rewritten,
/// one instruction-cache sync if it becomes executable and was not); one
/// straddling an end is demoted. A mapping that has the rights already is
/// left alone: no store, no TLB invalidation. Returns k_enomem, having
/// changed nothing, if a demotion needs a page table that cannot be
/// allocated.
Errno pmap_protect(Pmap* pmap, uintptr_t start, uintptr_t end, unsigned prot);

/// Tries to replace the pages mapped in the aligned superpage of size
/// @p psind around @p va by one mapping of that size. It succeeds only when
/// every page is mapped, physically contiguous and aligned, with identical
/// rights; otherwise nothing changes and the failure is counted. Returns
/// whether it promoted. The core calls it when a reservation fills.
bool pmap_promote(Pmap* pmap, uintptr_t va, unsigned psind);

/// What pmap_extract finds at an address.
struct Mapping {
    PhysAddr pa = 0;    ///< the address's own physical address (not its superpage's start)
    unsigned prot = 0;  ///< the mapping's k_prot_* rights (k_prot_none: mapped, no access)
    unsigned psind = 0; ///< the size index of the mapping that holds it
};

/// Looks up @p va: the mapping that holds it, or nothing if none does. When
/// psind is above 0, @p va is the start of that superpage only if aligned
/// to its size.
Optional<Mapping> pmap_extract(Pmap* pmap, uintptr_t va);

/// The number of TLB entries the present mappings of [@p start, @p end)
/// would need: one per page, contiguous run or block, from a walk of the
/// tables (the "reach" a superpage buys, whatever the emulator's TLB does).
size_t pmap_tlb_entries(Pmap* pmap, uintptr_t start, uintptr_t end);

/// The lowest address in [@p va, @p end) (page aligned) where a page is
/// mapped (PROT_NONE pages included), or @p end if none is. It skips a whole
/// missing page table at a time, so walking a sparse 8 MB stack costs a few
/// table probes rather than one lookup per page.
uintptr_t pmap_next_mapped(Pmap* pmap, uintptr_t va, uintptr_t end);

/// Makes every CPU stop using the translations of [@p start, @p end) (page
/// aligned) in @p pmap, and returns only once none can: a TLB shootdown.
/// pmap_enter (replacing a mapping), pmap_remove and pmap_protect call it
/// once per call, for the range they changed, after rewriting the tables and
/// before handing any page to a sink; the core may call it too. A port
/// chooses how: i386 interrupts (IPI) only the CPUs that may hold the space's
/// translations and waits for each to acknowledge; arm64 broadcasts TLBI ...IS
/// with DSB ISH. Above pmap_shootdown_ceiling() pages it flushes the whole
/// space instead of page by page. Counted in vm.tlb.shootdown.ranges, .pages,
/// .full (full flushes), .ipis (0 where the hardware broadcasts) and
/// .wait_cycles (the initiator's wait for the others).
void pmap_tlb_shootdown(Pmap* pmap, uintptr_t start, uintptr_t end);

/// The most pages pmap_tlb_shootdown invalidates one by one; a larger range
/// flushes the whole space (vm.tlb.ceiling=, the port's measured default).
size_t pmap_shootdown_ceiling();

/// Makes @p pmap (nullptr: none) the address space that user mode runs on
/// from the next return to user mode. Nothing happens when it is already the
/// current one. Whether it loads the translation-table base at once is the
/// port's choice: a port whose kernel runs on the process's tables loads it
/// here; a port (or layout) whose kernel keeps tables of its own only records
/// it for the return to user mode to load. Each port's pmap_activate shows which
/// it does, and the address-space chapter of the book compares them.
void pmap_activate(Pmap* pmap);

/// The pmap that is active now.
Pmap* pmap_current();

/// The lowest address above user space: user mappings lie below it.
uintptr_t user_space_limit();

} // namespace toll::arch
