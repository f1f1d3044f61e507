// The kernel's own view of physical memory: the direct map (a range of
// kernel addresses at a fixed offset from the physical memory they name) and
// which physical memory the allocator may use. The port implements these.
#pragma once
#include "kernel/arch/physmem.h"

namespace toll::arch {

/// Physical address of a kernel direct-map address (inverse of phys_to_virt).
PhysAddr virt_to_phys(const void* kernel_address);

/// The highest physical address the direct map reaches (exclusive): memory
/// above it is not given to the physical allocator.
PhysAddr direct_map_limit();

/// The lowest physical address the allocator may hand out: memory below it
/// belongs to the firmware or to the port (0 when the port needs none).
PhysAddr allocatable_floor();

} // namespace toll::arch
