// Page reference counts: how many user mappings share each physical page, so
// that fork can share pages copy-on-write and the last unmapping frees them.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/vm/arch.h"
#include <stdint.h>

namespace toll::vm {

/// Sets up one count per page of [@p lo, @p hi) (page aligned), all zero.
/// The table comes from the physical allocator (2 bytes per page, 16 KB for
/// 32 MB). Returns k_ok; k_einval for an empty range; k_enomem when the
/// table cannot be allocated (fork then copies).
Errno pageref_init(PhysAddr lo, PhysAddr hi);

/// True when pageref_init succeeded: copy-on-write is possible.
bool pageref_ready();

/// The number of mappings of the page at @p pa (0 for a free page); nothing
/// for a page outside the table, which is never shared (no count is kept
/// for it: callers treat it as private, as pageref_release does).
Optional<unsigned> pageref_get(PhysAddr pa);

/// Records a fresh private page: exactly one mapping.
void pageref_set_one(PhysAddr pa);

/// One more mapping of @p pa shares it (fork). Returns false, changing
/// nothing, if the count would overflow (the caller copies instead).
bool pageref_share(PhysAddr pa);

/// Drops one mapping of @p pa; returns the mappings left. The caller frees
/// the page when it returns 0. A page outside the table counts as private.
unsigned pageref_release(PhysAddr pa);

} // namespace toll::vm
