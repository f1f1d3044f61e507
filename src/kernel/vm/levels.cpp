// The memory gauges behind vm.phys.available_pages (see levels.h).
#include "kernel/vm/levels.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/reserv.h"

namespace toll::vm {
namespace {

uint64_t available_now()
{
    return available_pages();
}
TOLL_GAUGE_COMPUTED(g_available, "vm.phys.available_pages", available_now);

} // namespace

size_t available_pages()
{
    return phys_allocator().free_pages() + reserv_unused_pages() + kmalloc_empty_pages();
}

} // namespace toll::vm
