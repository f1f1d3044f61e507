// The memory gauges behind vm.phys.available_pages (see levels.h).
#include "kernel/vm/levels.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/reserv.h"

namespace toll::vm {
namespace {
TOLL_COUNTER(g_available, "vm.phys.available_pages");
} // namespace

void levels_refresh()
{
    g_available.value =
        phys_allocator().free_pages() + reserv_unused_pages() + kmalloc_empty_pages();
}

} // namespace toll::vm
