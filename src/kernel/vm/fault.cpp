// Page faults in user address spaces: demand-zero fills (from a
// reservation when one can be had) and the copy-on-write break after fork.
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/reserv.h"
#include "kernel/vm/vmobject.h"
#include "kernel/vm/vmspace_internal.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_faults_zero_fill, "vm.faults.zero_fill");
TOLL_COUNTER(g_faults_refused, "vm.faults.refused");
TOLL_COUNTER(g_cow_copies, "vm.cow.copies");
TOLL_COUNTER(g_cow_reuses, "vm.cow.reuses");
TOLL_COUNTER(g_faults_file, "vm.faults.file");

// A write to the page at @p page of region @p r, mapped read-only to @p pa
// because fork shares it: the last sharer takes the page back writable in
// place; any other gets a private copy. Either may make the stretch around
// it a superpage again. k_enomem when memory is short.
Errno break_cow(VmSpace* space, uintptr_t page, PhysAddr pa, const Region* r)
{
    if (pageref_get(pa).value_or(1) <= 1) { // outside the table: never shared
        if (Errno e = pmap_protect(space->pmap, page, page + k_page_size, r->prot); e != k_ok)
            return e;
        g_cow_reuses.add();
        // The stretch around it may be uniform again: as FreeBSD's
        // pmap_enter does for a full reservation, promote it back.
        reserv_repromote(space, page, page + k_page_size, r->start, r->end);
        return k_ok;
    }
    // From a reservation if one serves the stretch, so that the copy that
    // completes it makes it a superpage again.
    Optional<ReservedPage> reserved = reserv_alloc_copy(space, page, r->start, r->end);
    Result<PhysAddr> page_copy =
        reserved ? Result<PhysAddr>(reserved.value().pa) : phys_allocator().alloc(0);
    if (!page_copy)
        return page_copy.error();
    PhysAddr copy = page_copy.value();
    memcpy(phys_to_virt(copy), phys_to_virt(pa), k_page_size);
    if (Errno e = pmap_enter(space->pmap, page, copy, r->prot); e != k_ok) {
        free_page(copy);
        return e;
    }
    pageref_set_one(copy);
    pageref_release(pa); // shared: at least one mapping is left
    if (reserved)
        reserv_mapped(space, reserved.value().from, page, r->start, r->end);
    g_cow_copies.add();
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

// A fault on the page at @p page of file mapping @p r, not present: enters
// the object's page, which is in memory (the object holds it). A shared
// mapping maps it with the region's rights; a private one read-only, so
// that a write copies it (at once, for a write fault). Its instruction
// cache is synced when it is mapped executable unless it is known clean.
Errno fill_from_object(VmSpace* space, uintptr_t page, Region* r, bool write)
{
    size_t index = r->object_page + (page - r->start) / k_page_size;
    if (index >= r->object->count || !r->object->pages[index]) {
        g_faults_refused.add();
        return k_efault; // past the end of the file
    }
    PhysAddr pa = r->object->pages[index];
    if (!pageref_share(pa))
        return k_enomem;
    unsigned prot = r->shared ? r->prot : r->prot & ~unsigned(k_prot_write);
    bool clean = page_icache_clean(pa);
    if (Errno e = pmap_enter(space->pmap, page, pa, clean ? prot | k_prot_icache_clean : prot);
        e != k_ok) {
        pageref_release(pa); // the object still holds it
        return e;
    }
    if ((prot & k_prot_exec) && !(r->shared && (r->prot & k_prot_write)))
        page_set_icache_clean(pa, true);
    ++space->resident_pages;
    g_faults_file.add();
    if (write && !r->shared)
        return break_cow(space, page, pa, r);
    return k_ok;
}

// vmspace_fault's work; its caller records a failure.
Errno fault_in(VmSpace* space, uintptr_t address, bool write)
{
    Region* r = vmspace_find(space, address);
    if (!r || (write && !(r->prot & k_prot_write)) || r->prot == k_prot_none) {
        g_faults_refused.add();
        return k_efault;
    }
    uintptr_t page = address & ~uintptr_t(k_page_size - 1);
    if (Optional<Mapping> m = pmap_extract(space->pmap, page)) {
        if (!write || (m.value().prot & k_prot_write))
            return k_ok; // present already (a racing fault)
        if (r->shared)   // never copied: the page is everyone's
            return pmap_protect(space->pmap, page, page + k_page_size, r->prot);
        return break_cow(space, page, m.value().pa & ~PhysAddr(k_page_size - 1), r);
    }
    if (r->object)
        return fill_from_object(space, page, r, write);
    return zero_fill(space, page, r->prot, r, reservation_end(space, r));
}

} // namespace

Errno zero_fill(VmSpace* space, uintptr_t page, unsigned prot, const Region* region,
                uintptr_t reserve_end)
{
    // From the reservation of the page's aligned stretch if there is (or can
    // be) one, so that the stretch can become a superpage; else any page.
    Optional<ReservedPage> reserved = reserv_alloc_page(space, page, region->start, reserve_end);
    Result<PhysAddr> page_fresh =
        reserved ? Result<PhysAddr>(reserved.value().pa) : phys_allocator().alloc(0);
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
    if (reserved) // may complete a superpage, never one beyond the region
        reserv_mapped(space, reserved.value().from, page, region->start, region->end);
    return k_ok;
}

Errno vmspace_fault(VmSpace* space, uintptr_t address, bool write)
{
    SpinGuard g(space->lock);
    return fault_in(space, address, write);
}

Errno handle_user_fault(VmSpace* space, uintptr_t address, bool write, bool present)
{
    if (!space)
        return k_efault;
    SpinGuard g(space->lock);
    bool refused = address >= user_space_limit() || (present && !write);
    if (!refused && present && write) {
        Region* r = vmspace_find(space, address);
        refused = !r || !(r->prot & k_prot_write);
    }
    if (refused) // beyond user space, or a protection fault on a page nothing can fill
        return k_efault;
    return fault_in(space, address, write);
}

} // namespace toll::vm
