// Page reference counts: a flat table of 16-bit counts, one per physical page
// of the memory the allocator manages.
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

constexpr unsigned k_max_count = 0xffff;

uint16_t* g_counts;
PhysAddr g_lo, g_hi;

uint16_t* slot(PhysAddr pa)
{
    if (!g_counts || pa < g_lo || pa >= g_hi)
        return nullptr;
    return &g_counts[(pa - g_lo) / k_page_size];
}

} // namespace

Errno pageref_init(PhysAddr lo, PhysAddr hi)
{
    if (hi <= lo)
        return k_einval;
    uint64_t bytes = (hi - lo) / k_page_size * sizeof(uint16_t);
    unsigned order = PhysAllocator::order_for(bytes);
    if (order > PhysAllocator::k_max_order)
        return k_enomem; // more than the largest block the allocator has
    PhysAddr table = TRY(phys_allocator().alloc(order));
    g_counts = static_cast<uint16_t*>(phys_to_virt(table));
    memset(g_counts, 0, k_page_size << order);
    g_lo = lo;
    g_hi = hi;
    return k_ok;
}

bool pageref_ready()
{
    return g_counts != nullptr;
}

Optional<unsigned> pageref_get(PhysAddr pa)
{
    if (uint16_t* c = slot(pa))
        return unsigned(*c);
    return {};
}

void pageref_set_one(PhysAddr pa)
{
    if (uint16_t* c = slot(pa))
        *c = 1;
}

bool pageref_share(PhysAddr pa)
{
    uint16_t* c = slot(pa);
    if (!c || *c == 0 || *c == k_max_count)
        return false;
    ++*c;
    return true;
}

unsigned pageref_release(PhysAddr pa)
{
    uint16_t* c = slot(pa);
    if (!c || *c <= 1) {
        if (c)
            *c = 0;
        return 0;
    }
    return --*c;
}

} // namespace toll::vm
