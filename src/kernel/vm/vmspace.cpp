// Address spaces: region bookkeeping, demand-zero faults, and fork's copy.
#include "kernel/vm/vmspace.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/process.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_faults_zero_fill, "vm.faults.zero_fill");
TOLL_COUNTER(g_faults_refused, "vm.faults.refused");
TOLL_COUNTER(g_fork_pages_copied, "vm.fork.pages_copied");

bool page_aligned(uintptr_t v)
{
    return (v & (k_page_size - 1)) == 0;
}

bool range_ok(uintptr_t start, size_t length)
{
    return page_aligned(start) && page_aligned(length) && length && start + length > start &&
           start + length <= user_space_limit();
}

// Gives a page unmapped by pmap_remove back to the allocator.
void free_unmapped(void* context, uintptr_t, PhysAddr pa)
{
    phys_allocator().free(pa, 0);
    --static_cast<VmSpace*>(context)->resident_pages;
}

// Frees the pages mapped in [start, end).
Errno free_pages(VmSpace* space, uintptr_t start, uintptr_t end)
{
    return pmap_remove(space->pmap, start, end, free_unmapped, space);
}

// Cuts regions so that no region straddles @p at.
Errno split_at(VmSpace* space, uintptr_t at)
{
    for (Region* r = space->regions; r; r = r->next) {
        if (r->start < at && at < r->end) {
            Region* tail = make<Region>();
            if (!tail)
                return k_enomem;
            *tail = Region{at, r->end, r->prot, r->next};
            r->end = at;
            r->next = tail;
            return k_ok;
        }
    }
    return k_ok;
}

} // namespace

bool vm_can_commit(size_t length)
{
    constexpr size_t k_reserve_pages = 256; // 1 MB for page tables, stacks, pipes
    size_t free = phys_allocator().free_pages();
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
    while (Region* r = space->regions) {
        // Whole regions: no superpage straddles one, so nothing to demote.
        (void)free_pages(space, r->start, r->end);
        space->regions = r->next;
        destroy(r);
    }
    pmap_destroy(space->pmap);
    destroy(space);
}

Region* vmspace_find(VmSpace* space, uintptr_t address)
{
    for (Region* r = space->regions; r; r = r->next)
        if (r->start <= address && address < r->end)
            return r;
    return nullptr;
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
    Region** link = &space->regions;
    while (Region* r = *link) {
        if (r->start >= start && r->end <= end) {
            *link = r->next;
            destroy(r);
        } else {
            link = &r->next;
        }
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
    *fresh = Region{start, start + length, prot, nullptr};
    Region** link = &space->regions;
    while (*link && (*link)->start < start)
        link = &(*link)->next;
    fresh->next = *link;
    *link = fresh;
    return k_ok;
}

Errno vmspace_protect(VmSpace* space, uintptr_t start, size_t length, unsigned prot)
{
    if (!range_ok(start, length))
        return k_einval;
    uintptr_t end = start + length;
    // Linux: ENOMEM if any page of the range is not mapped.
    for (uintptr_t va = start; va < end;) {
        Region* r = vmspace_find(space, va);
        if (!r)
            return k_enomem;
        va = r->end;
    }
    if (Errno e = split_at(space, start); e != k_ok)
        return e;
    if (Errno e = split_at(space, end); e != k_ok)
        return e;
    // PROT_NONE keeps the pages (the pmap hides them), so their contents
    // survive an mprotect back to readable.
    if (Errno e = pmap_protect(space->pmap, start, end, prot); e != k_ok)
        return e;
    for (Region* r = space->regions; r; r = r->next)
        if (r->start >= start && r->end <= end)
            r->prot = prot;
    return k_ok;
}

uintptr_t vmspace_find_hole(VmSpace* space, size_t length)
{
    // Top-down from below the stack region, like Linux's legacy layout.
    uintptr_t ceiling = user_space_limit() - k_user_stack_size - (16u << 20);
    for (;;) {
        if (ceiling < length + (16u << 20))
            return 0;
        uintptr_t start = ceiling - length;
        Region* clash = nullptr;
        for (Region* r = space->regions; r; r = r->next)
            if (r->start < start + length && start < r->end)
                clash = r;
        if (!clash)
            return start;
        ceiling = clash->start;
    }
}

bool vmspace_fault(VmSpace* space, uintptr_t address, bool write)
{
    Region* r = vmspace_find(space, address);
    if (!r || (write && !(r->prot & k_prot_write)) || r->prot == k_prot_none) {
        g_faults_refused.add();
        return false;
    }
    uintptr_t page = address & ~uintptr_t(k_page_size - 1);
    PhysAddr pa;
    if (pmap_extract(space->pmap, page, &pa, nullptr))
        return !write || (r->prot & k_prot_write); // present already (a racing fault)
    PhysAddr fresh = phys_allocator().alloc(0);
    if (fresh == PhysAllocator::k_none)
        return false; // out of memory: the program is killed
    memset(phys_to_virt(fresh), 0, k_page_size);
    if (pmap_enter(space->pmap, page, fresh, r->prot) != k_ok) {
        phys_allocator().free(fresh, 0);
        return false;
    }
    ++space->resident_pages;
    g_faults_zero_fill.add();
    return true;
}

bool handle_user_fault(uintptr_t address, bool write, bool present)
{
    proc::Process* p = proc::current_process();
    if (!p || !p->vm || address >= user_space_limit())
        return false;
    if (present && !write)
        return false; // a protection fault on a readable page: nothing to fill
    if (present && write) {
        Region* r = vmspace_find(p->vm, address);
        if (!r || !(r->prot & k_prot_write))
            return false;
    }
    return vmspace_fault(p->vm, address, write);
}

VmSpace* vmspace_fork(VmSpace* parent)
{
    VmSpace* child = vmspace_create();
    if (!child)
        return nullptr;
    child->brk_start = parent->brk_start;
    child->brk = parent->brk;
    Region** tail = &child->regions;
    for (Region* r = parent->regions; r; r = r->next) {
        Region* copy = make<Region>();
        if (!copy) {
            vmspace_destroy(child);
            return nullptr;
        }
        *copy = Region{r->start, r->end, r->prot, nullptr};
        *tail = copy;
        tail = &copy->next;
        for (uintptr_t va = r->start; va < r->end; va += k_page_size) {
            PhysAddr from;
            if (!pmap_extract(parent->pmap, va, &from, nullptr))
                continue;
            PhysAddr to = phys_allocator().alloc(0);
            if (to == PhysAllocator::k_none || pmap_enter(child->pmap, va, to, r->prot) != k_ok) {
                if (to != PhysAllocator::k_none)
                    phys_allocator().free(to, 0);
                vmspace_destroy(child);
                return nullptr;
            }
            memcpy(phys_to_virt(to), phys_to_virt(from), k_page_size);
            ++child->resident_pages;
            g_fork_pages_copied.add();
        }
    }
    return child;
}

} // namespace toll::vm
