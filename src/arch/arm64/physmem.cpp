// The arm64 kernel's direct map (kernel/vm/physmem.h). RAM is identity-mapped
// (mmu.h), so a physical address is already the kernel's pointer to it.
#include "kernel/vm/physmem.h"

namespace toll::vm {

void* phys_to_virt(PhysAddr pa)
{
    return reinterpret_cast<void*>(static_cast<uintptr_t>(pa));
}

} // namespace toll::vm
