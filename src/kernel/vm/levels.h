// Memory levels a program can read as counters (vm.phys.available_pages):
// gauges computed when read, for the tests that check memory comes back.
#pragma once

namespace toll::vm {

/// Recomputes the memory gauges: vm.phys.available_pages, the free pages
/// plus the pages held but unused: by superpage reservations (they go back
/// to the free lists whenever memory is short) and the empty slab pages the
/// kernel heap keeps (one per size class at most). Called before counters
/// are read from user space. Cost: O(reservations in use).
void levels_refresh();

} // namespace toll::vm
