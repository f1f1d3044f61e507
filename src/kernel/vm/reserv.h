// Superpage reservations, after Navarro, Iyer, Druschel and Cox (OSDI 2002)
// and FreeBSD's vm_reserv: on the first fault in a naturally aligned stretch
// of an anonymous region, set aside a physically contiguous, equally aligned
// block and take that stretch's pages from it, so that once the stretch is
// fully populated the pmap can map it as one superpage. Machine-independent:
// the sizes come from pmap_page_size(), and nothing is reserved on an
// architecture that reports no superpage size or with vm.superpages=0.
#pragma once
#include "kernel/arch/physmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/result.h"
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

/// Returns the page for user address @p va (page aligned) of @p space, in
/// the region [@p region_start, @p region_end), taken from the reservation
/// that covers it; makes that reservation first if none does and a whole
/// aligned stretch fits in the region. The page is not cleared. Returns
/// nothing if no reservation applies or none can be made (reservations off,
/// no aligned stretch fits, memory too short to speculate, the page already
/// went elsewhere); the caller then allocates a page the ordinary way.
Optional<PhysAddr> reserv_alloc_page(VmSpace* space, uintptr_t va, uintptr_t region_start,
                                     uintptr_t region_end);

/// Tells the reservation layer that the page at @p va, taken from a
/// reservation, is now mapped: when that completes a run (or the whole
/// reservation) it asks the pmap to promote it.
void reserv_mapped(VmSpace* space, uintptr_t va, PhysAddr pa);

/// Takes back a page that no mapping uses any more: if @p pa belongs to a
/// reservation it stays reserved (a reservation with no page left in use
/// goes back to the allocator whole) and true is returned; false means the
/// caller frees it to the allocator itself.
bool reserv_free_page(PhysAddr pa);

/// Breaks every reservation of @p space (it is going away): unused pages go
/// back to the allocator one by one, pages still in use become ordinary ones.
void reserv_release_space(VmSpace* space);

/// Memory is short: breaks partly used reservations, oldest first, returning
/// their unused pages to the allocator, until one was broken. Returns the
/// number of pages returned (0 when there was nothing to break).
size_t reserv_reclaim();

/// Pages set aside in reservations but not in use: free memory in all but name.
size_t reserv_unused_pages();

/// For the host tests: forget every reservation and re-read nothing (the
/// next reserv_enabled() call decides again from @p enabled).
void reserv_reset_for_tests(bool enabled);

} // namespace toll::vm
