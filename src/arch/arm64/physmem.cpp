// The arm64 kernel's direct map (kernel/arch/physmem.h): the upper half maps
// physical address p at KERNEL_VA_BASE + p (mmu.h).
#include "kernel/arch/physmem.h"
#include "arch/arm64/layout.h"

namespace toll::arch {

void* phys_to_virt(PhysAddr pa)
{
    return reinterpret_cast<void*>(static_cast<uintptr_t>(pa) + KERNEL_VA_BASE);
}

} // namespace toll::arch
