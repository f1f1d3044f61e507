// Superpages in the arm64 pmap: promotion of a full, uniform stretch of
// pages to a contiguous run (one TLB entry for 64 KB at 4 KB, 2 MB at 16 KB)
// or to a level-2 block, and demotion back to pages when an operation needs
// single pages. Every change is break-before-make (Arm ARM D8.16.1): the
// entries are invalidated, the TLB over them flushed, then the new entries
// stored, with interrupts masked in between.
#include "arch/arm64/maintenance.h"
#include "arch/arm64/pmap_internal.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"

namespace toll::arch {
namespace arm64_pmap {
namespace {

TOLL_COUNTER(g_l2_promotions, "vm.pmap.l2.promotions");
TOLL_COUNTER(g_l2_failures, "vm.pmap.l2.p_failures");
TOLL_COUNTER(g_l2_demotions, "vm.pmap.l2.demotions");
TOLL_COUNTER(g_l3c_promotions, "vm.pmap.l3c.promotions");
TOLL_COUNTER(g_l3c_failures, "vm.pmap.l3c.p_failures");
TOLL_COUNTER(g_l3c_demotions, "vm.pmap.l3c.demotions");

// Fills level-3 table @p l3 (not live) with the pages of block @p block, as
// contiguous runs: demoting a block keeps the TLB reach of runs until an
// operation needs single pages.
void fill_from_block(uint64_t* l3, uint64_t block)
{
    uint64_t bits = (block & ~(k_desc_address | k_desc_type)) | k_desc_page | k_contiguous;
    uint64_t pa = block & k_desc_address;
    for (unsigned i = 0; i < k_entries; ++i)
        store_entry(&l3[i], (pa + i * k_page_size) | bits);
}

// Whether the @p pages entries from @p first can become one mapping of
// @p size bytes: every page valid, physically contiguous from an aligned
// start, with the same attributes (rights, memory type, the BTI guard bit
// if Toll used it).
bool uniform(const uint64_t* first, unsigned pages, uint64_t size)
{
    bool ok = (*first & k_desc_valid) && (*first & k_desc_address) % size == 0;
    for (unsigned i = 1; ok && i < pages; ++i)
        ok = (first[i] & k_desc_valid) &&
             (first[i] & k_desc_address) == (*first & k_desc_address) + i * k_page_size &&
             (first[i] & k_leaf_attributes) == (*first & k_leaf_attributes);
    return ok;
}

// Promotes the k_run_pages entries from @p first, mapping user addresses
// from @p base, to a contiguous run: true if it did; false, counted in
// vm.pmap.l3c.p_failures and changing nothing, if the entries cannot form
// one.
bool promote_run(Pmap* pmap, uint64_t* first, uint64_t base)
{
    // LAB superpages BEGIN: use uniform() to check that the run's k_run_pages entries from first can form one (else count g_l3c_failures, return false); then break-before-make with InterruptsOff: break (store 0 in each, flush_range over the run), make (store each again with k_contiguous), count g_l3c_promotions, return true
    if (!uniform(first, k_run_pages, k_run_size)) {
        g_l3c_failures.add();
        return false;
    }
    uint64_t bits = *first & ~(k_desc_address | k_contiguous);
    PhysAddr pa = *first & k_desc_address;
    arch::InterruptsOff off;
    for (unsigned i = 0; i < k_run_pages; ++i)
        store_entry(&first[i], 0);
    flush_range(pmap, base, k_run_size);
    for (unsigned i = 0; i < k_run_pages; ++i)
        store_entry(&first[i], (pa + i * k_page_size) | bits | k_contiguous);
    g_l3c_promotions.add();
    return true;
    // LAB superpages STUB
    // (void)pmap;
    // (void)first;
    // (void)base;
    // return false;
    // LAB superpages END
}

// Promotes the full level-3 table of @p l2e, mapping user addresses from
// @p base, to a block; false, counted, if its pages cannot form one.
bool promote_block(Pmap* pmap, uint64_t* l2e, uint64_t base)
{
    uint64_t* first = table(*l2e);
    if (!uniform(first, k_entries, k_l2_block)) {
        g_l2_failures.add();
        return false;
    }
    uint64_t bits = *first & ~(k_desc_address | k_contiguous);
    PhysAddr pa = *first & k_desc_address;
    // The level-3 table is kept for a later demotion. The walk cache may
    // hold the table entry and the TLB any of its pages: invalidate all.
    PhysAddr l3_pa = *l2e & k_desc_address;
    arch::InterruptsOff off;
    store_entry(l2e, 0);
    flush_range(pmap, base, k_l2_block, false);
    store_entry(l2e, pa | block_bits(bits));
    saved_l3(table_of(l2e), base) = l3_pa;
    g_l2_promotions.add();
    return true;
}

} // namespace

// Rewrites the contiguous run holding @p va as single pages, by
// break-before-make: invalidate every entry, invalidate the TLB over the
// whole run, store the entries again without the contiguous bit. Needs no
// memory. (With hardware AF/dirty updates the run's AF and dirty state
// would be ORed across its entries here; Toll keeps AF=1 and no DBM.)
void demote_run(Pmap* pmap, uint64_t* l3, uint64_t va)
{
    uint64_t base = va & ~(k_run_size - 1);
    uint64_t* run = &l3[l3_index(base)];
    uint64_t first = run[0];
    arch::InterruptsOff off;
    for (unsigned i = 0; i < k_run_pages; ++i)
        store_entry(&run[i], 0);
    flush_range(pmap, base, k_run_size);
    uint64_t bits = first & ~(k_desc_address | k_contiguous);
    for (unsigned i = 0; i < k_run_pages; ++i)
        store_entry(&run[i], ((first & k_desc_address) + i * k_page_size) | bits);
    g_l3c_demotions.add();
}

// Replaces the block in @p l2e by a level-3 table of the same pages, by
// break-before-make. Every block keeps a level-3 table aside (the one it was
// promoted from, or one set aside when it was entered), so demotion never
// needs memory and cannot fail.
void demote_block(Pmap* pmap, uint64_t* l2e, uint64_t va)
{
    uint64_t base = va & ~(k_l2_block - 1);
    uint64_t& saved = saved_l3(table_of(l2e), base);
    TOLL_ASSERT(saved != 0 && "every block keeps its level-3 table");
    PhysAddr l3 = saved;
    uint64_t block = *l2e;
    fill_from_block(static_cast<uint64_t*>(phys_to_virt(l3)), block);
    {
        arch::InterruptsOff off;
        store_entry(l2e, 0);
        // One TLBI by any address of a block removes the block's entry.
        flush(pmap, base, false);
        store_entry(l2e, l3 | k_desc_table);
    }
    saved = 0;
    g_l2_demotions.add();
}

} // namespace arm64_pmap

using namespace arm64_pmap;

bool pmap_promote(Pmap* pmap, uintptr_t va, unsigned psind)
{
    if (psind == 0)
        return false;
    uint64_t size = pmap_page_size(psind); // asserts that psind is one of ours
    uint64_t base = va & ~(size - 1);
    uint64_t* l2e = l2_slot(pmap, base);
    if (!l2e || !is_table(*l2e))
        return false; // nothing to promote, or a block already
    if (psind == k_psind_block)
        return promote_block(pmap, l2e, base);
    uint64_t* first = &table(*l2e)[l3_index(base)];
    if (*first & k_contiguous)
        return false; // a run already
    return promote_run(pmap, first, base);
}

} // namespace toll::arch
