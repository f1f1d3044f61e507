// What the two halves of the arm64 pmap share: the Pmap itself, the
// descriptor constants and small helpers. pmap.cpp makes, changes and looks
// up mappings; pmap_superpage.cpp turns pages into contiguous runs and level-2
// blocks (promotion) and back (demotion). Private to those two files.
#pragma once
#include "arch/arm64/mmu.h"
#include "kernel/arch/physmem.h"
#include "kernel/arch/pmap.h"
#include <stdint.h>

namespace toll::arch {

/// The arm64 pmap is its level-1 table: a Pmap* is the table's kernel
/// address. Each level-2 table below it is followed by a page of
/// bookkeeping (see saved_l3()).
struct Pmap {
    uint64_t entries[arm64::k_entries];
    /// In the page after the table: the pmap's ASID and its generation
    /// (arch/arm64/asid.h).
    uint64_t asid_context;
};

namespace arm64_pmap {

using namespace toll::arm64;

// Arm ARM D8.6.1, "The Contiguous bit": bit 52 of a descriptor marks it as
// one of a naturally aligned set of entries mapping one contiguous output
// range with identical attributes, which the TLB may cache as one entry. At
// level 3 a set is 16 entries with a 4 KB granule and 128 with 16 KB.
constexpr uint64_t k_contiguous = 1ull << 52;
constexpr unsigned k_run_pages = k_page_size == 4096 ? 16 : 128;
constexpr uint64_t k_run_size = k_run_pages * k_page_size;
/// Bits [1:0] of a descriptor: what kind it is (D8.3).
constexpr uint64_t k_desc_type = 3;
/// Everything in a leaf descriptor but its output address and size marks:
/// the bits that must agree across a run and within a block.
constexpr uint64_t k_leaf_attributes = ~(k_desc_address | k_contiguous | k_desc_type);

/// Size indices (pmap.h): a page, a contiguous run, a level-2 block.
constexpr unsigned k_psind_run = 1, k_psind_block = 2;

/// The table a table descriptor points to, at its kernel address.
inline uint64_t* table(uint64_t descriptor)
{
    return static_cast<uint64_t*>(phys_to_virt(descriptor & k_desc_address));
}

/// A level-2 table is allocated as an order-1 block: the table, then a page
/// holding, for each of its entries that is a block, the physical address of
/// the level-3 table kept aside for that block's demotion (0 for none).
inline uint64_t& saved_l3(uint64_t* l2, uint64_t va)
{
    return l2[k_entries + l2_index(va)];
}

inline bool is_table(uint64_t l2e)
{
    return (l2e & k_desc_type) == k_desc_table;
}

inline bool is_block(uint64_t l2e)
{
    return (l2e & k_desc_type) == k_desc_block;
}

/// A page is mapped if valid, or PROT_NONE (invalid, marked by software).
inline bool mapped(uint64_t pte)
{
    return pte & (k_desc_valid | k_soft_none);
}

/// A level-2 block descriptor with the rights of page descriptor bits @p bits.
inline uint64_t block_bits(uint64_t page_bits)
{
    return (page_bits & ~k_desc_type) | k_desc_block;
}

/// The level-2 table holding entry @p l2e (its page is aligned).
inline uint64_t* table_of(uint64_t* l2e)
{
    return reinterpret_cast<uint64_t*>(reinterpret_cast<uintptr_t>(l2e) & ~(k_page_size - 1));
}

// pmap.cpp

/// The level-2 entry of user address @p va, allocating the level-2 table if
/// @p create; nullptr if there is none (or no memory for it).
uint64_t* l2_slot(Pmap* pmap, uint64_t va, bool create = false);

/// Invalidates on every CPU the TLB entries of @p pmap for the page at
/// @p va, and waits for it: the last-level entry only if @p leaf_only, the
/// walk-cache entries above it too if not (a table entry changed). Nothing
/// if @p pmap never ran.
void flush(Pmap* pmap, uint64_t va, bool leaf_only = true);

/// The same over [@p va, @p va + @p length), as one shootdown.
void flush_range(Pmap* pmap, uint64_t va, uint64_t length, bool leaf_only = true);

// pmap_superpage.cpp

/// Rewrites the contiguous run holding @p va (in level-3 table @p l3) as
/// single pages, by break-before-make. Needs no memory.
void demote_run(Pmap* pmap, uint64_t* l3, uint64_t va);

/// Replaces the block in @p l2e by the level-3 table kept aside for it,
/// filled with the block's pages as contiguous runs, by break-before-make.
/// Needs no memory, cannot fail.
void demote_block(Pmap* pmap, uint64_t* l2e, uint64_t va);

} // namespace arm64_pmap
} // namespace toll::arch
