// i386 page tables: a page directory per address space, page tables allocated
// on demand, the kernel's quarter shared by copying its directory entries.
// Written without inline assembly so that tests/unit compiles it over
// simulated physical memory (load_cr3 and invalidate_page are stubbed there).
#include "kernel/arch/pmap.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::arch {

/// The i386 pmap is its page directory: a Pmap* is the directory's kernel
/// address. Under 3/1 that is one page, holding user and kernel entries.
/// Under the isolated layouts a second page follows it, the user directory:
/// user entries plus the trampoline slot only. 3/1-pti keeps the user
/// entries in both (the kernel reaches user memory directly); 4/4 keeps them
/// only in the user directory (the kernel runs on its own directory).
struct Pmap {
    uint32_t entries[i386::k_entries];      ///< the kernel's view (3/1, 3/1-pti)
    uint32_t user_entries[i386::k_entries]; ///< isolated layouts only
};

namespace {

using namespace toll::i386;

TOLL_GAUGE(g_page_tables, "vm.pmap.page_tables"); // in use now

// The space each CPU has loaded ("active"), by Cpu::id: written only by that
// CPU (pmap_activate), read by any (the TLB shootdown's targets).
Pmap* g_loaded[k_max_cpus];

unsigned this_cpu_id()
{
    return static_cast<unsigned>(arch::cpu_local_word<offsetof(Cpu, id)>());
}

uint32_t* table(uint32_t phys)
{
    return static_cast<uint32_t*>(phys_to_virt(phys));
}

uint32_t pd_phys(Pmap* pmap)
{
    return static_cast<uint32_t>(virt_to_phys(pmap));
}

uint32_t user_pd_phys(Pmap* pmap)
{
    return static_cast<uint32_t>(virt_to_phys(pmap->user_entries));
}

// The directory slots that hold user page tables under this layout.
unsigned user_pde_count()
{
    return layout() == Layout::split_4_4 ? k_entries - 1 : k_kernel_pde_first;
}

// The directory whose user slots the pmap code reads (the user one under 4/4).
uint32_t* primary(Pmap* pmap)
{
    return layout() == Layout::split_4_4 ? pmap->user_entries : pmap->entries;
}

// Returns the PTE slot for @p va, allocating the page table if @p create.
uint32_t* pte_slot(Pmap* pmap, uint32_t va, bool create)
{
    if (pd_index(va) >= user_pde_count())
        return nullptr; // not user space under this layout
    uint32_t& pde = primary(pmap)[pd_index(va)];
    if (!(pde & k_pte_present)) {
        if (!create)
            return nullptr;
        Result<PhysAddr> page = vm::phys_allocator().alloc(0);
        if (!page)
            return nullptr;
        PhysAddr pt = page.value();
        memset(phys_to_virt(pt), 0, k_page_size);
        g_page_tables.raise();
        // Rights are enforced in the PTEs; the PDE allows everything.
        pde = static_cast<uint32_t>(pt) | k_pte_present | k_pte_write | k_pte_user;
        // 3/1-pti: the user directory shares the same page table.
        if (layout() == Layout::split_3_1_pti)
            pmap->user_entries[pd_index(va)] = pde;
    }
    if (pde & k_pde_large)
        return nullptr; // never in user space
    return &table(pde & k_pte_frame)[pt_index(va)];
}

// A PROT_NONE page keeps its frame in a not-present PTE marked with this
// software bit (Intel SDM Vol. 3, 4.3: bits 9-11 are ignored by the CPU), so
// that mprotect back to readable finds the same contents.
constexpr uint32_t k_pte_soft_none = 1u << 9;

bool mapped(uint32_t pte)
{
    return pte & (k_pte_present | k_pte_soft_none);
}

uint32_t pte_bits(unsigned prot)
{
    // i386 without PAE has no execute-disable bit: read implies execute.
    if (prot == k_prot_none)
        return k_pte_soft_none;
    uint32_t bits = k_pte_present | k_pte_user;
    if (prot & k_prot_write)
        bits |= k_pte_write;
    return bits;
}

unsigned pmap_order()
{
    return layout_isolated() ? 1 : 0;
}

} // namespace

Pmap* pmap_create()
{
    Result<PhysAddr> pd = vm::phys_allocator().alloc(pmap_order());
    if (!pd)
        return nullptr;
    auto* pmap = static_cast<Pmap*>(phys_to_virt(pd.value()));
    const uint32_t* kernel = table(kernel_page_directory_phys());
    memset(pmap->entries, 0, k_kernel_pde_first * sizeof(uint32_t));
    memcpy(pmap->entries + k_kernel_pde_first, kernel + k_kernel_pde_first,
           (k_entries - k_kernel_pde_first) * sizeof(uint32_t));
    if (layout_isolated()) {
        // The user directory: nothing of the kernel but the trampoline slot.
        memset(pmap->user_entries, 0, sizeof pmap->user_entries);
        pmap->user_entries[k_entries - 1] = trampoline_pde();
    }
    return pmap;
}

void pmap_destroy(Pmap* pmap)
{
    if (pmap == g_loaded[this_cpu_id()])
        pmap_activate(nullptr);
    // Another CPU may still have it loaded, lazily, under a kernel thread:
    // it must leave before the directory is freed (and perhaps reused for
    // another space, which that CPU would then take for the one it has).
    shootdown_leave(pmap);
    const uint32_t* dir = primary(pmap);
    // Eight slots a test: a directory is mostly empty (a program's tables
    // are a handful among 768 or 1023 slots).
    const uint32_t* end = dir + user_pde_count();
    for (const uint32_t* slot = dir; slot < end;) {
        if (end - slot >= 8 &&
            !(slot[0] | slot[1] | slot[2] | slot[3] | slot[4] | slot[5] | slot[6] | slot[7])) {
            slot += 8;
            continue;
        }
        uint32_t pde = *slot++;
        if ((pde & k_pte_present) && !(pde & k_pde_large)) {
            vm::phys_allocator().free(pde & k_pte_frame, 0);
            g_page_tables.lower();
        }
    }
    vm::phys_allocator().free(virt_to_phys(pmap), pmap_order());
}

unsigned pmap_page_size_count()
{
    return 1; // user memory is mapped with 4 KB pages only
}

size_t pmap_page_size(unsigned psind)
{
    TOLL_ASSERT(psind == 0); // no other size index exists here
    return k_page_size;
}

Errno pmap_enter(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot, unsigned psind)
{
    if (psind != 0)
        return k_einval;
    uint32_t* pte = pte_slot(pmap, static_cast<uint32_t>(va), true);
    if (!pte)
        return k_enomem;
    bool was_present = mapped(*pte);
    *pte = static_cast<uint32_t>(pa) | pte_bits(prot);
    if (was_present)
        pmap_tlb_shootdown(pmap, va, va + k_page_size);
    return k_ok;
}

namespace {

// Calls @p visit(va, pte) for every mapped PTE of [start, end), skipping the
// 4 MB stretches that have no page table (pmap_next_mapped's scan).
template <typename Visit>
void for_each_mapped(Pmap* pmap, uintptr_t start, uintptr_t end, Visit visit)
{
    for (uintptr_t va = pmap_next_mapped(pmap, start, end); va < end;
         va = pmap_next_mapped(pmap, va + k_page_size, end))
        visit(va, pte_slot(pmap, static_cast<uint32_t>(va), false));
}

} // namespace

namespace {

// The pages pmap_remove has unmapped but not yet handed to its sink: a page
// may go only once no CPU can still reach it (after the shootdown). Up to
// k_remove_batch are kept here, on the stack; the rest of a larger range
// stay in their PTEs, marked not present (PROT_NONE's software bit, so that
// they still count as mapped for the second walk) until the shootdown is over.
constexpr unsigned k_remove_batch = 32;
struct Removed {
    uint32_t va, pa;
};

} // namespace

Errno pmap_remove(Pmap* pmap, uintptr_t start, uintptr_t end, PmapPageSink sink, void* context)
{
    Removed batch[k_remove_batch];
    unsigned n = 0;
    uintptr_t lo = end, hi = start, rest = end; // rest: where the marked pages begin
    for_each_mapped(pmap, start, end, [&](uintptr_t va, uint32_t* pte) {
        if (va < lo)
            lo = va;
        hi = va + k_page_size;
        if (n < k_remove_batch) {
            batch[n++] = Removed{static_cast<uint32_t>(va), *pte & k_pte_frame};
            *pte = 0;
        } else {
            if (rest == end)
                rest = va;
            *pte = (*pte & k_pte_frame) | k_pte_soft_none;
        }
    });
    // One shootdown for the whole range the pages span.
    pmap_tlb_shootdown(pmap, lo, hi);
    for (unsigned i = 0; i < n; ++i)
        if (sink)
            sink(context, batch[i].va, batch[i].pa);
    if (rest < end)
        for_each_mapped(pmap, rest, end, [&](uintptr_t va, uint32_t* pte) {
            PhysAddr pa = *pte & k_pte_frame;
            *pte = 0;
            if (sink)
                sink(context, va, pa);
        });
    return k_ok;
}

Errno pmap_protect(Pmap* pmap, uintptr_t start, uintptr_t end, unsigned prot)
{
    uint32_t bits = pte_bits(prot);
    uintptr_t lo = end, hi = start; // the span of the entries that changed
    for_each_mapped(pmap, start, end, [&](uintptr_t va, uint32_t* pte) {
        uint32_t now = (*pte & k_pte_frame) | bits;
        if ((*pte & ~(k_pte_accessed | k_pte_dirty)) == now)
            return; // the rights it has already: no store, no invalidation
        *pte = now;
        if (va < lo)
            lo = va;
        hi = va + k_page_size;
    });
    pmap_tlb_shootdown(pmap, lo, hi);
    return k_ok;
}

bool pmap_promote(Pmap*, uintptr_t, unsigned)
{
    return false; // no superpage sizes (pmap_page_size_count() is 1)
}

size_t pmap_tlb_entries(Pmap* pmap, uintptr_t start, uintptr_t end)
{
    size_t n = 0;
    for_each_mapped(pmap, start, end, [&](uintptr_t, uint32_t* pte) {
        if (*pte & k_pte_present)
            ++n;
    });
    return n;
}

Optional<Mapping> pmap_extract(Pmap* pmap, uintptr_t va)
{
    uint32_t* pte = pte_slot(pmap, static_cast<uint32_t>(va), false);
    if (!pte || !mapped(*pte))
        return {};
    Mapping m;
    m.pa = (*pte & k_pte_frame) | (va & (k_page_size - 1));
    m.prot = !(*pte & k_pte_present)
                 ? unsigned(k_prot_none)
                 : unsigned(k_prot_read | k_prot_exec) | ((*pte & k_pte_write) ? k_prot_write : 0u);
    return m;
}

uintptr_t pmap_next_mapped(Pmap* pmap, uintptr_t va, uintptr_t end)
{
    const uint32_t* dir = primary(pmap);
    while (va < end && pd_index(static_cast<uint32_t>(va)) < user_pde_count()) {
        unsigned pdi = pd_index(static_cast<uint32_t>(va));
        uintptr_t next_table = uintptr_t(pdi + 1) << 22; // pdi < 1023: no overflow
        uint32_t pde = dir[pdi];
        if ((pde & k_pte_present) && !(pde & k_pde_large)) {
            // Scan the slots of [va, min(end, next_table)) by pointer, four
            // (then four) at a time where possible: a sparse stack table is mostly zeros.
            const uint32_t* pt = table(pde & k_pte_frame);
            const uint32_t* slot = pt + pt_index(static_cast<uint32_t>(va));
            uintptr_t stop = end < next_table ? end : next_table;
            const uint32_t* last = slot + (stop - va + k_page_size - 1) / k_page_size;
            constexpr uint32_t k_any = k_pte_present | k_pte_soft_none;
            while (last - slot >= 8 && !((slot[0] | slot[1] | slot[2] | slot[3] | slot[4] |
                                          slot[5] | slot[6] | slot[7]) &
                                         k_any))
                slot += 8;
            while (last - slot >= 4 && !((slot[0] | slot[1] | slot[2] | slot[3]) & k_any))
                slot += 4;
            for (; slot < last; ++slot)
                if (*slot & k_any)
                    return (va & ~((uintptr_t(1) << 22) - 1)) + uintptr_t(slot - pt) * k_page_size;
        }
        va = next_table;
    }
    return end;
}

void pmap_activate(Pmap* pmap)
{
    unsigned id = this_cpu_id();
    Pmap*& loaded = g_loaded[id];
    if (pmap == loaded)
        return; // same address space: no CR3 load, no TLB flush
    // Published before this CPU can cache a translation of it (the CR3 load
    // below or, under 4/4, on the way to user mode, both serializing): a
    // shootdown that reads the old value changed the tables before this
    // CPU walks them.
    __atomic_store_n(&loaded, pmap, __ATOMIC_RELEASE);
    TrampolineCpu& t = trampoline_of(id);
    switch (layout()) {
    case Layout::split_3_1:
        load_cr3(pmap ? pd_phys(pmap) : kernel_page_directory_phys());
        break;
    case Layout::split_3_1_pti:
        // The kernel runs on the process's full directory; the exit path
        // loads the user one.
        load_cr3(pmap ? pd_phys(pmap) : kernel_page_directory_phys());
        t.kernel_cr3 = pmap ? pd_phys(pmap) : kernel_page_directory_phys();
        t.user_cr3 = pmap ? user_pd_phys(pmap) : empty_user_directory_phys();
        break;
    case Layout::split_4_4:
        // The kernel never leaves its own directory: switching processes
        // costs no CR3 load at all, only the exit path's.
        t.user_cr3 = pmap ? user_pd_phys(pmap) : empty_user_directory_phys();
        break;
    }
}

uint32_t pmap_user_directory_phys(Pmap* pmap)
{
    return layout_isolated() ? user_pd_phys(pmap) : pd_phys(pmap);
}

Pmap* pmap_loaded_on(unsigned cpu_id)
{
    return __atomic_load_n(&g_loaded[cpu_id], __ATOMIC_ACQUIRE);
}

Pmap* pmap_current()
{
    return g_loaded[this_cpu_id()];
}

uintptr_t user_space_limit()
{
    return layout() == Layout::split_4_4 ? TRAMPOLINE_BASE : KERNEL_BASE;
}

} // namespace toll::arch
