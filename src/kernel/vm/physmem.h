// How the architecture-independent core reaches physical memory: one accessor,
// provided by the arch in the kernel (its direct map) and by the host tests.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::vm {

/// A physical address. 64 bits on every architecture: i386 with PAE and arm64
/// both name memory above 4 GB even where the kernel cannot map it all.
using PhysAddr = uint64_t;

/// The unit of the physical allocator and of the smallest mapping: 4 KB.
/// (An arm64 16 KB granule would change it here, and only here.)
constexpr size_t k_page_size = 4096;

/// Returns a kernel pointer to physical address @p pa. In the kernel this is
/// the direct map, so it is valid for any address the arch handed to the
/// allocator, and consecutive physical addresses map to consecutive pointers.
/// In the host tests it points into an ordinary array. Implemented by the
/// arch (src/arch/<arch>/) or by the test; it costs an addition.
void* phys_to_virt(PhysAddr pa);

} // namespace toll::vm
