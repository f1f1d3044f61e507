// The rest of the arm64 direct map (kernel/vm/kmem.h; phys_to_virt is in
// physmem.cpp): identity while the MMU is off, as far as the device tree's memory.
#include "arch/arm64/board.h"
#include "kernel/vm/kmem.h"

namespace toll::vm {

PhysAddr virt_to_phys(const void* kernel_address)
{
    return reinterpret_cast<uintptr_t>(kernel_address);
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
    return end;
}

} // namespace toll::vm
