// Page reference counts: a flat table of 16-bit counts, one per physical page
// of the memory the allocator manages. Two address spaces can share a page
// (fork) and change its count from two CPUs at once, so every change is an
// atomic read-modify-write on the count itself: no lock, and no order to
// keep with the address spaces' locks.
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
        return unsigned(__atomic_load_n(c, __ATOMIC_RELAXED));
    return {};
}

void pageref_set_one(PhysAddr pa)
{
    if (uint16_t* c = slot(pa))
        __atomic_store_n(c, uint16_t(1), __ATOMIC_RELAXED);
}

bool pageref_share(PhysAddr pa)
{
    uint16_t* c = slot(pa);
    if (!c)
        return false;
    uint16_t n = __atomic_load_n(c, __ATOMIC_RELAXED);
    do {
        if (n == 0 || n == k_max_count)
            return false;
    } while (!__atomic_compare_exchange_n(c, &n, uint16_t(n + 1), true, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return true;
}

unsigned pageref_release(PhysAddr pa)
{
    uint16_t* c = slot(pa);
    if (!c)
        return 0;
    // Acquire-release: whoever sees the count drop to 0 frees the page, and
    // must see every write the other sharers made to it before.
    uint16_t n = __atomic_load_n(c, __ATOMIC_RELAXED);
    uint16_t next;
    do {
        next = n <= 1 ? 0 : uint16_t(n - 1);
    } while (!__atomic_compare_exchange_n(c, &n, next, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    return next;
}

} // namespace toll::vm
