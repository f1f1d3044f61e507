// Host tests of the checkers themselves (mmu_checker.h): a break-before-make
// violation, a malformed run and a malformed block are each caught, and a
// correct sequence passes, so a pmap test that passes means something.
#include "arch/arm64/maintenance.h"
#include "pmap_world.h"

using namespace pmap_world;

namespace {

/// A world with one live pmap and one page entered at k_va: its entry.
uint64_t* entered_pte(World& w, Pmap*& pmap)
{
    pmap = w.create();
    REQUIRE(pmap_enter(pmap, k_va, k_data, k_rw) == toll::k_ok);
    return &host_words(raw_l2e(pmap, k_va) & g.address_mask())[(k_va % k_block) / k_page];
}

} // namespace

TEST_CASE("arm64 checkers: break-before-make violations are caught", "[arm64][checker]")
{
    World w;
    Pmap* pmap;
    uint64_t* pte = entered_pte(w, pmap);
    uint64_t old = *pte;
    SECTION("a valid entry rewritten to another frame in place")
    {
        toll::arm64::store_entry(pte, (old & ~g.address_mask()) | (k_data + k_page));
    }
    SECTION("a valid entry made contiguous in place")
    {
        toll::arm64::store_entry(pte, old | Arm64Bits::contiguous);
    }
    SECTION("broken, but made again before the TLB was invalidated")
    {
        toll::arm64::store_entry(pte, 0);
        toll::arm64::store_entry(pte, (old & ~g.address_mask()) | (k_data + k_page));
    }
    SECTION("a table replaced by a block with a TLBI of only one of its pages")
    {
        uint64_t* l2e = l2e_of(pmap, k_va);
        REQUIRE(pmap_enter(pmap, k_va + k_page, k_data + k_page, k_rw) == toll::k_ok);
        toll::arm64::store_entry(l2e, 0);
        toll::arm64::invalidate_page(k_va);
        toll::arm64::store_entry(l2e, k_data | Arm64Bits::type_block | Arm64Bits::af);
    }
    CHECK(g_bbm.violations().size() == 1);
    g_bbm.clear_violations();
}

TEST_CASE("arm64 checkers: a correct break-before-make passes", "[arm64][checker]")
{
    World w;
    Pmap* pmap;
    uint64_t* pte = entered_pte(w, pmap);
    uint64_t old = *pte;
    toll::arm64::store_entry(pte, 0);
    toll::arm64::invalidate_page(k_va);
    toll::arm64::store_entry(pte, (old & ~g.address_mask()) | (k_data + k_page));
    CHECK(g_bbm.violations().empty());
}

TEST_CASE("arm64 checkers: malformed runs and blocks are caught", "[arm64][checker]")
{
    World w;
    Pmap* pmap = w.create(false);
    REQUIRE(pmap_enter(pmap, k_va, k_data, k_rw, 1) == toll::k_ok);
    uint64_t* run = &host_words(raw_l2e(pmap, k_va) & g.address_mask())[(k_va % k_block) / k_page];
    uint64_t* l2e = l2e_of(pmap, k_va + k_block);
    SECTION("one entry lacks the bit")
    {
        run[k_run_pages - 1] &= ~Arm64Bits::contiguous;
    }
    SECTION("one entry maps the wrong frame")
    {
        run[3] += k_page;
    }
    SECTION("one entry has other rights")
    {
        run[2] |= 1u << 7; // AP[2]: read-only
    }
    SECTION("the run's frames are not aligned")
    {
        for (unsigned i = 0; i < k_run_pages; ++i)
            run[i] += k_page;
    }
    SECTION("a block maps an unaligned frame")
    {
        *l2e = (k_data + k_page) | Arm64Bits::type_block | Arm64Bits::af;
    }
    auto wrong = toll::test::check_well_formed(l1_of(pmap), k_user_limit, g);
    CHECK_FALSE(wrong.empty());
    // Put it right, so the World's own final check passes.
    std::memset(run, 0, k_run_pages * sizeof(uint64_t));
    *l2e = 0;
}
