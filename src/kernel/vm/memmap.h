// Cleaning up a physical memory map as firmware reports it: unsorted,
// overlapping, split into pieces. Arch-independent, host-tested.
#pragma once
#include "kernel/kern/boot.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::vm {

/// How strongly a memory type claims a range that two entries both cover:
/// anything the firmware reserves wins over usable memory, and bad memory
/// wins over everything (the rule Linux's and FreeBSD's sanitisers follow).
unsigned mem_type_precedence(MemType type);

/// Sanitises @p regions[0..count) in place: drops empty entries, gives each
/// byte covered by several entries the type of highest precedence, sorts by
/// base and merges neighbours of the same type that touch. At most
/// @p capacity entries are written (overlaps can split an entry in two);
/// returns the new count, or capacity + 1 if the result did not fit (the
/// first capacity entries are then valid, the rest lost). O(n^2) in count.
size_t memmap_sanitise(MemRegion* regions, size_t count, size_t capacity);

/// The bytes of @p regions[0..count) of type @p type (overlaps counted twice:
/// sanitise first).
uint64_t memmap_total(const MemRegion* regions, size_t count, MemType type);

} // namespace toll::vm
