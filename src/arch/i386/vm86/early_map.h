// The seed's crash, made an explicit ordering: FreeBSD's getmemsize() called
// pmap_kenter(), which writes through page tables that did not exist yet at
// that point of a loaderless boot, and the machine faulted (seed 000). Toll's
// early mappings state what they need, and say so with a PANIC when called
// too soon instead of faulting.
#pragma once
#include <stdint.h>

namespace toll::i386 {

/// Says that i386_boot has built the direct map (direct_map_init): from now
/// on early_map_page may reach any physical page below its limit.
void early_map_enable();

/// Whether early_map_enable has run.
bool early_map_ready();

/// A kernel pointer to the physical page at @p pa, for boot code that must
/// look at memory before the allocator runs (getmemsize_verify's memory
/// test). It goes through the direct map, so it requires early_map_enable:
/// called before that, or for a page beyond the direct map, it panics with
/// a message saying which ordering was broken.
volatile uint32_t* early_map_page(uint64_t pa);

/// For the ktest that proves the assertion: sets the readiness flag and
/// returns the old one.
bool early_map_set_ready_for_test(bool ready);

} // namespace toll::i386
