// Bringing up the virtual memory system at boot.
#pragma once
#include "kernel/kern/boot.h"

namespace toll::vm {

/// Feeds the physical allocator from the boot memory map: usable memory
/// above 1 MB and below the end of the direct map, minus the kernel image.
/// With no map at all (a loaderless boot before probing) it assumes a safe
/// minimum, k_safe_minimum_bytes.
void vm_init(const BootInfo& info);

/// What a loaderless boot assumes it has when nobody says otherwise.
constexpr uint64_t k_safe_minimum_bytes = 8u << 20;

} // namespace toll::vm
