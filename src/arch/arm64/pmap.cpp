// arm64 user page tables (mmu.h): a level-1 table per address space, for
// TTBR0_EL1, with level-2 and level-3 tables allocated on demand (the kernel
// lives in TTBR1_EL1's tables, so these hold user pages only). Three mapping
// sizes: a page, a contiguous run of pages (one TLB entry for 64 KB with a
// 4 KB granule, 2 MB with 16 KB) and a level-2 block (2 MB, or 32 MB); their
// promotion and demotion are in pmap_superpage.cpp. No inline assembly here:
// the hardware operations are in mmu.cpp and maintenance.cpp, so the host
// tests compile this file over simulated memory and check every store.
#include "kernel/arch/pmap.h"
#include "arch/arm64/asid.h"
#include "arch/arm64/maintenance.h"
#include "arch/arm64/mmu.h"
#include "arch/arm64/pmap_internal.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::arch {
namespace arm64_pmap {
namespace {

static_assert(k_user_limit % k_l2_block == 0, "user space ends on a level-2 block");
/// The level-1 entries TTBR0 can reach: 8 at 16 KB (64 GB each), all 512 at 4 KB.
constexpr unsigned k_user_l1_entries = unsigned((k_user_limit - 1) >> k_l1_shift) + 1;

TOLL_GAUGE(g_page_tables, "vm.pmap.page_tables"); // in use now
TOLL_COUNTER(g_ptp_allocs, "vm.pmap.ptp_allocs"); // page-table pages ever allocated
TOLL_COUNTER(g_l2_mappings, "vm.pmap.l2.mappings");
TOLL_COUNTER(g_l3c_mappings, "vm.pmap.l3c.mappings");

// The address space each CPU has loaded in TTBR0 (the host tests run one).
Pmap* g_loaded[k_max_cpus];

Pmap*& loaded()
{
#ifdef TOLL_HOST_TEST
    return g_loaded[0];
#else
    return g_loaded[this_cpu().id];
#endif
}

// A zeroed page for a table, or k_enomem.
Result<PhysAddr> alloc_table()
{
    Result<PhysAddr> pa = vm::phys_allocator().alloc(0);
    if (!pa)
        return pa;
    memset(phys_to_virt(pa.value()), 0, k_page_size);
    g_page_tables.raise();
    g_ptp_allocs.add();
    return pa;
}

void free_table(PhysAddr pa)
{
    vm::phys_allocator().free(pa, 0);
    g_page_tables.lower();
}

uint64_t* l2_table(Pmap* pmap, uint64_t va, bool create)
{
    uint64_t& l1e = pmap->entries[l1_index(va)];
    if (!(l1e & k_desc_valid)) {
        if (!create)
            return nullptr;
        Result<PhysAddr> pa = vm::phys_allocator().alloc(1);
        if (!pa)
            return nullptr;
        memset(phys_to_virt(pa.value()), 0, 2 * k_page_size);
        g_page_tables.raise();
        g_ptp_allocs.add();
        store_entry(&l1e, pa.value() | k_desc_table);
    }
    return table(l1e);
}

uint64_t pte_bits(unsigned prot)
{
    if (prot == k_prot_none)
        return k_soft_none;
    // EL0-accessible, never executable by the kernel; non-global so that a
    // later ASID scheme can keep other processes' entries in the TLB. AF is
    // always set and DBM never: Toll tracks neither accessed nor dirty state
    // in hardware, so no entry of a run can differ from the others in them
    // and demotion has no bits to gather.
    uint64_t bits =
        k_desc_page | k_attr_normal | k_sh_inner | k_af | k_not_global | k_ap_el0 | k_pxn;
    if (!(prot & k_prot_write))
        bits |= k_ap_read_only;
    if (!(prot & k_prot_exec))
        bits |= k_uxn;
    return bits;
}

unsigned prot_of(uint64_t leaf)
{
    if (!(leaf & k_desc_valid))
        return k_prot_none;
    unsigned prot = k_prot_read;
    if (!(leaf & k_ap_read_only))
        prot |= k_prot_write;
    if (!(leaf & k_uxn))
        prot |= k_prot_exec;
    return prot;
}

} // namespace

// TLB maintenance by address, on every CPU at once: the broadcast forms
// (TLBI VALE1IS, VAE1IS) under the pmap's ASID reach every TLB that may hold
// its entries, whichever CPUs run it or ran it, so no CPU needs to be
// interrupted and none is tracked. A pmap that never ran has nothing cached.
void flush(Pmap* pmap, uint64_t va, bool leaf_only)
{
    flush_range(pmap, va, k_page_size, leaf_only);
}

void flush_range(Pmap* pmap, uint64_t va, uint64_t length, bool leaf_only)
{
    unsigned tag = asid::tlb_tag(pmap->asid_context);
    if (tag != asid::k_tag_none)
        invalidate_range(tag, va, length, leaf_only);
}

namespace {

// The TLB invalidation an operation over a range owes, paid once at its end
// as one shootdown over the span of what changed (the span rather than a
// list: the pages between are invalidated needlessly, which costs less than
// a barrier per piece, and above the threshold it is one TLBI ASIDE1IS).
class Shootdown {
  public:
    explicit Shootdown(Pmap* pmap) : m_pmap(pmap) {}
    void add(uint64_t va, uint64_t length)
    {
        m_lo = m_hi == 0 || va < m_lo ? va : m_lo;
        m_hi = va + length > m_hi ? va + length : m_hi;
    }
    void finish()
    {
        if (m_hi > m_lo)
            flush_range(m_pmap, m_lo, m_hi - m_lo, true);
        m_lo = m_hi = 0;
    }

  private:
    Pmap* m_pmap;
    uint64_t m_lo = 0, m_hi = 0;
};

} // namespace

uint64_t* l2_slot(Pmap* pmap, uint64_t va, bool create)
{
    if (va >= k_user_limit)
        return nullptr;
    uint64_t* l2 = l2_table(pmap, va, create);
    return l2 ? &l2[l2_index(va)] : nullptr;
}

namespace {

// The level-3 slot of @p va, demoting a block that covers it; allocates the
// level-3 table if @p create. nullptr (and *error set) when it cannot.
uint64_t* pte_slot(Pmap* pmap, uint64_t va, bool create, Errno* error = nullptr)
{
    uint64_t* l2e = l2_slot(pmap, va, create);
    if (!l2e) {
        if (error)
            *error = k_enomem;
        return nullptr;
    }
    if (is_block(*l2e)) {
        demote_block(pmap, l2e, va);
    } else if (!(*l2e & k_desc_valid)) {
        if (!create)
            return nullptr;
        Result<PhysAddr> l3 = alloc_table();
        if (!l3) {
            if (error)
                *error = l3.error();
            return nullptr;
        }
        store_entry(l2e, l3.value() | k_desc_table);
    }
    return &table(*l2e)[l3_index(va)];
}

// Makes sure no superpage straddles @p va (a range boundary): demotes the
// block or run that covers both sides of it. Needs no memory.
void split_at(Pmap* pmap, uint64_t va)
{
    uint64_t* l2e = l2_slot(pmap, va);
    if (!l2e || !(*l2e & k_desc_valid))
        return;
    if (is_block(*l2e)) {
        if (va % k_l2_block == 0)
            return;
        demote_block(pmap, l2e, va);
    }
    if (va % k_run_size == 0)
        return;
    uint64_t* l3 = table(*l2e);
    if (l3[l3_index(va)] & k_contiguous)
        demote_run(pmap, l3, va);
}

// Calls @p visit for each superpage or page mapped in [start, end), which
// no superpage straddles (split_at both ends first): visit(va, slot, size)
// with the level-2 slot of a block, the first level-3 slot of a run, or the
// slot of a page.
template <typename Visit>
void for_each_mapping(Pmap* pmap, uint64_t start, uint64_t end, Visit visit)
{
    for (uint64_t va = start; va < end && va >= start;) {
        uint64_t next_block = (va + k_l2_block) & ~(k_l2_block - 1);
        uint64_t* l2e = l2_slot(pmap, va);
        if (!l2e) {
            constexpr uint64_t k_l1_span = 1ull << k_l1_shift;
            va = (va & ~(k_l1_span - 1)) + k_l1_span; // no level-2 table here
            continue;
        }
        if (!(*l2e & k_desc_valid)) {
            va = next_block;
            continue;
        }
        if (is_block(*l2e)) {
            visit(va, l2e, k_l2_block);
            va = next_block;
            continue;
        }
        uint64_t* pte = &table(*l2e)[l3_index(va)];
        if (*pte & k_contiguous) {
            visit(va, pte, k_run_size);
            va += k_run_size;
        } else {
            if (mapped(*pte))
                visit(va, pte, k_page_size);
            va += k_page_size;
        }
    }
}

// Calls @p visit for each entry of [start, end) that the first pass of a
// removal marked k_soft_gone: visit(va, slot, size) with the level-2 slot
// of a block (size k_l2_block) or the slot of one page.
template <typename Visit>
void for_each_gone(Pmap* pmap, uint64_t start, uint64_t end, Visit visit)
{
    for (uint64_t va = start; va < end && va >= start;) {
        uint64_t next_block = (va + k_l2_block) & ~(k_l2_block - 1);
        uint64_t* l2e = l2_slot(pmap, va);
        if (!l2e) {
            constexpr uint64_t k_l1_span = 1ull << k_l1_shift;
            va = (va & ~(k_l1_span - 1)) + k_l1_span;
            continue;
        }
        if (*l2e & k_soft_gone) {
            visit(va, l2e, k_l2_block);
            va = next_block;
            continue;
        }
        if (!is_table(*l2e)) {
            va = next_block;
            continue;
        }
        uint64_t* l3 = table(*l2e);
        uint64_t stop = next_block < end ? next_block : end;
        for (; va < stop; va += k_page_size)
            if (l3[l3_index(va)] & k_soft_gone)
                visit(va, &l3[l3_index(va)], k_page_size);
        va = stop;
    }
}

} // namespace
} // namespace arm64_pmap

using namespace arm64_pmap;

unsigned pmap_page_size_count()
{
    return 3;
}

size_t pmap_page_size(unsigned psind)
{
    TOLL_ASSERT(psind <= k_psind_block); // a made-up size index: a kernel bug
    switch (psind) {
    case 0:
        return k_page_size;
    case k_psind_run:
        return k_run_size;
    default: // k_psind_block
        return k_l2_block;
    }
}

Pmap* pmap_create()
{
    // An order-1 block: the level-1 table, then the page of asid_context.
    static_assert(sizeof(Pmap) <= 2 * k_page_size);
    Result<PhysAddr> l1 = vm::phys_allocator().alloc(1);
    if (!l1)
        return nullptr;
    memset(phys_to_virt(l1.value()), 0, sizeof(Pmap)); // nothing mapped, no ASID yet
    g_page_tables.raise();
    g_ptp_allocs.add();
    return static_cast<Pmap*>(phys_to_virt(l1.value()));
}

void pmap_destroy(Pmap* pmap)
{
    if (pmap == loaded())
        pmap_activate(nullptr);
    // Another CPU may still have it loaded, running only kernel threads
    // since (they keep whatever table was there): forget it there too, so
    // that a new pmap made at the same address is loaded in full when that
    // CPU switches to it, not taken for this one. Until then the CPU's TTBR0
    // names freed tables under an ASID nobody else gets in this generation,
    // and its kernel threads never touch user addresses.
    for (Pmap*& other : g_loaded) {
        Pmap* expected = pmap;
        __atomic_compare_exchange_n(&other, &expected, nullptr, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
    }
    for (unsigned i = 0; i < k_user_l1_entries; ++i) {
        if (!(pmap->entries[i] & k_desc_valid))
            continue;
        uint64_t* l2 = table(pmap->entries[i]);
        for (unsigned j = 0; j < k_entries; ++j) {
            // Eight empty slots (and their shadows) a test: a program's
            // level-3 tables are a handful among 512.
            const uint64_t* at = l2 + j;
            if (j + 8 <= k_entries &&
                !(at[0] | at[1] | at[2] | at[3] | at[4] | at[5] | at[6] | at[7] | at[k_entries] |
                  at[k_entries + 1] | at[k_entries + 2] | at[k_entries + 3] | at[k_entries + 4] |
                  at[k_entries + 5] | at[k_entries + 6] | at[k_entries + 7])) {
                j += 7;
                continue;
            }
            if (is_table(l2[j]))
                free_table(l2[j] & k_desc_address);
            if (l2[k_entries + j])
                free_table(l2[k_entries + j]);
        }
        vm::phys_allocator().free(pmap->entries[i] & k_desc_address, 1);
        g_page_tables.lower();
    }
    asid::release(pmap->asid_context); // TLBI by ASID: nothing of it stays cached
    vm::phys_allocator().free(virt_to_phys(pmap), 1);
    g_page_tables.lower();
}

namespace {

// pmap_enter of one page: replaces any mapping of it, demoting the block or
// run around it first.
Errno enter_page(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot)
{
    Errno error = k_enomem;
    uint64_t* pte = pte_slot(pmap, va, true, &error);
    if (!pte)
        return error;
    if (*pte & k_contiguous)
        demote_run(pmap, table(*l2_slot(pmap, va)), va);
    uint64_t old = *pte;
    uint64_t fresh = (pa & k_desc_address) | pte_bits(prot);
    // Instructions must be visible before the entry that maps them, unless
    // the caller knows they are (a page-cache page synced once already).
    if ((prot & k_prot_exec) && !(prot & k_prot_icache_clean))
        sync_icache_range(phys_to_virt(pa), k_page_size);
    if ((old & k_desc_valid) && (old & k_desc_address) != (pa & k_desc_address)) {
        arch::InterruptsOff off; // a new output address: break before make
        store_entry(pte, 0);
        flush(pmap, va);
        store_entry(pte, fresh);
    } else {
        store_entry(pte, fresh);
        if (old & k_desc_valid)
            flush(pmap, va);
    }
    return k_ok;
}

// pmap_enter of a level-2 block where nothing is mapped: the level-3 table
// there (empty) or a fresh one is set aside for the block's demotion.
Errno enter_block(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot)
{
    uint64_t* l2e = l2_slot(pmap, va, true);
    if (!l2e)
        return k_enomem;
    if (is_block(*l2e))
        return k_eexist;
    PhysAddr keep;
    if (is_table(*l2e)) {
        uint64_t* l3 = table(*l2e);
        for (unsigned i = 0; i < k_entries; ++i)
            if (mapped(l3[i]))
                return k_eexist;
        keep = *l2e & k_desc_address;
    } else {
        Result<PhysAddr> fresh = alloc_table();
        if (!fresh)
            return fresh.error();
        keep = fresh.value();
    }
    if (prot & k_prot_exec)
        sync_icache_range(phys_to_virt(pa), k_l2_block); // once for the block
    if (is_table(*l2e)) {
        arch::InterruptsOff off; // table to block: break before make
        store_entry(l2e, 0);
        flush_range(pmap, va, k_l2_block, false); // the walk cache held the table entry
    }
    store_entry(l2e, (pa & k_desc_address) | block_bits(pte_bits(prot)));
    saved_l3(table_of(l2e), va) = keep;
    g_l2_mappings.add();
    return k_ok;
}

// pmap_enter of a contiguous run where nothing is mapped.
Errno enter_run(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot)
{
    uint64_t* l2e = l2_slot(pmap, va, true);
    if (!l2e)
        return k_enomem;
    if (is_block(*l2e))
        return k_eexist;
    Errno error = k_enomem;
    uint64_t* pte = pte_slot(pmap, va, true, &error);
    if (!pte)
        return error;
    for (unsigned i = 0; i < k_run_pages; ++i)
        if (mapped(pte[i]))
            return k_eexist;
    if (prot & k_prot_exec)
        sync_icache_range(phys_to_virt(pa), k_run_size); // once for the run
    uint64_t bits = pte_bits(prot);
    for (unsigned i = 0; i < k_run_pages; ++i)
        store_entry(&pte[i], ((pa & k_desc_address) + i * k_page_size) | bits | k_contiguous);
    g_l3c_mappings.add();
    return k_ok;
}

} // namespace

Errno pmap_enter(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot, unsigned psind)
{
    uint64_t size = pmap_page_size(psind); // asserts that psind is one of ours
    if (va % size || pa % size || va >= k_user_limit)
        return k_einval;
    if (psind == 0)
        return enter_page(pmap, va, pa, prot);
    if (prot == k_prot_none)
        return k_einval; // a superpage is a valid mapping
    return psind == k_psind_block ? enter_block(pmap, va, pa, prot) : enter_run(pmap, va, pa, prot);
}

Errno pmap_remove(Pmap* pmap, uintptr_t start, uintptr_t end, PmapPageSink sink, void* context)
{
    arch::InterruptsOff off;
    // Blocks keep their level-3 table aside, so on arm64 demotion never
    // needs memory and this never fails.
    split_at(pmap, start);
    split_at(pmap, end);
    // Two passes around one shootdown: first every entry is made invalid
    // but keeps its address (marked k_soft_gone), so that the TLB
    // invalidation for the whole range is paid once; then, with no CPU
    // able to reach the pages any more, the entries are cleared and the
    // pages handed to the sink. A thread on another CPU that touches the
    // range meanwhile takes a translation fault and waits for the space.
    Shootdown shootdown(pmap);
    for_each_mapping(pmap, start, end, [&](uint64_t va, uint64_t* slot, uint64_t size) {
        unsigned entries = size == k_l2_block ? 1 : unsigned(size / k_page_size);
        for (unsigned i = 0; i < entries; ++i)
            store_entry(&slot[i], (slot[i] & ~k_desc_valid) | k_soft_gone);
        shootdown.add(va, size);
    });
    shootdown.finish();
    for_each_gone(pmap, start, end, [&](uint64_t va, uint64_t* slot, uint64_t size) {
        PhysAddr pa = *slot & k_desc_address;
        unsigned entries = size == k_l2_block ? 1 : unsigned(size / k_page_size);
        for (unsigned i = 0; i < entries; ++i)
            store_entry(&slot[i], 0);
        if (size == k_l2_block) {
            uint64_t& saved = saved_l3(table_of(slot), va);
            if (saved) {
                free_table(saved);
                saved = 0;
            }
        }
        if (sink)
            for (uint64_t off = 0; off < size; off += k_page_size)
                sink(context, va + off, pa + off);
    });
    return k_ok;
}

Errno pmap_protect(Pmap* pmap, uintptr_t start, uintptr_t end, unsigned prot)
{
    arch::InterruptsOff off; // a run is broken from the first pass to the second
    // Blocks keep their level-3 table aside, so on arm64 demotion never
    // needs memory and this never fails.
    split_at(pmap, start);
    split_at(pmap, end);
    uint64_t bits = pte_bits(prot);
    Shootdown shootdown(pmap);
    bool broke_runs = false;
    for_each_mapping(pmap, start, end, [&](uint64_t va, uint64_t* slot, uint64_t size) {
        if (size != k_page_size && prot == k_prot_none) {
            // PROT_NONE entries are invalid, and an invalid entry cannot be
            // part of a superpage: demote to single pages first.
            if (size == k_l2_block) {
                demote_block(pmap, slot, va);
                slot = &table(*slot)[0];
            }
            for (uint64_t run = va; run < va + size; run += k_run_size)
                demote_run(pmap, table(*l2_slot(pmap, run)), run);
            size_t pages = size / k_page_size;
            for (size_t i = 0; i < pages; ++i)
                store_entry(&slot[i], (slot[i] & k_desc_address) | k_soft_none);
            shootdown.add(va, size);
            return;
        }
        uint64_t old = *slot;
        PhysAddr pa = old & k_desc_address;
        uint64_t fresh = size == k_l2_block   ? pa | block_bits(bits)
                         : size == k_run_size ? pa | bits | k_contiguous
                                              : pa | bits;
        // A run's entries all carry the same attributes: its first one
        // tells whether anything changes. Nothing does: leave it alone, as
        // FreeBSD's pmap_protect skips entries already as asked.
        if (old == fresh)
            return;
        // Instructions must be visible before the entries that make them
        // executable, once per superpage; a mapping that was executable
        // already was made coherent then.
        bool was_executable = (old & k_desc_valid) && !(old & k_uxn);
        if ((prot & k_prot_exec) && !was_executable)
            sync_icache_range(phys_to_virt(pa), size);
        if (size == k_run_size) {
            // Only the rights change, not the output address or the size,
            // yet a live run is never rewritten entry by entry: between the
            // first store and the last it would hold entries of different
            // attributes under the contiguous bit, which the Arm ARM calls a
            // misprogramming of the Contiguous bit (a TLB conflict abort or
            // a wrong translation may follow). Linux breaks the whole run
            // first, and so does Toll: break here (each entry invalid, its
            // address kept, marked k_soft_gone), invalidate once for the
            // whole range below, then make.
            for (unsigned i = 0; i < k_run_pages; ++i)
                store_entry(&slot[i], (slot[i] & ~k_desc_valid) | k_soft_gone);
            broke_runs = true;
        } else {
            // One entry (a page or a block): its rights may change in place.
            store_entry(slot, fresh);
        }
        if (old & k_desc_valid)
            shootdown.add(va, size);
    });
    // One shootdown for everything that changed; only then are the broken
    // runs made again, with the new rights.
    shootdown.finish();
    if (broke_runs)
        for_each_gone(pmap, start, end, [&](uint64_t, uint64_t* slot, uint64_t) {
            store_entry(slot, (*slot & k_desc_address) | bits | k_contiguous);
        });
    return k_ok;
}

Optional<Mapping> pmap_extract(Pmap* pmap, uintptr_t va)
{
    uint64_t* l2e = l2_slot(pmap, va);
    if (!l2e || !(*l2e & k_desc_valid))
        return {};
    uint64_t leaf;
    uint64_t offset_mask;
    if (is_block(*l2e)) {
        leaf = *l2e;
        offset_mask = k_l2_block - 1;
    } else {
        leaf = table(*l2e)[l3_index(va)];
        offset_mask = k_page_size - 1;
        if (!mapped(leaf))
            return {};
    }
    Mapping m;
    m.pa = (leaf & k_desc_address) | (va & offset_mask);
    m.prot = prot_of(leaf);
    m.psind = offset_mask + 1 == k_l2_block ? k_psind_block
              : (leaf & k_contiguous)       ? k_psind_run
                                            : 0;
    return m;
}

size_t pmap_tlb_entries(Pmap* pmap, uintptr_t start, uintptr_t end)
{
    size_t n = 0;
    for_each_mapping(pmap, start & ~(k_l2_block - 1), end,
                     [&](uint64_t, uint64_t* slot, uint64_t) { n += (*slot & k_desc_valid) != 0; });
    return n;
}

uintptr_t pmap_next_mapped(Pmap* pmap, uintptr_t va, uintptr_t end)
{
    constexpr uint64_t k_l1_span = 1ull << k_l1_shift;
    uintptr_t stop = end < k_user_limit ? end : k_user_limit;
    while (va < stop) {
        uint64_t* l2e = l2_slot(pmap, va);
        if (!l2e) {
            va = (va & ~(k_l1_span - 1)) + k_l1_span; // no level-2 table here
            continue;
        }
        uintptr_t next_table = (va & ~(k_l2_block - 1)) + k_l2_block;
        if (is_block(*l2e))
            return va;
        if (is_table(*l2e)) {
            // By pointer, eight slots a test where they are empty: a sparse
            // stack table is mostly zeros. (mapped() tests bits, so the OR of
            // eight entries is mapped when any one is.)
            const uint64_t* l3 = table(*l2e);
            uintptr_t limit = stop < next_table ? stop : next_table;
            const uint64_t* slot = l3 + l3_index(va);
            const uint64_t* last = slot + (limit - va + k_page_size - 1) / k_page_size;
            while (last - slot >= 8 && !mapped(slot[0] | slot[1] | slot[2] | slot[3] | slot[4] |
                                               slot[5] | slot[6] | slot[7]))
                slot += 8;
            for (; slot < last; ++slot)
                if (mapped(*slot))
                    return (va & ~(k_l2_block - 1)) + uintptr_t(slot - l3) * k_page_size;
        }
        va = next_table;
    }
    return end;
}

void pmap_activate(Pmap* pmap)
{
    arch::InterruptsOff off; // this CPU's loaded table, on this CPU
    if (pmap == loaded())
        return; // same address space: no table load, no TLB flush
    loaded() = pmap;
    if (pmap)
        asid::activate(virt_to_phys(pmap), pmap->asid_context);
    else
        asid::activate_none();
}

void pmap_tlb_shootdown(Pmap* pmap, uintptr_t start, uintptr_t end)
{
    if (end > start)
        flush_range(pmap, start, end - start, false);
}

size_t pmap_shootdown_ceiling()
{
    return shootdown_ceiling();
}

Pmap* pmap_current()
{
    return loaded();
}

uintptr_t user_space_limit()
{
    return k_user_limit;
}

} // namespace toll::arch
