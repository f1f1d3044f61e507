// fork's half of address spaces: the child gets every region, and every
// present page shared copy-on-write (or copied, with vm.fork=copy).
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/reserv.h"
#include "kernel/vm/vmobject.h"
#include "kernel/vm/vmspace_internal.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_fork_pages_copied, "vm.fork.pages_copied");
TOLL_COUNTER(g_fork_pages_shared, "vm.fork.pages_shared");
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
    Optional<Mapping> m = pmap_extract(parent->pmap, va);
    if (!m)
        return true;
    PhysAddr from = m.value().pa & ~PhysAddr(k_page_size - 1);
    // The very page the parent maps executable: its instructions were made
    // visible when that mapping was made (Linux's fork does no cache
    // maintenance either), so the child's mapping syncs nothing again.
    unsigned clean = (m.value().prot & k_prot_exec) ? unsigned(k_prot_icache_clean) : 0u;
    if (shared_region) {
        PageShares ref{from, 1};
        if (!ref.count() || pmap_enter(child->pmap, va, from, prot | clean) != k_ok)
            return false;
        ref.keep();
        ++child->resident_pages;
        return true;
    }
    if (share) {
        PageShares ref{from, 1};
        if (ref.count()) {
            unsigned shared = prot & ~unsigned(k_prot_write);
            if (pmap_enter(child->pmap, va, from, shared | clean) != k_ok)
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
    SpinGuard g(parent->lock); // the child is nobody else's yet
    bool share = fork_shares_pages();
    // Only where reservations exist can a mapping be a superpage: without
    // them the size lookup is skipped.
    bool superpages = share && reserv_enabled();
    child->image_start = parent->image_start;
    child->brk_start = parent->brk_start;
    child->brk = parent->brk;
    // Where the last superpage fork_superpage shared ends: its pages are
    // the child's already, and must not be shared (counted) a second time.
    uintptr_t shared_to = 0;
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
        if ((copy->object = r->object)) {
            vmobject_hold(copy->object);
            copy->object_page = r->object_page;
        }
        child->regions.insert(copy);
        uintptr_t from_va = r->start > shared_to ? r->start : shared_to;
        for (uintptr_t va = pmap_next_mapped(parent->pmap, from_va, r->end); va < r->end;
             va = pmap_next_mapped(parent->pmap, va + k_page_size, r->end)) {
            Optional<Mapping> m;
            if (superpages && !r->shared)
                m = pmap_extract(parent->pmap, va);
            PhysAddr from = m ? m.value().pa : 0;
            unsigned psind = m ? m.value().psind : 0;
            if (psind > 0 && va % pmap_page_size(psind) == 0 &&
                va + pmap_page_size(psind) <= r->end &&
                fork_superpage(parent, child, va, from, r->prot, psind)) {
                shared_to = va + pmap_page_size(psind);
                va = shared_to - k_page_size; // the whole superpage is done
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
