// Superpage reservations (reserv.h): a small pool of records, each a
// naturally aligned physical block set aside for one aligned stretch of one
// region of one address space, with a bitmap of the pages handed out from
// it, and an index from physical address to record.
#include "kernel/vm/reserv.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "kernel/kern/spinlock.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmspace.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

uint64_t fullpop_now();
TOLL_GAUGE_COMPUTED(g_fullpop, "vm.reserv.fullpop", fullpop_now); // fully populated now
uint64_t unused_now();
TOLL_GAUGE_COMPUTED(g_unused, "vm.reserv.unused_pages", unused_now); // reserved, not in use
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
/// Speculation is for when memory is plentiful: a reservation is made only
/// while this fraction of memory (1/8) would stay free after it.
constexpr size_t k_spare_fraction = 8;

} // namespace

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
    bool full() const { return population == pages(); }
    bool populated(unsigned i) const { return popmap[i / k_word_bits] >> (i % k_word_bits) & 1; }
    void set(unsigned i, bool on)
    {
        uint64_t bit = uint64_t(1) << (i % k_word_bits);
        popmap[i / k_word_bits] =
            on ? popmap[i / k_word_bits] | bit : popmap[i / k_word_bits] & ~bit;
    }
    /// Whether the @p count pages from index @p first are all handed out.
    bool populated_range(unsigned first, unsigned count) const
    {
        for (unsigned i = first; i < first + count; ++i)
            if (!populated(i))
                return false;
        return true;
    }
    /// Whether none of the @p count pages from index @p first is handed out.
    bool unused_range(unsigned first, unsigned count) const
    {
        for (unsigned i = first; i < first + count; ++i)
            if (populated(i))
                return false;
        return true;
    }
    /// Whether its stretch overlaps [start, end).
    bool overlaps(uintptr_t start, uintptr_t end) const { return va < end && start < va + bytes(); }
};

namespace {

Reservation g_pool[k_max_reservations];
Reservation* g_in_use; ///< oldest first
enum class State { unread, on, off };
State g_state = State::unread;

// The physical-address index, as FreeBSD's vm_reserv_from_page finds a
// reservation from its segment's array: one byte per chunk of the smallest
// reservation size over the allocator's memory, holding the pool index + 1
// of the reservation that covers the chunk (0: none). Reservations are
// naturally aligned and never overlap, so a chunk has at most one.
uint8_t* g_index;
PhysAddr g_index_lo, g_index_hi;
unsigned g_chunk_shift;
static_assert(k_max_reservations < 256, "a pool index fits the index's bytes");

uint64_t fullpop_now()
{
    uint64_t n = 0;
    for (Reservation* r = g_in_use; r; r = r->next)
        n += r->full();
    return n;
}

uint64_t unused_now()
{
    return reserv_unused_pages();
}

// The largest size index whose block the allocator can hand out, worked
// out from the port's sizes once reserv_enabled() has read the state.
unsigned g_largest_psind;

unsigned find_largest_psind()
{
    unsigned best = 0;
    for (unsigned psind = 1; psind < pmap_page_size_count(); ++psind)
        if (PhysAllocator::order_for(pmap_page_size(psind)) <= PhysAllocator::k_max_order)
            best = psind;
    return best;
}

// Builds the index over the allocator's memory; false (reservations stay
// off) if there is no memory for it.
bool index_init()
{
    PhysAllocator& phys = phys_allocator();
    g_chunk_shift = unsigned(__builtin_ctzll(pmap_page_size(1))); // the smallest superpage
    g_index_lo = phys.lowest() & ~((PhysAddr(1) << g_chunk_shift) - 1);
    g_index_hi = phys.highest();
    if (g_index_hi <= g_index_lo)
        return false;
    uint64_t chunks = ((g_index_hi - g_index_lo) >> g_chunk_shift) + 1;
    Result<PhysAddr> table = phys.alloc(PhysAllocator::order_for(chunks), false);
    if (!table)
        return false;
    g_index = static_cast<uint8_t*>(phys_to_virt(table.value()));
    memset(g_index, 0, chunks);
    return true;
}

uint8_t* index_slot(PhysAddr pa)
{
    if (!g_index || pa < g_index_lo || pa >= g_index_hi)
        return nullptr;
    return &g_index[(pa - g_index_lo) >> g_chunk_shift];
}

// Writes @p value (a pool index + 1, or 0 for none) into the slot of every
// chunk of @p r's block: consecutive slots, so one memset of them.
void index_set(const Reservation* r, uint8_t value)
{
    PhysAddr lo = r->pa < g_index_lo ? g_index_lo : r->pa;
    PhysAddr hi = r->pa + r->bytes() > g_index_hi ? g_index_hi : r->pa + r->bytes();
    if (!g_index || lo >= hi)
        return;
    PhysAddr chunk = PhysAddr(1) << g_chunk_shift;
    memset(index_slot(lo), value, size_t((hi - lo + chunk - 1) >> g_chunk_shift));
}

// The reservation holding physical page @p pa, in constant time.
Reservation* find_pa(PhysAddr pa)
{
    uint8_t* slot = index_slot(pa);
    return slot && *slot ? &g_pool[*slot - 1] : nullptr;
}

// The reservation of @p space whose stretch holds @p va. A scan of the few
// reservations in use; the fault that needs it passes it on.
Reservation* find_va(VmSpace* space, uintptr_t va)
{
    for (Reservation* r = g_in_use; r; r = r->next)
        if (r->space == space && va >= r->va && va - r->va < r->bytes())
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
    index_set(gone, 0);
    *gone = Reservation{};
}

// Returns @p r's block to the allocator whole: no page of it is in use.
void free_whole(Reservation* r)
{
    phys_allocator().free(r->pa, r->order);
    g_freed.add();
    unlink(r);
}

// Returns the pages of @p r that are not handed out to the allocator, as
// the largest aligned blocks holding no page in use: a few frees, not one
// per page (a stack's reservation with three pages in use goes back in
// about as many blocks as it has orders). Returns how many pages went back.
size_t free_unused(const Reservation* r)
{
    size_t returned = 0;
    for (unsigned i = 0; i < r->pages();) {
        if (r->populated(i)) {
            ++i;
            continue;
        }
        unsigned order = 0;
        while (order < r->order && i % (2u << order) == 0 && r->unused_range(i, 2u << order))
            ++order;
        phys_allocator().free(r->pa + PhysAddr(i) * k_page_size, order);
        returned += size_t(1) << order;
        i += 1u << order;
    }
    return returned;
}

// Returns the unused pages of @p r to the allocator; the pages in use
// become ordinary pages, freed one by one when their time comes.
size_t break_reservation(Reservation* r)
{
    if (r->population == 0) {
        size_t pages = r->pages();
        free_whole(r);
        return pages;
    }
    size_t returned = free_unused(r);
    g_broken.add();
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
    unsigned order = PhysAllocator::order_for(pmap_page_size(psind));
    PhysAllocator& phys = phys_allocator();
    if (phys.free_pages() < (size_t(1) << order) + phys.total_pages() / k_spare_fraction)
        return nullptr;
    // Never by breaking another reservation: speculation pays for itself.
    Result<PhysAddr> pa = phys.alloc(order, false);
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
    index_set(r, uint8_t(r - g_pool + 1));
    return r;
}

// The index in @p r of its page for user address @p va.
unsigned page_index(const Reservation* r, uintptr_t va)
{
    return unsigned((va - r->va) / k_page_size);
}

// Hands out @p r's page for @p va, unless it is in use already (it went
// elsewhere: a copy-on-write copy made before this reservation).
Optional<ReservedPage> hand_out(Reservation* r, uintptr_t va)
{
    unsigned i = page_index(r, va);
    if (r->populated(i))
        return {};
    r->set(i, true);
    ++r->population;
    return ReservedPage{r->pa + PhysAddr(i) * k_page_size, r};
}

// Whether @p space maps every page of [start, end), each shared with
// another mapping (copy-on-write after fork): a stretch that was full, and
// that writes may copy page by page into a reservation of its own. A
// stretch with a page missing (a stack's, mostly unused) gets none.
bool all_shared(VmSpace* space, uintptr_t start, uintptr_t end)
{
    for (uintptr_t va = start; va < end; va += k_page_size) {
        Optional<Mapping> m = pmap_extract(space->pmap, va);
        if (!m || pageref_get(m.value().pa & ~PhysAddr(k_page_size - 1)).value_or(1) <= 1)
            return false;
    }
    return true;
}

// Promotes the aligned stretch of size index @p psind at @p base of @p r's
// stretch if every page of it is handed out, it lies inside the region
// [region_start, region_end), and the pmap maps r's pages there by smaller
// mappings. Returns whether it promoted.
bool try_promote(VmSpace* space, const Reservation* r, uintptr_t base, unsigned psind,
                 uintptr_t region_start, uintptr_t region_end, bool check_mapping)
{
    size_t size = pmap_page_size(psind);
    if (base < region_start || base + size > region_end || base + size < base)
        return false; // a superpage never spans two regions
    unsigned first = unsigned((base - r->va) / k_page_size);
    if (!(size == r->bytes() ? r->full() : r->populated_range(first, unsigned(size / k_page_size))))
        return false;
    if (check_mapping) {
        Optional<Mapping> m = pmap_extract(space->pmap, base);
        if (!m || m.value().psind >= psind ||
            (m.value().pa & ~PhysAddr(k_page_size - 1)) != r->pa + (base - r->va))
            return false;
    }
    return pmap_promote(space->pmap, base, psind);
}

// Guards the reservations: the pool, the in-use list and the index. Taken
// inside an address space's lock (vm.space, then vm.reserv) and around the
// page allocator's (vm.reserv, then vm.phys); the allocator's reclaim hook
// takes it with no allocator lock held (phys.cpp).
Spinlock g_reserv_lock("vm.reserv");

} // namespace

bool reserv_enabled()
{
    if (g_state == State::unread) {
        g_largest_psind = find_largest_psind();
        g_state = g_largest_psind > 0 && param_get_ulong("vm.superpages", 1) != 0 && index_init()
                      ? State::on
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
    for (unsigned psind = g_largest_psind; psind > 0; --psind)
        if (pmap_page_size(psind) <= length)
            return pmap_page_size(psind);
    return k_page_size;
}

Optional<ReservedPage> reserv_alloc_page(VmSpace* space, uintptr_t va, uintptr_t region_start,
                                         uintptr_t region_end)
{
    if (!reserv_enabled())
        return {};
    SpinGuard g(g_reserv_lock);
    Reservation* r = find_va(space, va);
    // The largest size whose aligned stretch lies inside the region, has
    // nothing mapped yet, and whose block the allocator still has.
    for (unsigned psind = g_largest_psind; !r && psind > 0; --psind) {
        size_t size = pmap_page_size(psind);
        uintptr_t base = va & ~uintptr_t(size - 1);
        if (base >= region_start && base + size <= region_end && base + size > base &&
            pmap_next_mapped(space->pmap, base, base + size) == base + size)
            r = make_reservation(space, base, psind);
    }
    return r ? hand_out(r, va) : Optional<ReservedPage>{};
}

Optional<ReservedPage> reserv_alloc_copy(VmSpace* space, uintptr_t va, uintptr_t region_start,
                                         uintptr_t region_end)
{
    if (!reserv_enabled())
        return {};
    SpinGuard g(g_reserv_lock);
    Reservation* r = find_va(space, va);
    if (r && r->populated(page_index(r, va))) {
        // Its page for va is the one being copied, still someone else's
        // too: from r, this stretch can never be uniform again. If all of
        // it is mapped and shared, every page may be copied in turn: into a
        // new reservation, which the last copy fills.
        if (!all_shared(space, r->va, r->va + r->bytes()))
            return {};
        break_reservation(r);
        r = nullptr;
    }
    for (unsigned psind = g_largest_psind; !r && psind > 0; --psind) {
        size_t size = pmap_page_size(psind);
        uintptr_t base = va & ~uintptr_t(size - 1);
        if (base >= region_start && base + size <= region_end && base + size > base &&
            all_shared(space, base, base + size))
            r = make_reservation(space, base, psind);
    }
    return r ? hand_out(r, va) : Optional<ReservedPage>{};
}

void reserv_mapped(VmSpace* space, Reservation* r, uintptr_t va, uintptr_t region_start,
                   uintptr_t region_end)
{
    SpinGuard g(g_reserv_lock);
    if (!r || r->space != space)
        return;
    // LAB superpages BEGIN: walk the size indices down from r->psind; for the first whose aligned stretch around va lies inside [region_start, region_end) and is fully populated in r, ask the pmap to promote it (pmap_promote), and stop if it did
    // LAB superpages HINT: the largest stretch is the whole reservation (r->full()); a smaller one is full when populated_range says so
    for (unsigned psind = r->psind; psind > 0; --psind) {
        uintptr_t base = va & ~uintptr_t(pmap_page_size(psind) - 1);
        if (try_promote(space, r, base, psind, region_start, region_end, false))
            return; // the largest full size: no smaller superpage first
    }
    // LAB superpages STUB
    // (void)va;
    // (void)region_start;
    // (void)region_end;
    // LAB superpages END
}

void reserv_repromote(VmSpace* space, uintptr_t start, uintptr_t end, uintptr_t region_start,
                      uintptr_t region_end)
{
    SpinGuard g(g_reserv_lock);
    for (Reservation* r = g_in_use; r; r = r->next) {
        if (r->space != space || !r->overlaps(start, end))
            continue;
        uintptr_t lo = start > r->va ? start : r->va;
        uintptr_t hi = end < r->va + r->bytes() ? end : r->va + r->bytes();
        for (unsigned psind = r->psind; psind > 0; --psind) {
            size_t size = pmap_page_size(psind);
            for (uintptr_t base = lo & ~uintptr_t(size - 1); base < hi; base += size)
                (void)try_promote(space, r, base, psind, region_start, region_end, true);
        }
    }
}

void reserv_break_range(VmSpace* space, uintptr_t start, uintptr_t end)
{
    SpinGuard g(g_reserv_lock);
    for (Reservation* r = g_in_use; r;) {
        Reservation* next = r->next;
        if (r->space == space && r->overlaps(start, end))
            break_reservation(r);
        r = next;
    }
}

void reserv_break_at(VmSpace* space, uintptr_t at)
{
    SpinGuard g(g_reserv_lock);
    Reservation* r = find_va(space, at);
    if (r && r->va != at)
        break_reservation(r);
}

bool reserv_free_page(PhysAddr pa)
{
    // Most pages freed belong to no reservation: the index says so without
    // the lock. A page being freed is its owner's, so no reservation can be
    // made around it meanwhile (they are made of free blocks only); one
    // that holds it may only be broken, which the locked look below sees.
    if (!find_pa(pa))
        return false;
    SpinGuard g(g_reserv_lock);
    Reservation* r = find_pa(pa);
    if (!r)
        return false;
    unsigned i = unsigned((pa - r->pa) / k_page_size);
    if (!r->populated(i))
        return false; // not handed out by it: a bug elsewhere; let the allocator judge
    r->set(i, false);
    if (--r->population == 0)
        free_whole(r); // whole again: one block back
    return true;
}

void reserv_release_space(VmSpace* space)
{
    SpinGuard g(g_reserv_lock);
    for (Reservation* r = g_in_use; r;) {
        Reservation* next = r->next;
        if (r->space == space)
            break_reservation(r);
        r = next;
    }
}

size_t reserv_reclaim()
{
    // From an allocation made under this lock (a reservation's own block
    // is taken without reclaim, but a page table's may not be): nothing to
    // give back from here, rather than a recursion.
    if (g_reserv_lock.held_here())
        return 0;
    SpinGuard g(g_reserv_lock);
    for (Reservation* r = g_in_use; r; r = r->next)
        if (!r->full()) {
            g_reclaimed.add();
            return break_reservation(r);
        }
    return 0;
}

size_t reserv_unused_pages()
{
    SpinGuard g(g_reserv_lock);
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
    g_index = nullptr; // the test's allocator owned it
    g_largest_psind = find_largest_psind();
    g_state = enabled && index_init() ? State::on : State::off;
    phys_allocator().set_reclaim_hook(g_state == State::on ? reserv_reclaim : nullptr);
}

} // namespace toll::vm
