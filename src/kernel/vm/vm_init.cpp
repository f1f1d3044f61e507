// vm_init: from the boot memory map to a working physical allocator, and
// the services that stand on it.
#include "kernel/vm/vm_init.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/arch.h"
#include "kernel/vm/failpoint.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"

namespace toll::vm {
namespace {
// The top of user space under this boot's layout, readable from user space
// (tests adapt to it: 3 GB under 3/1, 4 GB less the trampoline under 4/4).
TOLL_GAUGE(g_user_limit, "vm.user_limit");

// Adds the usable memory of @p info to the allocator, above the floor and
// below the end of the direct map, then reserves the kernel image and the
// extra ramdisk out of it. Nothing is written yet: the allocator is built
// at its first allocation, after the holes are cut (phys.h).
void add_usable_memory(const BootInfo& info)
{
    const PhysAddr floor = allocatable_floor(), limit = direct_map_limit();
    PhysAllocator& phys = phys_allocator();
    auto add_clipped = [&](uint64_t base, uint64_t end) {
        base = base < floor ? floor : base;
        end = end > limit ? limit : end;
        if (end > base)
            phys.add_range(base, end - base);
    };
    bool any = false;
    for (size_t i = 0; i < info.region_count; ++i) {
        const MemRegion& r = info.regions[i];
        if (r.type == MemType::usable) {
            add_clipped(r.base, r.base + r.length);
            any = true;
        }
    }
    if (!any) {
        kprintf("vm: no memory map; assuming %llu MB\n",
                (unsigned long long)(k_safe_minimum_bytes >> 20));
        add_clipped(0, k_safe_minimum_bytes);
    }
    PhysAddr image_start, image_end;
    arch::kernel_image_range(&image_start, &image_end);
    phys.reserve(image_start, image_end - image_start);
    if (info.extra_ramdisk_size)
        phys.reserve(info.extra_ramdisk_phys, info.extra_ramdisk_size);
}

// The services built on the allocator: page reference counts for
// copy-on-write fork (without them fork copies), the fault injector, and
// the user-space limit gauge.
void vm_services_init()
{
    PhysAllocator& phys = phys_allocator();
    constexpr PhysAddr k_page_mask = k_page_size - 1;
    if (pageref_init(phys.lowest() & ~k_page_mask, (phys.highest() + k_page_mask) & ~k_page_mask) !=
        k_ok)
        kprintf("vm: no memory for page reference counts; fork will copy\n");
    g_user_limit.set(user_space_limit());
    fail_alloc_init();
}

} // namespace

void vm_init(const BootInfo& info)
{
    add_usable_memory(info);
    vm_services_init();
    kprintf("vm: %zu pages free of %zu; direct map %llu MB\n", phys_allocator().free_pages(),
            phys_allocator().total_pages(), (unsigned long long)(direct_map_limit() >> 20));
}

} // namespace toll::vm
