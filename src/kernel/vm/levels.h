// Memory levels a program can read as counters (vm.phys.available_pages):
// gauges computed when read, for the tests that check memory comes back.
#pragma once

namespace toll::vm {

/// Recomputes the memory gauges: vm.phys.available_pages, the free pages
/// plus the pages that superpage reservations hold but nobody uses yet (they
/// go back to the free lists whenever memory is short). Called before
/// counters are read from user space. Cost: O(reservations in use).
void levels_refresh();

} // namespace toll::vm
