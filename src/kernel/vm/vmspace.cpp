// Address spaces: their regions (map, grow, unmap, protect, find a hole)
// over a pmap. Faults and copy-on-write are in fault.cpp, fork in fork.cpp.
#include "kernel/vm/vmspace.h"
#include "kernel/kern/param.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/reserv.h"
#include "kernel/vm/vmobject.h"
#include "kernel/vm/vmspace_internal.h"

namespace toll::vm {
namespace {

bool page_aligned(uintptr_t v)
{
    return (v & (k_page_size - 1)) == 0;
}

bool range_ok(uintptr_t start, size_t length)
{
    return page_aligned(start) && page_aligned(length) && length && start + length > start &&
           start + length <= user_space_limit();
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

// Cuts regions so that no region straddles @p at. A reservation whose
// stretch @p at cuts is broken: no reservation, and no superpage, spans two
// regions.
Errno split_at(VmSpace* space, uintptr_t at)
{
    Region* r = space->regions.find(at);
    if (!r || r->start == at)
        return k_ok;
    Region* tail = make<Region>();
    if (!tail)
        return k_enomem;
    reserv_break_at(space, at);
    tail->start = at;
    tail->end = r->end;
    tail->prot = r->prot;
    tail->shared = r->shared;
    if ((tail->object = r->object)) {
        vmobject_hold(tail->object);
        tail->object_page = r->object_page + (at - r->start) / k_page_size;
    }
    r->end = at;
    space->regions.end_changed(r);
    space->regions.insert(tail);
    return k_ok;
}

// Gives the pages mapped in [lo, hi) of region @p r the rights @p prot. A
// page still shared copy-on-write stays read-only: its first write will
// copy it. A superpage is changed whole, never page by page, when all its
// pages are shared or none is, so that an mprotect(+W) after fork neither
// demotes a shared block nor leaves a shared page writable for a moment.
// Afterwards a stretch whose pages are uniform again becomes a superpage
// again (an mprotect back to the old rights).
Errno protect_pages(VmSpace* space, const Region* r, uintptr_t lo, uintptr_t hi, unsigned prot)
{
    if (!(prot & k_prot_write) || r->shared) {
        if (Errno e = pmap_protect(space->pmap, lo, hi, prot); e != k_ok)
            return e;
    } else {
        unsigned kept = prot & ~unsigned(k_prot_write);
        // Consecutive pieces wanting the same rights go to the pmap as one range.
        uintptr_t pending_start = lo, pending_end = lo;
        unsigned pending_prot = prot;
        auto apply = [&](uintptr_t from, uintptr_t to, unsigned want) -> Errno {
            if (want != pending_prot && pending_end > pending_start) {
                if (Errno e = pmap_protect(space->pmap, pending_start, pending_end, pending_prot);
                    e != k_ok)
                    return e;
                pending_start = from;
            } else if (pending_end == pending_start) {
                pending_start = from;
            }
            pending_end = to;
            pending_prot = want;
            return k_ok;
        };
        for (uintptr_t va = pmap_next_mapped(space->pmap, lo, hi); va < hi;
             va = pmap_next_mapped(space->pmap, va, hi)) {
            Mapping m = pmap_extract(space->pmap, va).value(); // mapped: found
            PhysAddr pa = m.pa;
            unsigned psind = m.psind;
            size_t size = pmap_page_size(psind);
            uintptr_t stop = (va & ~uintptr_t(size - 1)) + size;
            stop = stop < hi ? stop : hi;
            pa &= ~PhysAddr(k_page_size - 1);
            size_t pages = (stop - va) / k_page_size, shared = 0;
            for (size_t i = 0; i < pages; ++i)
                shared += pageref_get(pa + i * k_page_size).value_or(1) > 1;
            if (shared == 0 || shared == pages) {
                if (Errno e = apply(va, stop, shared ? kept : prot); e != k_ok)
                    return e;
            } else {
                for (size_t i = 0; i < pages; ++i) {
                    bool one_shared = pageref_get(pa + i * k_page_size).value_or(1) > 1;
                    uintptr_t page = va + i * k_page_size;
                    if (Errno e = apply(page, page + k_page_size, one_shared ? kept : prot);
                        e != k_ok)
                        return e;
                }
            }
            va = stop;
        }
        if (pending_end > pending_start)
            if (Errno e = pmap_protect(space->pmap, pending_start, pending_end, pending_prot);
                e != k_ok)
                return e;
    }
    if (prot != k_prot_none)
        reserv_repromote(space, lo, hi, r->start, r->end);
    return k_ok;
}

} // namespace

void free_page(PhysAddr pa)
{
    if (!reserv_free_page(pa))
        phys_allocator().free(pa, 0);
}

bool vm_can_commit(size_t length)
{
    constexpr size_t k_reserve_pages = (1u << 20) / k_page_size; // 1 MB: page tables, stacks, pipes
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
        if (r->object)
            vmobject_drop(r->object);
        destroy(r); // the whole set goes: no need to keep the tree balanced
        r = next;
    }
    reserv_release_space(space);
    pmap_destroy(space->pmap);
    destroy(space);
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
    // The range goes away: so does every reservation that serves any of it
    // (its unused pages back to the allocator now, as FreeBSD frees them
    // with the object's range), so that a later mapping here, of any kind,
    // never takes a page from it.
    reserv_break_range(space, start, end);
    for (Region* r = space->regions.first_ending_after(start); r && r->start < end;) {
        Region* next = r->next;
        space->regions.erase(r);
        if (r->object)
            vmobject_drop(r->object);
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
    if (r && r->end == end && r->prot == prot && !r->shared && !r->object &&
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
    Region* region = vmspace_find(space, start);
    region->shared = true;
    for (uintptr_t va = start; va < start + length; va += k_page_size)
        if (Errno e = zero_fill(space, va, prot, region, region->end); e != k_ok) {
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
    for (Region* r = space->regions.find(start); r && r->start < end; r = r->next) {
        if (Errno e = protect_pages(space, r, r->start, r->end, prot); e != k_ok)
            return e;
        r->prot = prot;
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

} // namespace toll::vm
