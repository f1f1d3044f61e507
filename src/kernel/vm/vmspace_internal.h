// What the three files of address spaces share: vmspace.cpp (regions),
// fault.cpp (faults and copy-on-write) and fork.cpp (fork). Private to them.
#pragma once
#include "kernel/vm/vmspace.h"

namespace toll::vm {

/// Frees a page no mapping uses: back to its reservation, if it came from
/// one, else to the allocator.
void free_page(PhysAddr pa);

/// Maps a fresh zeroed page at @p page of @p region with @p prot. A
/// reservation for it may reach from the region's start to @p reserve_end
/// (the region's end, or beyond it for the heap); a superpage never leaves
/// the region. k_enomem when memory is short.
Errno zero_fill(VmSpace* space, uintptr_t page, unsigned prot, const Region* region,
                uintptr_t reserve_end);

} // namespace toll::vm
