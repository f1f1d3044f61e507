// Bringing up the virtual memory system at boot.
#pragma once
#include "kernel/kern/boot.h"

namespace toll::vm {

/// Feeds the physical allocator from the boot memory map: usable memory
/// above allocatable_floor() and below the end of the direct map, with the
/// kernel image and the extra ramdisk reserved out of it (before the
/// allocator writes anything, see PhysAllocator). With no map at all (a
/// loaderless boot before probing) it assumes a safe minimum,
/// k_safe_minimum_bytes. Then starts what stands on the allocator: page
/// reference counts, the fault injector.
void vm_init(const BootInfo& info);

/// What a loaderless boot assumes it has when nobody says otherwise.
constexpr uint64_t k_safe_minimum_bytes = 8u << 20;

} // namespace toll::vm
