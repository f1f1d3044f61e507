// Page reference counts: a flat table of 16-bit counts, one per physical page
// of the memory the allocator manages. Two address spaces can share a page
// (fork) and change its count from two CPUs at once, so every change is an
// atomic read-modify-write on the count itself: no lock, and no order to
// keep with the address spaces' locks.
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmobject.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

constexpr unsigned k_max_count = 0xffff;

uint16_t* g_counts;
uint8_t* g_flags; // per page: k_flag_*
PhysAddr g_lo, g_hi;
constexpr uint8_t k_flag_icache_clean = 1, k_flag_writable_shared = 2;

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
    uint64_t flag_bytes = (hi - lo) / k_page_size;
    unsigned flag_order = PhysAllocator::order_for(flag_bytes);
    Result<PhysAddr> flags = phys_allocator().alloc(flag_order);
    if (!flags) {
        phys_allocator().free(table, order);
        return flags.error();
    }
    g_counts = static_cast<uint16_t*>(phys_to_virt(table));
    memset(g_counts, 0, k_page_size << order);
    g_flags = static_cast<uint8_t*>(phys_to_virt(flags.value()));
    memset(g_flags, 0, k_page_size << flag_order);
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

bool page_icache_clean(PhysAddr pa)
{
    if (!g_flags || pa < g_lo || pa >= g_hi)
        return false;
    uint8_t f = __atomic_load_n(&g_flags[(pa - g_lo) / k_page_size], __ATOMIC_ACQUIRE);
    return f == k_flag_icache_clean;
}

namespace {
void change_flags(PhysAddr pa, uint8_t set, uint8_t clear)
{
    if (!g_flags || pa < g_lo || pa >= g_hi)
        return;
    uint8_t* f = &g_flags[(pa - g_lo) / k_page_size];
    __atomic_fetch_and(f, uint8_t(~clear), __ATOMIC_ACQ_REL);
    __atomic_fetch_or(f, set, __ATOMIC_ACQ_REL);
}
} // namespace

void page_set_icache_clean(PhysAddr pa, bool clean)
{
    if (clean)
        change_flags(pa, k_flag_icache_clean, 0);
    else
        change_flags(pa, 0, k_flag_icache_clean);
}

void page_set_writable_shared(PhysAddr pa, bool writable)
{
    if (writable)
        change_flags(pa, k_flag_writable_shared, k_flag_icache_clean);
    else
        change_flags(pa, 0, k_flag_writable_shared | k_flag_icache_clean);
}

} // namespace toll::vm
