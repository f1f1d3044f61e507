// Superpage reservations, after Navarro, Iyer, Druschel and Cox (OSDI 2002)
// and FreeBSD's vm_reserv: on the first fault in a naturally aligned stretch
// of an anonymous region, set aside a physically contiguous, equally aligned
// block and take that stretch's pages from it, so that once the stretch is
// fully populated the pmap can map it as one superpage. Machine-independent:
// the sizes come from pmap_page_size(), and nothing is reserved on an
// architecture that reports no superpage size or with vm.superpages=0.
#pragma once
#include "kernel/kern/result.h"
#include "kernel/vm/arch.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::vm {

struct VmSpace;
class PhysAllocator;

/// True when reservations (and so promotions) are in use: the architecture
/// has a superpage size and the boot command line did not say
/// vm.superpages=0. Read once, at the first call.
bool reserv_enabled();

/// The alignment a new region of @p length bytes should get so that it can
/// hold a whole reservation: the largest reservation size not above
/// @p length, or k_page_size.
size_t reserv_alignment(size_t length);

/// A superpage reservation (reserv.cpp): an aligned physical block set
/// aside for one aligned stretch of one address space, inside one region.
struct Reservation;

/// A page handed out by a reservation, and the reservation it came from
/// (for reserv_mapped, so that it need not be looked up again).
struct ReservedPage {
    PhysAddr pa = 0;
    Reservation* from = nullptr;
};

/// Returns the page for user address @p va (page aligned) of @p space, in
/// the region [@p region_start, @p region_end), taken from the reservation
/// that covers it; makes that reservation first if none does, a whole
/// aligned stretch fits in the region and nothing of that stretch is mapped
/// yet (as FreeBSD's vm_reserv_alloc_page refuses a stretch whose object
/// already has pages in it). The page is not cleared. Returns nothing if no
/// reservation applies or none can be made (reservations off, no aligned
/// stretch fits, memory too short to speculate, the page already went
/// elsewhere); the caller then allocates a page the ordinary way.
Optional<ReservedPage> reserv_alloc_page(VmSpace* space, uintptr_t va, uintptr_t region_start,
                                         uintptr_t region_end);

/// Returns the page to copy @p space's page at @p va into (a copy-on-write
/// fault in the region [@p region_start, @p region_end)), taken from a
/// reservation so that once every page of the stretch has been copied the
/// stretch can be a superpage again, as FreeBSD's copy lands in the shadow
/// object's reservation. The stretch's own reservation serves if its page
/// for @p va is free; if that page is the one being copied (still shared),
/// the reservation can never make the stretch uniform again and is broken.
/// A new one, of the largest size that fits the region, is made only when
/// every page of its stretch is mapped and shared (the stretch was full, and
/// each page may be copied in turn); a stretch with pages missing, such as
/// a stack's, gets none, so fork followed by exec pays nothing for it.
/// Returns nothing when none applies; the caller allocates a page itself.
Optional<ReservedPage> reserv_alloc_copy(VmSpace* space, uintptr_t va, uintptr_t region_start,
                                         uintptr_t region_end);

/// Tells reservation @p r that its page for @p va is now mapped, in the
/// region [@p region_start, @p region_end). If that fills an aligned stretch
/// of a superpage size, it asks the pmap to promote the largest such stretch
/// that lies inside the region, trying the sizes from the reservation's own
/// downward: the fault that fills a whole reservation makes a block at once,
/// not a run first.
void reserv_mapped(VmSpace* space, Reservation* r, uintptr_t va, uintptr_t region_start,
                   uintptr_t region_end);

/// Tries again to promote the stretches of @p space's reservations that
/// overlap [@p start, @p end), all inside the region [@p region_start,
/// @p region_end): after an operation that may have made a demoted stretch
/// uniform again (a copy-on-write fault that took its page back, an
/// mprotect back to the old rights; a copy-on-write copy goes through
/// reserv_alloc_copy and reserv_mapped instead). As FreeBSD's pmap_enter does, only a
/// stretch whose reservation pages are all populated is tried.
void reserv_repromote(VmSpace* space, uintptr_t start, uintptr_t end, uintptr_t region_start,
                      uintptr_t region_end);

/// The region bookkeeping of [@p start, @p end) of @p space changes (an
/// unmap, a mapping placed over it, a region split at one of its ends):
/// every reservation of @p space whose stretch overlaps it and does not lie
/// inside it is broken (its unused pages go back to the allocator), so that
/// no reservation, and no superpage built from one, spans two regions. One
/// wholly inside goes when its last page is freed, or is broken here if
/// pages in use remain after the caller freed the range.
void reserv_break_range(VmSpace* space, uintptr_t start, uintptr_t end);

/// Breaks the reservation of @p space whose stretch has @p at strictly
/// inside it (a region is being split at @p at), if there is one.
void reserv_break_at(VmSpace* space, uintptr_t at);

/// Takes back a page that no mapping uses any more: if @p pa belongs to a
/// reservation it stays reserved (a reservation with no page left in use
/// goes back to the allocator whole) and true is returned; false means the
/// caller frees it to the allocator itself.
bool reserv_free_page(PhysAddr pa);

/// Breaks every reservation of @p space (it is going away): unused pages go
/// back to the allocator one by one, pages still in use become ordinary ones.
void reserv_release_space(VmSpace* space);

/// Memory is short: breaks the oldest partly used reservation, returning its
/// unused pages to the allocator. Returns the number of pages returned (0
/// when there was nothing to break). The allocator calls it, for any order,
/// until the block it was asked for exists or nothing is left to break.
size_t reserv_reclaim();

/// Pages set aside in reservations but not in use: free memory in all but
/// name. The gauge vm.reserv.unused_pages shows it (FreeBSD's
/// vm.reserv.partpopq in spirit), so that a leak check can add it to
/// vm.phys.free_pages and tell a reservation from a leak.
size_t reserv_unused_pages();

/// For the host tests: forget every reservation and re-read nothing (the
/// next reserv_enabled() call decides again from @p enabled).
void reserv_reset_for_tests(bool enabled);

} // namespace toll::vm
