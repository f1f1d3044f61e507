// vm_init: from the boot memory map to a working physical allocator.
#include "kernel/vm/vm_init.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/failpoint.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"

namespace toll::vm {
namespace {
// The top of user space under this boot's layout, readable from user space
// (tests adapt to it: 3 GB under 3/1, 4 GB less the trampoline under 4/4).
TOLL_GAUGE(g_user_limit, "vm.user_limit");
} // namespace

void vm_init(const BootInfo& info)
{
    const PhysAddr floor = allocatable_floor();
    PhysAllocator& phys = phys_allocator();
    PhysAddr limit = direct_map_limit();
    PhysAddr image_start, image_end;
    arch::kernel_image_range(&image_start, &image_end);
    // The allocator keeps its bitmaps in the first pages of each range, so
    // the kernel image must be cut out before a range is added, not after.
    PhysAddr lowest = ~PhysAddr(0), highest = 0; // what the allocator manages
    auto add_clipped = [&](uint64_t base, uint64_t end) {
        if (base < floor)
            base = floor;
        if (end > limit)
            end = limit;
        if (end > base) {
            phys.add_range(base, end - base);
            lowest = base < lowest ? base : lowest;
            highest = end > highest ? end : highest;
        }
    };
    // Cuts [hole_start, hole_end) out of [base, end) and adds the rest.
    auto add_around = [&](uint64_t base, uint64_t end, uint64_t hole_start, uint64_t hole_end,
                          auto&& next) {
        next(base, end < hole_start ? end : hole_start);
        next(base > hole_end ? base : hole_end, end);
    };
    uint64_t rd_start = info.extra_ramdisk_phys & ~uint64_t(k_page_size - 1);
    uint64_t rd_end = info.extra_ramdisk_phys + info.extra_ramdisk_size;
    auto add = [&](uint64_t base, uint64_t end) {
        add_around(base, end, image_start, image_end, [&](uint64_t b, uint64_t e) {
            if (info.extra_ramdisk_size)
                add_around(b, e, rd_start, rd_end, add_clipped);
            else
                add_clipped(b, e);
        });
    };
    bool any = false;
    for (size_t i = 0; i < info.region_count; ++i) {
        const MemRegion& r = info.regions[i];
        if (r.type == MemType::usable) {
            add(r.base, r.base + r.length);
            any = true;
        }
    }
    if (!any) {
        kprintf("vm: no memory map; assuming %llu MB\n",
                (unsigned long long)(k_safe_minimum_bytes >> 20));
        add(0, k_safe_minimum_bytes);
    }
    // Page reference counts for copy-on-write fork; without them fork copies.
    constexpr PhysAddr k_page_mask = k_page_size - 1;
    if (pageref_init(lowest & ~k_page_mask, (highest + k_page_mask) & ~k_page_mask) != k_ok)
        kprintf("vm: no memory for page reference counts; fork will copy\n");
    g_user_limit.set(user_space_limit());
    fail_alloc_init();
    kprintf("vm: %zu pages free of %zu; direct map %llu MB\n", phys.free_pages(),
            phys.total_pages(), (unsigned long long)(limit >> 20));
}

} // namespace toll::vm
