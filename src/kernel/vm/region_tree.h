// The regions of an address space, kept twice over: a sorted list for simple
// walks and a balanced (AVL) tree for lookups and the free-hole search, so no
// operation on a space with many mappings walks all of them.
#pragma once
#include "kernel/kern/result.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::vm {

struct VmObject;

/// A contiguous, page-aligned range of user addresses with the same rights.
/// Regions of one space never overlap.
struct Region {
    uintptr_t start;
    uintptr_t end; ///< exclusive
    unsigned prot;
    bool shared = false;        ///< MAP_SHARED: fork maps the same pages, never copy-on-write
    VmObject* object = nullptr; ///< a file mapping's pages (vmobject.h); nullptr: anonymous
    size_t object_page = 0;     ///< the index in object of the page at start
    Region* next = nullptr;     ///< the next region up (sorted list)
    Region* prev = nullptr;     ///< the next region down

    // Tree links and the values each node keeps about its subtree.
    Region* left = nullptr;
    Region* right = nullptr;
    Region* parent = nullptr;
    int height = 1;
    uintptr_t max_gap = 0; ///< largest gap below a region of this subtree (see gap_below)
};

/// The set of regions of one address space.
///
/// Every region is on a sorted doubly linked list (first, next, prev) and in
/// an AVL tree ordered by start address. Each tree node also records the
/// largest *gap below* any region of its subtree, where the gap below a
/// region is the free space between it and the region before it (or address
/// 0). With that, the highest hole of a given size below an address is found
/// by descending the tree, skipping every subtree whose largest gap is too
/// small: O(log n) instead of a walk over every region.
///
/// Cost: find, insert, erase and find_hole visit O(log n) nodes; each visit
/// is counted in the counter vm.regions.steps, so a test can check the bound
/// on a deterministic count. Exercise for the student: why must erase refresh
/// the gap of the region *after* the one it removes?
class RegionTree {
  public:
    /// The lowest region, or nullptr when the set is empty.
    Region* first() const { return m_first; }

    /// How many regions the set holds.
    size_t size() const { return m_count; }

    /// The region containing @p address, or nullptr.
    Region* find(uintptr_t address) const;

    /// The lowest region that ends above @p address (it may contain it), or nullptr.
    Region* first_ending_after(uintptr_t address) const;

    /// Adds @p region, which must not overlap any region of the set.
    void insert(Region* region);

    /// Takes @p region out of the set (the caller frees it).
    void erase(Region* region);

    /// Records that @p region's end moved (it must still overlap nothing).
    void end_changed(Region* region);

    /// The highest start s, a multiple of @p align (a power of two), with
    /// s >= @p floor and s + @p length <= @p ceiling such that [s, s + length)
    /// overlaps no region; nothing if there is none (0 is a start like any
    /// other when @p floor is 0). With an alignment it looks for a gap of
    /// length + align - 1, which always holds an aligned start: a tighter gap
    /// that happens to be aligned may be missed, the price of O(log n).
    Optional<uintptr_t> find_hole(size_t length, uintptr_t floor, uintptr_t ceiling,
                                  uintptr_t align = 1) const;

    /// Checks the tree: order, links, heights, balance and gaps. O(n), for tests.
    bool check() const;

  private:
    void replace_child(Region* parent, Region* old_child, Region* new_child);
    Region* rotate_left(Region* x);
    Region* rotate_right(Region* x);
    /// Recomputes heights and gaps from @p node up to the root, rotating
    /// where a node is out of balance.
    void rebalance_from(Region* node);
    Region* last_with_gap(Region* node, uintptr_t limit, uintptr_t length) const;

    Region* m_root = nullptr;
    Region* m_first = nullptr;
    size_t m_count = 0;
};

} // namespace toll::vm
