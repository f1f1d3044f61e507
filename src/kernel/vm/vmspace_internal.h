// What the three files of address spaces share: vmspace.cpp (regions),
// fault.cpp (faults and copy-on-write) and fork.cpp (fork). Private to them.
#pragma once
#include "kernel/vm/vmspace.h"

namespace toll::vm {

/// Frees a page no mapping uses: back to its reservation, if it came from
/// one, else to the allocator.
void free_page(PhysAddr pa);

/// Maps a fresh zeroed page at @p page, of the region [region_start,
/// region_end), with @p prot. k_enomem when memory is short.
Errno zero_fill(VmSpace* space, uintptr_t page, unsigned prot, uintptr_t region_start,
                uintptr_t region_end);

} // namespace toll::vm
