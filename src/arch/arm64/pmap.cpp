// The arm64 pmap (kernel/vm/pmap.h). arm64 user space needs the MMU: not
// implemented yet. Until it is, no user address space can be made, so
// spawn and fork fail cleanly with ENOMEM instead of pretending to work.
#include "kernel/vm/pmap.h"
#include "kernel/vm/phys.h"

namespace toll::vm {

/// Empty for now: the MMU is off, so there are no page tables to hold.
struct Pmap {};

Pmap* pmap_create()
{
    return nullptr; // arm64 user space needs the MMU: not implemented yet
}

void pmap_destroy(Pmap*) {}

Errno pmap_enter(Pmap*, uintptr_t, PhysAddr, unsigned)
{
    return k_enomem;
}

PhysAddr pmap_remove(Pmap*, uintptr_t)
{
    return PhysAllocator::k_none;
}

void pmap_protect(Pmap*, uintptr_t, unsigned) {}

bool pmap_extract(Pmap*, uintptr_t, PhysAddr*, unsigned*)
{
    return false;
}

void pmap_activate(Pmap*) {}

Pmap* pmap_current()
{
    return nullptr;
}

uintptr_t user_space_limit()
{
    return 0; // no user space at all until the MMU is on
}

} // namespace toll::vm
