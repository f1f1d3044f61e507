// How the architecture-independent core reaches physical memory: one accessor,
// provided by the arch in the kernel (its direct map) and by the host tests.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// A physical address. 64 bits on every architecture: i386 with PAE and arm64
/// both name memory above 4 GB even where the kernel cannot map it all.
using PhysAddr = uint64_t;

/// log2 of the page size: the unit of the physical allocator and of the
/// smallest mapping. 12 (4 KB) on i386; on arm64 the build chooses the
/// translation granule (TOLL_ARM64_GRANULE=4K or 16K) and passes 12 or 14 in
/// TOLL_PAGE_SHIFT. This is the only definition of the page size: everything
/// else, user programs included (through AT_PAGESZ), derives from it.
#ifdef TOLL_PAGE_SHIFT
constexpr unsigned k_page_shift = TOLL_PAGE_SHIFT;
#else
constexpr unsigned k_page_shift = 12;
#endif
/// The page size in bytes: 4 KB, or 16 KB on a 16 KB-granule arm64 kernel.
constexpr size_t k_page_size = size_t(1) << k_page_shift;

/// Returns a kernel pointer to physical address @p pa. In the kernel this is
/// the direct map, so it is valid for any address the arch handed to the
/// allocator, and consecutive physical addresses map to consecutive pointers.
/// In the host tests it points into an ordinary array. Implemented by the
/// arch (src/arch/<arch>/) or by the test; it costs an addition.
void* phys_to_virt(PhysAddr pa);

} // namespace toll::arch
