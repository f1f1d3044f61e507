// The kernel's own view of physical memory: the direct map, provided by the
// architecture (i386: KERNEL_BASE + pa for the low part of physical memory).
#pragma once
#include "kernel/vm/physmem.h"

namespace toll::vm {

/// Physical address of a kernel direct-map address (inverse of phys_to_virt).
PhysAddr virt_to_phys(const void* kernel_address);

/// The highest physical address the direct map reaches (exclusive): memory
/// above it is not given to the physical allocator.
PhysAddr direct_map_limit();
} // namespace toll::vm
