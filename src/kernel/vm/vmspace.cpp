// Address spaces: region bookkeeping, demand-zero faults, and fork, which
// shares pages copy-on-write (or copies them all, with vm.fork=copy).
#include "kernel/vm/vmspace.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/reserv.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_faults_zero_fill, "vm.faults.zero_fill");
TOLL_COUNTER(g_faults_refused, "vm.faults.refused");
TOLL_COUNTER(g_fork_pages_copied, "vm.fork.pages_copied");
TOLL_COUNTER(g_fork_pages_shared, "vm.fork.pages_shared");
TOLL_COUNTER(g_cow_copies, "vm.cow.copies");
TOLL_COUNTER(g_cow_reuses, "vm.cow.reuses");
TOLL_PARAM(g_param_fork, "vm.fork", "cow (share pages copy-on-write, the default) or copy");

// What fork does with the parent's pages (vm.fork=), read at the first fork.
enum class ForkMode { unread, cow, copy };
ForkMode g_fork_mode = ForkMode::unread;

bool fork_shares_pages()
{
    if (g_fork_mode == ForkMode::unread) {
        static const char* const names[] = {"cow", "copy"};
        g_fork_mode = param_get_choice("vm.fork", names, 0) == 1 ? ForkMode::copy : ForkMode::cow;
    }
    return g_fork_mode == ForkMode::cow && pageref_ready();
}

bool page_aligned(uintptr_t v)
{
    return (v & (k_page_size - 1)) == 0;
}

bool range_ok(uintptr_t start, size_t length)
{
    return page_aligned(start) && page_aligned(length) && length && start + length > start &&
           start + length <= user_space_limit();
}

// Frees a page no mapping uses: back to its reservation, if it came from
// one, else to the allocator.
void free_page(PhysAddr pa)
{
    if (!reserv_free_page(pa))
        phys_allocator().free(pa, 0);
}

// Drops @p space's mapping of @p pa; the page is freed with its last mapping.
void release_page(VmSpace* space, PhysAddr pa)
{
    if (pageref_release(pa) == 0)
        free_page(pa);
    --space->resident_pages;
}

// A page unmapped by pmap_remove: freed unless another space still maps it.
void release_unmapped(void* context, uintptr_t, PhysAddr pa)
{
    release_page(static_cast<VmSpace*>(context), pa);
}

// Unmaps the pages mapped in [start, end), freeing those no one else maps.
Errno free_pages(VmSpace* space, uintptr_t start, uintptr_t end)
{
    return pmap_remove(space->pmap, start, end, release_unmapped, space);
}

// A write to the page at @p page, mapped read-only to @p pa because fork
// shares it: the last sharer takes the page back writable in place; any
// other gets a private copy. k_enomem when memory is short.
Errno break_cow(VmSpace* space, uintptr_t page, PhysAddr pa, unsigned prot)
{
    if (pageref_get(pa).value_or(1) <= 1) { // outside the table: never shared
        if (Errno e = pmap_protect(space->pmap, page, page + k_page_size, prot); e != k_ok)
            return e;
        g_cow_reuses.add();
        return k_ok;
    }
    Result<PhysAddr> page_copy = phys_allocator().alloc(0);
    if (!page_copy)
        return page_copy.error();
    PhysAddr copy = page_copy.value();
    memcpy(phys_to_virt(copy), phys_to_virt(pa), k_page_size);
    if (Errno e = pmap_enter(space->pmap, page, copy, prot); e != k_ok) {
        phys_allocator().free(copy, 0);
        return e;
    }
    pageref_set_one(copy);
    pageref_release(pa); // shared: at least one mapping is left
    g_cow_copies.add();
    return k_ok;
}

// Maps a fresh zeroed page at @p page, of the region [region_start,
// region_end), with @p prot. k_enomem when memory is short.
Errno zero_fill(VmSpace* space, uintptr_t page, unsigned prot, uintptr_t region_start,
                uintptr_t region_end)
{
    // From the reservation of the page's aligned stretch if there is (or can
    // be) one, so that the stretch can become a superpage; else any page.
    Optional<PhysAddr> from_reservation = reserv_alloc_page(space, page, region_start, region_end);
    bool reserved = from_reservation.has_value();
    Result<PhysAddr> page_fresh =
        reserved ? Result<PhysAddr>(from_reservation.value()) : phys_allocator().alloc(0);
    if (!page_fresh)
        return page_fresh.error();
    PhysAddr fresh = page_fresh.value();
    memset(phys_to_virt(fresh), 0, k_page_size);
    if (Errno e = pmap_enter(space->pmap, page, fresh, prot); e != k_ok) {
        free_page(fresh);
        return e;
    }
    pageref_set_one(fresh);
    ++space->resident_pages;
    g_faults_zero_fill.add();
    if (reserved)
        reserv_mapped(space, page, fresh); // may complete a superpage
    return k_ok;
}

// Where reservations for faults in region @p r may end. A region's own end,
// except for the heap (the region the program break ends, once it has
// moved): brk grows it a little at a time, so a stretch that would hold a
// reservation is rarely inside it when its first page is touched. For the
// heap, a stretch may reach past the break up to the next region (or the
// stack's floor, which brk never crosses): its pages beyond the break stay
// reserved, unused, until the heap grows over them or memory runs short,
// as FreeBSD lets an anonymous object's reservation reach past its end.
uintptr_t reservation_end(VmSpace* space, const Region* r)
{
    uintptr_t brk_end = (space->brk + k_page_size - 1) & ~uintptr_t(k_page_size - 1);
    if (space->brk <= space->brk_start || r->end != brk_end || !reserv_enabled())
        return r->end;
    uintptr_t limit = user_space_limit() - k_user_stack_size;
    return r->next && r->next->start < limit ? r->next->start : limit;
}

// Cuts regions so that no region straddles @p at.
Errno split_at(VmSpace* space, uintptr_t at)
{
    Region* r = space->regions.find(at);
    if (!r || r->start == at)
        return k_ok;
    Region* tail = make<Region>();
    if (!tail)
        return k_enomem;
    tail->start = at;
    tail->end = r->end;
    tail->prot = r->prot;
    tail->shared = r->shared;
    r->end = at;
    space->regions.end_changed(r);
    space->regions.insert(tail);
    return k_ok;
}

} // namespace

bool vm_can_commit(size_t length)
{
    constexpr size_t k_reserve_pages = 256; // 1 MB for page tables, stacks, pipes
    // Pages reserved but unused come back whenever memory runs short.
    size_t free = phys_allocator().free_pages() + reserv_unused_pages();
    size_t pages = (length + k_page_size - 1) / k_page_size;
    return free > k_reserve_pages && pages <= free - k_reserve_pages;
}

VmSpace* vmspace_create()
{
    VmSpace* space = make<VmSpace>();
    if (!space)
        return nullptr;
    space->pmap = pmap_create();
    if (!space->pmap) {
        destroy(space);
        return nullptr;
    }
    return space;
}

void vmspace_destroy(VmSpace* space)
{
    for (Region* r = space->regions.first(); r;) {
        Region* next = r->next;
        // Whole regions: no superpage straddles one, so nothing to demote.
        (void)free_pages(space, r->start, r->end);
        destroy(r); // the whole set goes: no need to keep the tree balanced
        r = next;
    }
    reserv_release_space(space);
    pmap_destroy(space->pmap);
    destroy(space);
}

Region* vmspace_find(VmSpace* space, uintptr_t address)
{
    return space->regions.find(address);
}

bool vmspace_overlaps(VmSpace* space, uintptr_t start, uintptr_t end)
{
    Region* r = space->regions.first_ending_after(start);
    return r && r->start < end;
}

Errno vmspace_unmap(VmSpace* space, uintptr_t start, size_t length)
{
    if (!range_ok(start, length))
        return k_einval;
    uintptr_t end = start + length;
    if (Errno e = split_at(space, start); e != k_ok)
        return e;
    if (Errno e = split_at(space, end); e != k_ok)
        return e;
    if (Errno e = free_pages(space, start, end); e != k_ok)
        return e;
    for (Region* r = space->regions.first_ending_after(start); r && r->start < end;) {
        Region* next = r->next;
        space->regions.erase(r);
        destroy(r);
        r = next;
    }
    return k_ok;
}

Errno vmspace_map(VmSpace* space, uintptr_t start, size_t length, unsigned prot)
{
    if (!range_ok(start, length))
        return k_einval;
    Region* fresh = make<Region>();
    if (!fresh)
        return k_enomem;
    if (Errno e = vmspace_unmap(space, start, length); e != k_ok) {
        destroy(fresh);
        return e;
    }
    fresh->start = start;
    fresh->end = start + length;
    fresh->prot = prot;
    space->regions.insert(fresh);
    return k_ok;
}

Errno vmspace_grow(VmSpace* space, uintptr_t end, size_t length, unsigned prot)
{
    if (!range_ok(end, length))
        return k_einval;
    Region* r = end > 0 ? space->regions.find(end - 1) : nullptr;
    if (r && r->end == end && r->prot == prot && !r->shared &&
        !(r->next && r->next->start < end + length)) {
        r->end = end + length; // in place: one heap region, however many steps
        space->regions.end_changed(r);
        return k_ok;
    }
    return vmspace_map(space, end, length, prot);
}

Errno vmspace_map_shared(VmSpace* space, uintptr_t start, size_t length, unsigned prot)
{
    if (Errno e = vmspace_map(space, start, length, prot); e != k_ok)
        return e;
    vmspace_find(space, start)->shared = true;
    for (uintptr_t va = start; va < start + length; va += k_page_size)
        if (Errno e = zero_fill(space, va, prot, start, start + length); e != k_ok) {
            (void)vmspace_unmap(space, start, length);
            return e;
        }
    return k_ok;
}

Errno vmspace_protect(VmSpace* space, uintptr_t start, size_t length, unsigned prot)
{
    if (!range_ok(start, length))
        return k_einval;
    uintptr_t end = start + length;
    // Linux: ENOMEM if any page of the range is not mapped.
    Region* r = space->regions.find(start);
    if (!r)
        return k_enomem;
    uintptr_t covered = r->end;
    for (r = r->next; r && r->start == covered && covered < end; r = r->next)
        covered = r->end;
    if (covered < end)
        return k_enomem;
    if (Errno e = split_at(space, start); e != k_ok)
        return e;
    if (Errno e = split_at(space, end); e != k_ok)
        return e;
    // PROT_NONE keeps the pages (the pmap hides them), so their contents
    // survive an mprotect back to readable.
    if (Errno e = pmap_protect(space->pmap, start, end, prot); e != k_ok)
        return e;
    for (Region* r = space->regions.find(start); r && r->start < end; r = r->next)
        r->prot = prot;
    // A page still shared copy-on-write stays read-only: its first write
    // will copy it.
    if (prot & k_prot_write)
        for (uintptr_t va = pmap_next_mapped(space->pmap, start, end); va < end;
             va = pmap_next_mapped(space->pmap, va + k_page_size, end)) {
            PhysAddr pa;
            Region* r = vmspace_find(space, va);
            if (!(r && r->shared) && pmap_extract(space->pmap, va, &pa, nullptr) &&
                pageref_get(pa).value_or(1) > 1)
                if (Errno e = pmap_protect(space->pmap, va, va + k_page_size,
                                           prot & ~unsigned(k_prot_write));
                    e != k_ok)
                    return e;
        }
    return k_ok;
}

Result<uintptr_t> vmspace_find_hole(VmSpace* space, size_t length)
{
    // Top-down from below the stack region, like Linux's legacy layout.
    // Nothing goes below 16 MB, where the program's image is. A region big
    // enough for a reservation starts on that reservation's alignment, so
    // that its stretches can become superpages; when no aligned hole is
    // left, any hole will do.
    constexpr uintptr_t k_floor = 16u << 20;
    uintptr_t ceiling = user_space_limit() - k_user_stack_size - k_floor;
    uintptr_t align = reserv_alignment(length);
    Optional<uintptr_t> start = space->regions.find_hole(length, k_floor, ceiling, align);
    if (!start && align > k_page_size)
        start = space->regions.find_hole(length, k_floor, ceiling);
    if (!start)
        return k_enomem;
    return start.value();
}

namespace {

// vmspace_fault's work; its caller records a failure.
Errno fault_in(VmSpace* space, uintptr_t address, bool write)
{
    Region* r = vmspace_find(space, address);
    if (!r || (write && !(r->prot & k_prot_write)) || r->prot == k_prot_none) {
        g_faults_refused.add();
        return k_efault;
    }
    uintptr_t page = address & ~uintptr_t(k_page_size - 1);
    PhysAddr pa;
    unsigned now;
    if (pmap_extract(space->pmap, page, &pa, &now)) {
        if (!write || (now & k_prot_write))
            return k_ok; // present already (a racing fault)
        if (r->shared)   // never copied: the page is everyone's
            return pmap_protect(space->pmap, page, page + k_page_size, r->prot);
        return break_cow(space, page, pa & ~PhysAddr(k_page_size - 1), r->prot);
    }
    return zero_fill(space, page, r->prot, r->start, reservation_end(space, r));
}

} // namespace

Errno vmspace_fault(VmSpace* space, uintptr_t address, bool write)
{
    Errno e = fault_in(space, address, write);
    if (e != k_ok)
        space->fault_error = e;
    return e;
}

Errno vmspace_take_fault_error(VmSpace* space)
{
    Errno e = space->fault_error;
    space->fault_error = k_ok;
    return e;
}

Errno handle_user_fault(VmSpace* space, uintptr_t address, bool write, bool present)
{
    if (!space)
        return k_efault;
    bool refused = address >= user_space_limit() || (present && !write);
    if (!refused && present && write) {
        Region* r = vmspace_find(space, address);
        refused = !r || !(r->prot & k_prot_write);
    }
    if (refused) {
        // Beyond user space, or a protection fault on a page nothing can fill
        space->fault_error = k_efault;
        return k_efault;
    }
    return vmspace_fault(space, address, write);
}

namespace {

// One more reference on each page of a run that fork is about to map into
// the child, given back when the guard goes unless keep() says the child's
// mapping holds them now: an early return cannot leave a count one too
// high. (No page needs freeing on the way back: the parent still maps it.)
class [[nodiscard]] PageShares {
  public:
    // Shares the @p pages pages from @p first, stopping at the first whose
    // count cannot grow.
    PageShares(PhysAddr first, size_t pages) : m_first(first), m_count(0)
    {
        while (m_count < pages && pageref_share(first + m_count * k_page_size))
            ++m_count;
    }
    ~PageShares()
    {
        while (m_count)
            pageref_release(m_first + --m_count * k_page_size);
    }
    PageShares(const PageShares&) = delete;
    PageShares& operator=(const PageShares&) = delete;

    // How many pages are shared (all of them, or fork must copy instead).
    size_t count() const { return m_count; }

    // The child's mapping owns the references from here on.
    void keep() { m_count = 0; }

  private:
    PhysAddr m_first;
    size_t m_count;
};

// Gives @p child the page mapped at @p va in @p parent: the same page with
// the same rights in a MAP_SHARED region (@p shared_region); otherwise
// shared read-only in both when @p share (copy-on-write), else copied.
// False when memory is short.
bool fork_page(VmSpace* parent, VmSpace* child, uintptr_t va, unsigned prot, bool share,
               bool shared_region)
{
    PhysAddr from;
    if (!pmap_extract(parent->pmap, va, &from, nullptr))
        return true;
    from &= ~PhysAddr(k_page_size - 1);
    if (shared_region) {
        PageShares ref{from, 1};
        if (!ref.count() || pmap_enter(child->pmap, va, from, prot) != k_ok)
            return false;
        ref.keep();
        ++child->resident_pages;
        return true;
    }
    if (share) {
        PageShares ref{from, 1};
        if (ref.count()) {
            unsigned shared = prot & ~unsigned(k_prot_write);
            if (pmap_enter(child->pmap, va, from, shared) != k_ok)
                return false;
            if ((prot & k_prot_write) &&
                pmap_protect(parent->pmap, va, va + k_page_size, shared) != k_ok) {
                // Just entered as a base page: nothing to demote, cannot fail.
                (void)pmap_remove_page(child->pmap, va);
                return false;
            }
            ref.keep();
            ++child->resident_pages;
            g_fork_pages_shared.add();
            return true;
        }
    }
    Result<PhysAddr> page_to = phys_allocator().alloc(0);
    if (!page_to)
        return false;
    PhysAddr to = page_to.value();
    if (pmap_enter(child->pmap, va, to, prot) != k_ok) {
        phys_allocator().free(to, 0);
        return false;
    }
    memcpy(phys_to_virt(to), phys_to_virt(from), k_page_size);
    pageref_set_one(to);
    ++child->resident_pages;
    g_fork_pages_copied.add();
    return true;
}

// Shares the whole superpage of size index @p psind at @p va with @p child,
// copy-on-write: one mapping in the child (one instruction-cache sync if it
// is executable), and the parent's superpage write-protected whole, without
// demotion. False, changing nothing, if a page's count cannot grow.
bool fork_superpage(VmSpace* parent, VmSpace* child, uintptr_t va, PhysAddr from, unsigned prot,
                    unsigned psind)
{
    size_t pages = pmap_page_size(psind) / k_page_size;
    PageShares refs{from, pages};
    unsigned child_prot = prot & ~unsigned(k_prot_write);
    if (refs.count() < pages || pmap_enter(child->pmap, va, from, child_prot, psind) != k_ok)
        return false;
    if ((prot & k_prot_write) &&
        pmap_protect(parent->pmap, va, va + pages * k_page_size, child_prot) != k_ok) {
        (void)pmap_remove(child->pmap, va, va + pages * k_page_size, nullptr, nullptr);
        return false;
    }
    refs.keep();
    child->resident_pages += pages;
    g_fork_pages_shared.add(pages);
    return true;
}

} // namespace

VmSpace* vmspace_fork(VmSpace* parent)
{
    VmSpace* child = vmspace_create();
    if (!child)
        return nullptr;
    bool share = fork_shares_pages();
    // Only where superpages exist can a mapping be one (i386 skips the lookup).
    bool superpages = share && reserv_enabled();
    child->brk_start = parent->brk_start;
    child->brk = parent->brk;
    for (Region* r = parent->regions.first(); r; r = r->next) {
        Region* copy = make<Region>();
        if (!copy) {
            vmspace_destroy(child);
            return nullptr;
        }
        copy->start = r->start;
        copy->end = r->end;
        copy->prot = r->prot;
        copy->shared = r->shared;
        child->regions.insert(copy);
        for (uintptr_t va = pmap_next_mapped(parent->pmap, r->start, r->end); va < r->end;
             va = pmap_next_mapped(parent->pmap, va + k_page_size, r->end)) {
            PhysAddr from;
            unsigned psind = 0;
            if (superpages && !r->shared &&
                pmap_extract(parent->pmap, va, &from, nullptr, &psind) && psind > 0 &&
                va % pmap_page_size(psind) == 0 &&
                fork_superpage(parent, child, va, from, r->prot, psind)) {
                va += pmap_page_size(psind) - k_page_size; // the whole superpage is done
                continue;
            }
            if (!fork_page(parent, child, va, r->prot, share, r->shared)) {
                // Pages already shared stay read-only in the parent: its
                // next write to each reuses the page (the child's mapping
                // is gone with the child).
                vmspace_destroy(child);
                return nullptr;
            }
        }
    }
    return child;
}

} // namespace toll::vm
