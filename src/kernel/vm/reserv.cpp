// Superpage reservations (reserv.h): a small pool of records, each a
// naturally aligned physical block set aside for one aligned stretch of one
// address space, with a bitmap of the pages handed out from it.
#include "kernel/vm/reserv.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmspace.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_fullpop, "vm.reserv.fullpop");     // now fully populated (a gauge)
TOLL_COUNTER(g_freed, "vm.reserv.freed");         // returned whole, every page unused
TOLL_COUNTER(g_broken, "vm.reserv.broken");       // broken with some pages in use
TOLL_COUNTER(g_reclaimed, "vm.reserv.reclaimed"); // broken because memory was short
TOLL_PARAM(g_param_superpages, "vm.superpages",
           "1 (reserve aligned physical blocks and promote them to superpages where the "
           "architecture has them; the default) or 0 (base pages only)");

/// The most pages one reservation can hold: the allocator's largest block.
constexpr unsigned k_max_pages = 1u << PhysAllocator::k_max_order;
constexpr unsigned k_word_bits = 64;
/// How many reservations can exist at once. With 128 MB of memory and 2 MB
/// reservations, 64 would hold all of it.
constexpr unsigned k_max_reservations = 64;

struct Reservation {
    VmSpace* space = nullptr; ///< the owner; nullptr for a free record
    uintptr_t va = 0;         ///< the aligned virtual stretch it serves
    PhysAddr pa = 0;          ///< its aligned physical block
    unsigned psind = 0;       ///< the pmap size index of its size
    unsigned order = 0;       ///< log2 of its pages
    unsigned population = 0;  ///< pages handed out and not freed
    uint64_t popmap[k_max_pages / k_word_bits] = {};
    Reservation* next = nullptr; ///< the in-use list, oldest first

    unsigned pages() const { return 1u << order; }
    size_t bytes() const { return size_t(pages()) * k_page_size; }
    bool holds_pa(PhysAddr p) const { return p >= pa && p < pa + bytes(); }
    bool populated(unsigned i) const { return popmap[i / k_word_bits] >> (i % k_word_bits) & 1; }
    void set(unsigned i, bool on)
    {
        uint64_t bit = uint64_t(1) << (i % k_word_bits);
        popmap[i / k_word_bits] =
            on ? popmap[i / k_word_bits] | bit : popmap[i / k_word_bits] & ~bit;
    }
};

Reservation g_pool[k_max_reservations];
Reservation* g_in_use; ///< oldest first
enum class State { unread, on, off };
State g_state = State::unread;

unsigned log2_pages(size_t bytes)
{
    unsigned order = 0;
    while ((size_t(k_page_size) << order) < bytes)
        ++order;
    return order;
}

// The largest size index whose block the allocator can hand out.
unsigned largest_psind()
{
    unsigned best = 0;
    for (unsigned psind = 1; psind < pmap_page_size_count(); ++psind)
        if (log2_pages(pmap_page_size(psind)) <= PhysAllocator::k_max_order)
            best = psind;
    return best;
}

Reservation* find_va(VmSpace* space, uintptr_t va)
{
    for (Reservation* r = g_in_use; r; r = r->next)
        if (r->space == space && va >= r->va && va - r->va < r->bytes())
            return r;
    return nullptr;
}

Reservation* find_pa(PhysAddr pa)
{
    for (Reservation* r = g_in_use; r; r = r->next)
        if (r->holds_pa(pa))
            return r;
    return nullptr;
}

void unlink(Reservation* gone)
{
    for (Reservation** link = &g_in_use; *link; link = &(*link)->next)
        if (*link == gone) {
            *link = gone->next;
            break;
        }
    *gone = Reservation{};
}

// Returns the unused pages of @p r to the allocator one by one; the pages
// in use become ordinary pages, freed one by one when their time comes.
size_t break_reservation(Reservation* r)
{
    size_t returned = 0;
    for (unsigned i = 0; i < r->pages(); ++i)
        if (!r->populated(i)) {
            phys_allocator().free(r->pa + PhysAddr(i) * k_page_size, 0);
            ++returned;
        }
    if (r->population == r->pages())
        g_fullpop.value--;
    if (r->population == 0) {
        g_freed.add();
    } else {
        g_broken.add();
    }
    unlink(r);
    return returned;
}

// Makes a reservation of size index @p psind for the stretch at @p base.
Reservation* make_reservation(VmSpace* space, uintptr_t base, unsigned psind)
{
    Reservation* r = nullptr;
    for (Reservation& candidate : g_pool)
        if (!candidate.space) {
            r = &candidate;
            break;
        }
    if (!r)
        return nullptr;
    unsigned order = log2_pages(pmap_page_size(psind));
    // Speculation is for when memory is plentiful: keep an eighth free.
    PhysAllocator& phys = phys_allocator();
    if (phys.free_pages() < (size_t(1) << order) + phys.total_pages() / 8)
        return nullptr;
    Result<PhysAddr> pa = phys.alloc(order);
    if (!pa)
        return nullptr;
    *r = Reservation{};
    r->space = space;
    r->va = base;
    r->pa = pa.value();
    r->psind = psind;
    r->order = order;
    Reservation** link = &g_in_use;
    while (*link)
        link = &(*link)->next;
    *link = r;
    return r;
}

} // namespace

bool reserv_enabled()
{
    if (g_state == State::unread) {
        g_state = largest_psind() > 0 && param_get_ulong("vm.superpages", 1) != 0 ? State::on
                                                                                  : State::off;
        if (g_state == State::on)
            phys_allocator().set_reclaim_hook(reserv_reclaim);
    }
    return g_state == State::on;
}

size_t reserv_alignment(size_t length)
{
    if (!reserv_enabled())
        return k_page_size;
    for (unsigned psind = largest_psind(); psind > 0; --psind)
        if (pmap_page_size(psind) <= length)
            return pmap_page_size(psind);
    return k_page_size;
}

Optional<PhysAddr> reserv_alloc_page(VmSpace* space, uintptr_t va, uintptr_t region_start,
                                     uintptr_t region_end)
{
    if (!reserv_enabled())
        return {};
    Reservation* r = find_va(space, va);
    // The largest size whose aligned stretch lies inside the region and
    // whose block the allocator still has.
    for (unsigned psind = largest_psind(); !r && psind > 0; --psind) {
        size_t size = pmap_page_size(psind);
        uintptr_t base = va & ~uintptr_t(size - 1);
        if (base >= region_start && base + size <= region_end && base + size > base)
            r = make_reservation(space, base, psind);
    }
    if (!r)
        return {};
    unsigned i = unsigned((va - r->va) / k_page_size);
    if (r->populated(i))
        return {}; // its page went elsewhere (a copy-on-write copy)
    r->set(i, true);
    if (++r->population == r->pages())
        g_fullpop.add();
    return r->pa + PhysAddr(i) * k_page_size;
}

void reserv_mapped(VmSpace* space, uintptr_t va, PhysAddr pa)
{
    Reservation* r = find_pa(pa);
    if (!r || r->space != space)
        return;
    // LAB superpages BEGIN: when every page of the aligned run around va is populated in r, ask the pmap to promote the run (size index 1);
    // LAB superpages HINT: when r is larger than a run and every one of its pages is populated, ask it to promote r's own size too
    // The run around va, if the reservation is bigger than a run.
    unsigned run_pages = unsigned(pmap_page_size(1) / k_page_size);
    unsigned first = unsigned((va - r->va) / k_page_size) & ~(run_pages - 1);
    bool run_full = true;
    for (unsigned i = first; run_full && i < first + run_pages; ++i)
        run_full = r->populated(i);
    if (run_full)
        pmap_promote(space->pmap, va, 1);
    if (r->psind > 1 && r->population == r->pages())
        pmap_promote(space->pmap, va, r->psind);
    // LAB superpages STUB
    // (void)va;
    // LAB superpages END
}

bool reserv_free_page(PhysAddr pa)
{
    Reservation* r = find_pa(pa);
    if (!r)
        return false;
    unsigned i = unsigned((pa - r->pa) / k_page_size);
    if (!r->populated(i))
        return false; // not handed out by it: a bug elsewhere; let the allocator judge
    if (r->population == r->pages())
        g_fullpop.value--;
    r->set(i, false);
    if (--r->population == 0) {
        phys_allocator().free(r->pa, r->order); // whole again: one block back
        g_freed.add();
        unlink(r);
    }
    return true;
}

void reserv_release_space(VmSpace* space)
{
    for (Reservation* r = g_in_use; r;) {
        Reservation* next = r->next;
        if (r->space == space) {
            if (r->population == 0) {
                phys_allocator().free(r->pa, r->order);
                g_freed.add();
                unlink(r);
            } else {
                break_reservation(r);
            }
        }
        r = next;
    }
}

size_t reserv_reclaim()
{
    for (Reservation* r = g_in_use; r; r = r->next)
        if (r->population < r->pages()) {
            g_reclaimed.add();
            return break_reservation(r);
        }
    return 0;
}

size_t reserv_unused_pages()
{
    size_t unused = 0;
    for (Reservation* r = g_in_use; r; r = r->next)
        unused += r->pages() - r->population;
    return unused;
}

void reserv_reset_for_tests(bool enabled)
{
    for (Reservation& r : g_pool)
        r = Reservation{};
    g_in_use = nullptr;
    g_state = enabled ? State::on : State::off;
    phys_allocator().set_reclaim_hook(enabled ? reserv_reclaim : nullptr);
}

} // namespace toll::vm
