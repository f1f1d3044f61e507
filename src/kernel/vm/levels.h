// Memory levels a program can read as counters (vm.phys.available_pages):
// gauges computed when read, for the tests that check memory comes back.
#pragma once
#include <stddef.h>

namespace toll::vm {

/// The free pages plus the pages held but unused: by superpage reservations
/// (they go back to the free lists whenever memory is short) and the empty
/// slab pages the kernel heap keeps (one per size class at most). The gauge
/// vm.phys.available_pages computes it each time it is read. Cost:
/// O(reservations in use).
size_t available_pages();

} // namespace toll::vm
