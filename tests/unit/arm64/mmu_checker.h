// The two guards QEMU cannot be: a break-before-make checker fed with every
// descriptor store and TLB invalidation the arm64 pmap makes, and a
// well-formedness checker that walks a pmap's tables (block alignment,
// contiguous runs). QEMU ignores the contiguous bit and its "max" CPU
// reports BBM level 2, so a mistake in either would pass every boot test.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace toll::test {

/// Descriptor facts from the Arm ARM (DDI 0487, D8.3), spelled out here
/// rather than taken from src/arch/arm64/mmu.h, so that a wrong constant
/// there shows up as a failing check.
struct Arm64Bits {
    static constexpr uint64_t valid = 1u << 0;
    static constexpr uint64_t type_mask = 3;  ///< bits [1:0]
    static constexpr uint64_t type_block = 1; ///< levels 1-2
    static constexpr uint64_t type_table_or_page = 3;
    static constexpr uint64_t contiguous = 1ull << 52; ///< D8.6.1
    static constexpr uint64_t af = 1u << 10;
};

/// The translation geometry of one granule (D8.2): 4 KB or 16 KB.
struct Arm64Geometry {
    unsigned page_shift;
    uint64_t page() const { return uint64_t(1) << page_shift; }
    unsigned entries() const { return 1u << (page_shift - 3); }
    uint64_t l2_block() const { return page() * entries(); }
    uint64_t l1_span() const { return l2_block() * entries(); }
    /// D8.6.1: a level-3 contiguous set is 16 entries (4 KB) or 128 (16 KB).
    unsigned run_pages() const { return page_shift == 12 ? 16 : 128; }
    uint64_t run_size() const { return page() * run_pages(); }
    uint64_t address_mask() const { return 0x0000FFFFFFFFFFFFull & ~(page() - 1); }
};

/// Watches the user level-1 tables of pmaps and every store into them or
/// the level-2 and level-3 tables below them.
///
/// Break-before-make (D8.14.1): a live entry may not go from one valid
/// descriptor to another with a different output address, size (table,
/// block, page) or contiguous bit; it must first be made invalid, the TLB
/// invalidated for every address the old entry could translate, and only
/// then the new entry stored. The checker records what each invalidating
/// store leaves "pending" in the TLB: every page of a page or run entry, the
/// whole of a block (one TLBI anywhere in it removes the entry), every
/// mapped page below a table entry. A TLBI clears what it covers; a TTBR
/// load or a whole-TLB invalidation clears everything. A valid store over
/// an address still pending is a violation.
class BbmChecker {
  public:
    explicit BbmChecker(Arm64Geometry g) : m_g(g) {}

    /// Starts watching the level-1 table at @p l1 (a host pointer)
    /// covering user addresses [0, @p user_limit). @p live says whether its
    /// entries can be in the TLB now (the pmap is the active one).
    void watch(uint64_t* l1, uint64_t user_limit, bool live);
    void forget(uint64_t* l1);
    /// The pmap whose level-1 table is @p l1 became the active one (or not).
    void set_live(uint64_t* l1, bool live);

    /// Called for every store of @p value into @p slot, before it happens.
    void on_store(uint64_t* slot, uint64_t value);
    /// A TLBI of one page (it covers the page's translation and walk).
    void on_tlbi(uint64_t va);
    /// A TLBI of every page of [va, va + length).
    void on_tlbi_range(uint64_t va, uint64_t length);
    /// A whole-TLB invalidation or TTBR load.
    void on_tlbi_all();

    const std::vector<std::string>& violations() const { return m_violations; }
    void clear_violations() { m_violations.clear(); }

  private:
    struct Watched {
        uint64_t* l1;
        uint64_t user_limit;
        bool live;
    };
    struct Pending {
        uint64_t va;
        uint64_t length;
        bool any_tlbi_in_range; ///< a block: one TLBI inside clears it
    };
    /// Which watched table holds @p slot, at which level and address.
    bool locate(uint64_t* slot, const Watched** w, unsigned* level, uint64_t* va) const;
    void leave_pending(const Watched& w, unsigned level, uint64_t va, uint64_t old);
    bool pending_overlaps(uint64_t va, uint64_t length) const;

    Arm64Geometry m_g;
    std::vector<Watched> m_watched;
    std::vector<Pending> m_pending;
    std::vector<std::string> m_violations;
};

/// Walks the user tables below level-1 table @p l1 and returns what is wrong with its
/// entries (nothing when empty): blocks not aligned or marked contiguous;
/// contiguous runs not complete, not aligned, not physically contiguous, or
/// with differing attributes (AF excepted, D8.6.1).
std::vector<std::string> check_well_formed(const uint64_t* l2, uint64_t user_limit,
                                           Arm64Geometry g);

} // namespace toll::test
