// arm64 user page tables (mmu.h): a level-1 table per address space, for
// TTBR0_EL1, with level-2 and level-3 tables allocated on demand. The kernel
// lives in TTBR1_EL1's tables, so these hold user pages only. No inline
// assembly here: the TLB and cache operations are in mmu.cpp, so this file
// could compile on the host.
#include "kernel/vm/pmap.h"
#include "arch/arm64/mmu.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmem.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::vm {

/// The arm64 pmap is its level-1 table: a Pmap* is the table's kernel
/// address.
struct Pmap {
    uint64_t entries[arm64::k_entries];
};

namespace {

using namespace toll::arm64;

TOLL_COUNTER(g_page_tables, "vm.pmap.page_tables");

Pmap* g_current;

uint64_t* table(uint64_t descriptor)
{
    return static_cast<uint64_t*>(phys_to_virt(descriptor & k_desc_address));
}

// A zeroed page for a table, or k_none.
PhysAddr alloc_table()
{
    PhysAddr pa = phys_allocator().alloc(0);
    if (pa == PhysAllocator::k_none)
        return pa;
    memset(phys_to_virt(pa), 0, k_page_size);
    g_page_tables.add();
    return pa;
}

void free_table(PhysAddr pa)
{
    phys_allocator().free(pa, 0);
    g_page_tables.value--;
}

// The next-level table that @p entry points to, allocating it if @p create;
// nullptr if there is none (or no memory for it).
uint64_t* next_table(uint64_t& entry, bool create)
{
    if (!(entry & k_desc_valid)) {
        if (!create)
            return nullptr;
        PhysAddr pa = alloc_table();
        if (pa == PhysAllocator::k_none)
            return nullptr;
        entry = pa | k_desc_table;
    }
    return table(entry);
}

// Returns the level-3 slot for user address @p va, allocating the level-2
// and level-3 tables on the way if @p create.
uint64_t* pte_slot(Pmap* pmap, uint64_t va, bool create)
{
    if (va >= k_user_limit)
        return nullptr;
    uint64_t* l2 = next_table(pmap->entries[l1_index(va)], create);
    if (!l2)
        return nullptr;
    uint64_t* l3 = next_table(l2[l2_index(va)], create);
    return l3 ? &l3[l3_index(va)] : nullptr;
}

bool mapped(uint64_t pte)
{
    return pte & (k_desc_valid | k_soft_none);
}

uint64_t pte_bits(unsigned prot)
{
    if (prot == k_prot_none)
        return k_soft_none;
    // EL0-accessible, never executable by the kernel; non-global so that a
    // later ASID scheme can keep other processes' entries in the TLB.
    uint64_t bits =
        k_desc_page | k_attr_normal | k_sh_inner | k_af | k_not_global | k_ap_el0 | k_pxn;
    if (!(prot & k_prot_write))
        bits |= k_ap_read_only;
    if (!(prot & k_prot_exec))
        bits |= k_uxn;
    return bits;
}

void flush(Pmap* pmap, uint64_t va)
{
    if (pmap == g_current)
        invalidate_page(va);
}

} // namespace

Pmap* pmap_create()
{
    PhysAddr l1 = alloc_table();
    if (l1 == PhysAllocator::k_none)
        return nullptr;
    return static_cast<Pmap*>(phys_to_virt(l1)); // zeroed: nothing mapped
}

void pmap_destroy(Pmap* pmap)
{
    if (pmap == g_current)
        pmap_activate(nullptr);
    // The entries TTBR0 can reach: 8 at 16 KB (64 GB each), all 512 at 4 KB.
    constexpr unsigned k_user_l1_entries = unsigned((k_user_limit - 1) >> k_l1_shift) + 1;
    for (unsigned i = 0; i < k_user_l1_entries; ++i) {
        if (!(pmap->entries[i] & k_desc_valid))
            continue;
        uint64_t* l2 = table(pmap->entries[i]);
        for (unsigned j = 0; j < k_entries; ++j) {
            if (l2[j] & k_desc_valid)
                free_table(l2[j] & k_desc_address);
        }
        free_table(pmap->entries[i] & k_desc_address);
    }
    free_table(virt_to_phys(pmap));
}

unsigned pmap_page_size_count()
{
    return 1;
}

size_t pmap_page_size(unsigned psind)
{
    return psind == 0 ? k_page_size : 0;
}

Errno pmap_enter(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot, unsigned psind)
{
    if (psind != 0)
        return k_einval;
    uint64_t* pte = pte_slot(pmap, va, true);
    if (!pte)
        return k_enomem;
    bool was_mapped = mapped(*pte);
    *pte = (pa & k_desc_address) | pte_bits(prot);
    if (was_mapped)
        flush(pmap, va);
    if (prot & k_prot_exec)
        sync_instruction_cache(phys_to_virt(pa & k_desc_address));
    return k_ok;
}

namespace {

// Calls @p visit(va, pte) for every mapped PTE of [start, end), skipping the
// level-2 stretches (2 MB, or 32 MB at 16 KB) that have no level-3 table.
template <typename Visit>
void for_each_mapped(Pmap* pmap, uintptr_t start, uintptr_t end, Visit visit)
{
    for (uintptr_t va = start; va < end && va >= start;) {
        uint64_t* pte = pte_slot(pmap, va, false);
        if (!pte) {
            va = (va + k_l2_block) & ~(k_l2_block - 1);
            continue;
        }
        if (mapped(*pte))
            visit(va, pte);
        va += k_page_size;
    }
}

} // namespace

Errno pmap_remove(Pmap* pmap, uintptr_t start, uintptr_t end, PmapPageSink sink, void* context)
{
    for_each_mapped(pmap, start, end, [&](uintptr_t va, uint64_t* pte) {
        PhysAddr pa = *pte & k_desc_address;
        *pte = 0;
        flush(pmap, va);
        if (sink)
            sink(context, va, pa);
    });
    return k_ok;
}

Errno pmap_protect(Pmap* pmap, uintptr_t start, uintptr_t end, unsigned prot)
{
    for_each_mapped(pmap, start, end, [&](uintptr_t va, uint64_t* pte) {
        PhysAddr pa = *pte & k_desc_address;
        *pte = pa | pte_bits(prot);
        flush(pmap, va);
        if (prot & k_prot_exec)
            sync_instruction_cache(phys_to_virt(pa));
    });
    return k_ok;
}

bool pmap_promote(Pmap*, uintptr_t, unsigned)
{
    return false;
}

size_t pmap_tlb_entries(Pmap* pmap, uintptr_t start, uintptr_t end)
{
    size_t n = 0;
    for_each_mapped(pmap, start, end, [&](uintptr_t, uint64_t* pte) {
        if (*pte & k_desc_valid)
            ++n;
    });
    return n;
}

bool pmap_extract(Pmap* pmap, uintptr_t va, PhysAddr* pa, unsigned* prot)
{
    uint64_t* pte = pte_slot(pmap, va, false);
    if (!pte || !mapped(*pte))
        return false;
    if (pa)
        *pa = (*pte & k_desc_address) | (va & (k_page_size - 1));
    if (prot) {
        if (!(*pte & k_desc_valid)) {
            *prot = k_prot_none;
        } else {
            *prot = k_prot_read;
            if (!(*pte & k_ap_read_only))
                *prot |= k_prot_write;
            if (!(*pte & k_uxn))
                *prot |= k_prot_exec;
        }
    }
    return true;
}

uintptr_t pmap_next_mapped(Pmap* pmap, uintptr_t va, uintptr_t end)
{
    constexpr uint64_t k_l1_span = 1ull << k_l1_shift;
    uintptr_t stop = end < k_user_limit ? end : k_user_limit;
    while (va < stop) {
        uint64_t l1e = pmap->entries[l1_index(va)];
        if (!(l1e & k_desc_valid)) {
            va = (va & ~(k_l1_span - 1)) + k_l1_span; // no level-2 table here
            continue;
        }
        uintptr_t next_table = (va & ~(k_l2_block - 1)) + k_l2_block;
        uint64_t l2e = table(l1e)[l2_index(va)];
        if (l2e & k_desc_valid) {
            const uint64_t* l3 = table(l2e);
            for (; va < stop && va < next_table; va += k_page_size)
                if (mapped(l3[l3_index(va)]))
                    return va;
        }
        va = next_table;
    }
    return end;
}

void pmap_activate(Pmap* pmap)
{
    if (pmap == g_current)
        return; // same address space: no table load, no TLB flush
    g_current = pmap;
    set_user_table(pmap ? virt_to_phys(pmap) : empty_user_table_phys());
}

Pmap* pmap_current()
{
    return g_current;
}

uintptr_t user_space_limit()
{
    return k_user_limit;
}

} // namespace toll::vm
