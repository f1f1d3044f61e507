// The rest of the arm64 direct map (kernel/arch/kmem.h; phys_to_virt is in
// physmem.cpp): the upper half's map of RAM (mmu.h), as far as the device
// tree's memory reaches.
#include "kernel/arch/kmem.h"
#include "arch/arm64/board.h"
#include "arch/arm64/mmu.h"

namespace toll::arch {

PhysAddr virt_to_phys(const void* kernel_address)
{
    return reinterpret_cast<uintptr_t>(kernel_address) - arm64::k_kernel_base;
}

PhysAddr direct_map_limit()
{
    PhysAddr end = 0;
    const BootInfo& info = arm64::boot_info();
    for (size_t i = 0; i < info.region_count; ++i) {
        const MemRegion& r = info.regions[i];
        if (r.base + r.length > end)
            end = r.base + r.length;
    }
    // Only the identity map's RAM window is reachable (mmu.h).
    return end < arm64::k_ram_map_end ? end : arm64::k_ram_map_end;
}

PhysAddr allocatable_floor()
{
    return 0; // what the device tree reserves is marked so in the map itself
}

} // namespace toll::arch
