// The physical page allocator: a binary buddy allocator over the usable memory
// the boot loader reported, handing out naturally aligned runs of 2^order pages.
#pragma once
#include "kernel/kern/result.h"
#include "kernel/vm/arch.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::vm {

/// A binary buddy allocator of physical pages.
///
/// Memory is kept as free blocks of 2^order pages (order 0 .. k_max_order),
/// each aligned to its own size. Allocating splits a larger block in halves
/// until one of the wanted order is left; freeing merges a block with its
/// *buddy* (the other half of the block they were split from, found by
/// flipping one address bit) for as long as the buddy is free too.
///
/// Where the bookkeeping lives:
///  - The free lists are threaded through the free blocks themselves: the
///    first bytes of a free block hold a small header (links, order, a magic
///    number and the block's own address), reached with phys_to_virt(). An
///    allocated block carries no header; alloc() wipes it.
///  - Whether a buddy is free is decided by a bitmap, one bit per page, set
///    exactly for the first page of each free block. It is carved out of the
///    first pages of every range of memory it manages: 1 bit per 4 KB page is
///    32 KB per GB of memory (1/32768 of it), and it needs no static array
///    sized for the largest machine. The header alone is not trusted: an
///    allocated page may contain anything (a user program fills its pages as
///    it likes) and so could forge a header; the bitmap lives in memory that
///    is never handed out. The header's magic is kept as a second opinion
///    that catches writes into free memory (use after free).
///
/// When memory is written: add_range() and reserve() only take notes in a
/// small table inside the object (the ranges, with reserved holes cut out).
/// The first alloc() or free() *builds* the allocator: it writes the bitmaps
/// and the free-block headers. That is why reserve() may come after
/// add_range(): the boot code (vm_init.cpp, add_usable_memory) adds every
/// usable range and then reserves the kernel image and the extra ramdisk,
/// before anything is written over them. Exercise for the student: what
/// would go wrong if add_range() wrote the bitmap at once?
///
/// Cost: alloc() is O(k_max_order) list operations; free() is O(k_max_order)
/// bitmap probes plus a scan of 2^order bits for its double-free check.
///
/// Locking: alloc() and free() take the page allocators' spinlock ("vm.phys",
/// one for the kernel's allocator and the few the tests make),
/// which masks interrupts like every spinlock, so that an interrupt handler
/// that allocated could not spin on its own CPU's hold. The reclaim hook
/// runs with the lock released (it frees pages, which takes it again). The
/// boot-time calls (add_range, reserve) run before any other CPU starts and
/// take no lock. Exercise for the student: why may the count of free pages
/// be read without the lock, and what may a reader see?
class PhysAllocator {
  public:
    /// The rule for the largest block, 2^k_max_order pages: it holds the
    /// largest superpage a port can map at this page size, so that every
    /// reservation is one block. A superpage is at most what one entry of
    /// the level above the last page table maps, and a page table of 8-byte
    /// entries holds k_page_size / 8 of them: 2^(k_page_shift - 3) pages (2 MB
    /// with 4 KB pages, 32 MB with 16 KB pages). The order never goes below
    /// 10 (4 MB with 4 KB pages), what it was before there were superpages:
    /// a higher one would serve no reservation and would only change which
    /// larger blocks small allocations are split from (and so the measured
    /// paths).
    static constexpr unsigned k_page_table_index_bits = k_page_shift - 3; // 8-byte entries
    static constexpr unsigned k_max_order =
        k_page_table_index_bits > 10 ? k_page_table_index_bits : 10;
    /// How many disjoint ranges the allocator can hold: E820 maps give about
    /// 10, and each reserved hole in the middle of a range adds one.
    static constexpr size_t k_max_ranges = 32;

    /// An allocator that manages no memory yet: add_range() gives it some.
    constexpr PhysAllocator() = default;

    /// The order of the smallest block that holds @p bytes: the least n with
    /// 2^n pages >= @p bytes (0 for anything up to a page). It may exceed
    /// k_max_order; alloc() then refuses.
    static constexpr unsigned order_for(uint64_t bytes)
    {
        unsigned order = 0;
        while ((uint64_t(k_page_size) << order) < bytes)
            ++order;
        return order;
    }

    /// Adds usable memory [base, base+length); trims inward to page
    /// boundaries; may be called many times, in any order. Parts that overlap
    /// memory added before are ignored. Writes nothing until the allocator is
    /// built (see the class comment). The first pages of each range hold its
    /// bitmap; a range too small to hold its bitmap and one page more, or
    /// beyond k_max_ranges, is ignored (and counted in vm.phys.ranges_ignored).
    void add_range(PhysAddr base, uint64_t length);

    /// Removes [base, base+length) (kernel image, boot data): every page that
    /// it touches is never handed out, and never written. Call after
    /// add_range(); memory added later is not affected. Before the first
    /// alloc() it cuts the hole out of the ranges (a hole inside a range
    /// splits it, and the upper piece needs a bitmap page of its own). After
    /// it, it takes free pages off the free lists, O(k_max_order) per page at
    /// worst; pages that are not free (allocated, already reserved) are left
    /// as they are.
    void reserve(PhysAddr base, uint64_t length);

    /// Allocates 2^order contiguous pages, naturally aligned (address is a
    /// multiple of 2^order pages). The memory is not cleared. Fails with
    /// k_enomem when no block is free (after the reclaim hook has had its
    /// chance, unless @p may_reclaim is false), k_einval when @p order >
    /// k_max_order. Every address is a possible page, so failure is never an
    /// address.
    Result<PhysAddr> alloc(unsigned order = 0, bool may_reclaim = true);

    /// Frees a block obtained from alloc(order); coalesces with free buddies.
    /// Panics (TOLL_ASSERT) on a double free, a misaligned address, or an
    /// address the allocator does not manage: those are kernel bugs.
    void free(PhysAddr pa, unsigned order = 0);

    /// Sets @p reclaim, called when no block of the order asked for is free:
    /// it returns pages to this allocator from memory set aside elsewhere
    /// (unused pages of superpage reservations) and says how many; alloc()
    /// calls it again until a block of that order exists or it returns 0.
    /// Every order is served: a page-table page (order 0) and a level-1
    /// table with its bookkeeping page (order 1) alike. nullptr (the
    /// default) for none.
    void set_reclaim_hook(size_t (*reclaim)()) { m_reclaim = reclaim; }

    /// Sets a second hook, asked when the first gives nothing back: a cache
    /// of pages that can be dropped (the page cache's clean pages).
    void set_cache_reclaim_hook(size_t (*reclaim)()) { m_cache_reclaim = reclaim; }

    /// The number of pages now free.
    size_t free_pages() const { return m_free_pages; }

    /// The number of pages managed: added, minus bitmaps and reserved pages.
    size_t total_pages() const { return m_total_pages; }

    /// The lowest and highest (exclusive) physical address of the memory
    /// managed: every block alloc() returns lies in [lowest, highest). Both
    /// 0 when there is none.
    PhysAddr lowest() const;
    PhysAddr highest() const;

    /// Checks internal consistency (free lists, no overlaps); returns false on
    /// corruption. Walks every free block and bitmap: O(memory), for tests and
    /// ktests. Before the build it checks the noted ranges only.
    bool check() const;

  private:
    /// One range of managed memory: pages [start, end) are managed; the
    /// bitmap (at base) covers [base, end), one bit per page.
    struct Range {
        PhysAddr base;  ///< Page-aligned start, where the bitmap lives.
        PhysAddr start; ///< First managed page, just after the bitmap.
        PhysAddr end;   ///< Page-aligned end (exclusive).
    };

    /// Pages of bitmap a range [base, end) needs.
    static uint64_t bitmap_pages(PhysAddr base, PhysAddr end);
    /// Records [base, end) as a range if it is big enough and there is room.
    void note_range(PhysAddr base, PhysAddr end);
    /// Recomputes the page counts from the notes (before the build).
    void recount();
    /// Writes the bitmaps and free lists of every noted range (the first
    /// alloc() or free() does it).
    void build();
    /// Writes the bitmap of range @p r and frees all its pages.
    void build_range(Range& r);
    /// Cuts [lo, hi) out of the noted ranges (before the build).
    void cut_hole(PhysAddr lo, PhysAddr hi);

    /// The range whose managed pages contain @p pa, or nullptr.
    const Range* range_of(PhysAddr pa) const;
    /// Reads / writes the bitmap bit of page @p pa: does a free block start there?
    bool is_free_head(const Range& r, PhysAddr pa) const;
    void set_free_head(const Range& r, PhysAddr pa, bool free);
    /// Whether a free block starts at any page of [@p from, @p to) (page
    /// aligned, inside @p r): the bitmap read a word at a time.
    bool any_free_head(const Range& r, PhysAddr from, PhysAddr to) const;
    /// Makes [pa, pa + 2^order pages) a free block: header, list, bitmap.
    void push(const Range& r, PhysAddr pa, unsigned order);
    /// Takes the free block at @p pa off its list and wipes its header.
    void unlink(const Range& r, PhysAddr pa, unsigned order);
    /// The head of the free block containing page @p pa (its order in
    /// @p order), or nothing if the page is not free.
    Optional<PhysAddr> free_block_containing(const Range& r, PhysAddr pa, unsigned* order) const;
    /// Reserves the pages of [lo, hi), which lies inside range @p r.
    void reserve_in(const Range& r, PhysAddr lo, PhysAddr hi);
    /// Frees again the parts of the unlinked block at @p head outside [lo, hi).
    void carve(const Range& r, PhysAddr head, unsigned order, PhysAddr lo, PhysAddr hi);

    /// The end of a free list: the link of the last block, the head of an
    /// empty list. Private to the lists; never returned.
    static constexpr PhysAddr k_nil = ~PhysAddr(0);

    /// The free blocks of one order: a doubly linked list through their headers.
    struct FreeList {
        PhysAddr head = k_nil;
        size_t count = 0;
    };

    Range m_ranges[k_max_ranges]{};
    size_t m_range_count = 0;
    bool m_built = false;
    FreeList m_free[k_max_order + 1]{};
    size_t m_free_pages = 0;
    size_t m_total_pages = 0;
    size_t (*m_reclaim)() = nullptr;
    size_t (*m_cache_reclaim)() = nullptr;
};

/// The kernel's one physical allocator, fed by the boot code from the memory map.
PhysAllocator& phys_allocator();

} // namespace toll::vm
