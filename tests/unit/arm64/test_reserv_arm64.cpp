// Host tests of superpage reservations (src/kernel/vm/reserv.cpp) over the
// buddy allocator and the arm64 pmap: a filled region promotes to runs and
// a block, a broken reservation gives its unused pages back, and running
// out of pages breaks a reservation rather than failing.
#include "kernel/vm/reserv.h"
#include "kernel/vm/vmspace.h"
#include "pmap_world.h"

using namespace pmap_world;
using toll::Result;
using toll::test::allocated;

namespace {

/// Simulated memory wholly given to the allocator, reservations on, and one
/// address space whose pmap is live.
struct ReservWorld {
    static constexpr PhysAddr k_mem_base = 0x40000000;
    const size_t size;
    SimulatedMemory mem{k_mem_base, size};
    VmSpace space;
    size_t free_at_start;

    /// 8 MB of memory at 4 KB, 16 MB at 16 KB unless @p bytes says otherwise.
    explicit ReservWorld(size_t bytes = 8 * (size_t(2) << 20) / (k_page == 4096 ? 2 : 1))
        : size(bytes)
    {
        phys_allocator() = PhysAllocator();
        phys_allocator().add_range(k_mem_base, size);
        PhysAddr pa = allocated(phys_allocator().alloc(0)); // build it now
        phys_allocator().free(pa, 0);
        reserv_reset_for_tests(true);
        space.pmap = pmap_create();
        REQUIRE(space.pmap != nullptr);
        g_bbm = BbmChecker{g};
        g_bbm.watch(l1_of(space.pmap), k_user_limit, false);
        pmap_activate(space.pmap);
        g_bbm.set_live(l1_of(space.pmap), true);
        free_at_start = phys_allocator().free_pages();
    }

    ~ReservWorld()
    {
        pmap_activate(nullptr);
        reserv_reset_for_tests(false);
        phys_allocator() = PhysAllocator();
    }

    /// What vmspace_fault does for a page of region [start, end): a page
    /// from the reservation, mapped, then reported.
    PhysAddr fault(uintptr_t va, uintptr_t start, uintptr_t end, unsigned prot = k_rw)
    {
        toll::Optional<PhysAddr> got = reserv_alloc_page(&space, va, start, end);
        REQUIRE(got.has_value());
        PhysAddr pa = got.value();
        REQUIRE(pmap_enter(space.pmap, va, pa, prot) == toll::k_ok);
        reserv_mapped(&space, va, pa);
        return pa;
    }

    void check()
    {
        for (const std::string& v : g_bbm.violations())
            FAIL_CHECK("break-before-make: " << v);
        g_bbm.clear_violations();
        for (const std::string& w :
             toll::test::check_well_formed(l1_of(space.pmap), k_user_limit, g))
            FAIL_CHECK("malformed: " << w);
    }

    /// Unmaps [start, end), handing freed pages to the reservation layer or
    /// the allocator, as vmspace does.
    void unmap(uintptr_t start, uintptr_t end)
    {
        auto give_back = [](void*, uintptr_t, PhysAddr pa) {
            if (!reserv_free_page(pa))
                phys_allocator().free(pa, 0);
        };
        REQUIRE(pmap_remove(space.pmap, start, end, give_back, nullptr) == toll::k_ok);
    }
};

/// The size of the largest reservation in the default world: a 2 MB block at
/// 4 KB (where it is an L2 block), a 2 MB contiguous run at 16 KB (16 MB of
/// memory is too little to set 32 MB aside; see the 32 MB test below).
const uint64_t k_reservation = uint64_t(2) << 20;

} // namespace

TEST_CASE("reservations: filling an aligned region promotes runs, then the block",
          "[arm64][reserv]")
{
    ReservWorld w;
    Counters c;
    const uintptr_t start = 4 * k_reservation, end = start + k_reservation;
    PhysAddr first = w.fault(start, start, end);
    CHECK(first % k_reservation == 0); // naturally aligned, like the stretch
    for (uintptr_t va = start + k_page; va < end; va += k_page)
        CHECK(w.fault(va, start, end) == first + (va - start));
    w.check();
    CHECK(c.delta("vm.reserv.fullpop") == 1);
    if (k_page == 4096) {
        CHECK(c.delta("vm.pmap.l3c.promotions") == k_reservation / k_run);
        CHECK(c.delta("vm.pmap.l2.promotions") == 1);
    } else {
        CHECK(c.delta("vm.pmap.l3c.promotions") == 1);
        CHECK(c.delta("vm.pmap.l2.promotions") == 0);
    }
    CHECK(pmap_tlb_entries(w.space.pmap, start, end) == 1);
    // Unmapping it all gives the block back whole.
    w.unmap(start, end);
    CHECK(c.delta("vm.reserv.freed") == 1);
    CHECK(c.delta("vm.reserv.fullpop") == 0);
    // Only page tables stay: a level-2 table (two pages with its bookkeeping)
    // and, at 16 KB, the level-3 table (at 4 KB the block's kept table went
    // with the block).
    CHECK(w.free_at_start - phys_allocator().free_pages() == (k_page == 4096 ? 2u : 3u));
    CHECK(reserv_unused_pages() == 0);
}

TEST_CASE("reservations: a broken reservation returns its unused pages, which coalesce",
          "[arm64][reserv]")
{
    ReservWorld w;
    Counters c;
    const uintptr_t start = 4 * k_reservation, end = start + k_reservation;
    size_t before = phys_allocator().free_pages();
    PhysAddr a = w.fault(start, start, end);
    w.fault(start + 5 * k_page, start, end);
    w.fault(end - k_page, start, end);
    size_t tables = before - k_reservation / k_page - phys_allocator().free_pages();
    CHECK(reserv_unused_pages() == k_reservation / k_page - 3);
    // Memory pressure: the reservation is broken, its unused pages freed.
    CHECK(reserv_reclaim() == k_reservation / k_page - 3);
    CHECK(c.delta("vm.reserv.broken") == 1);
    CHECK(c.delta("vm.reserv.reclaimed") == 1);
    CHECK(phys_allocator().free_pages() == before - 3 - tables);
    CHECK(phys_allocator().check());
    // The three pages in use stay mapped; freed later, they go to the
    // allocator, and the block is whole again.
    PhysAddr pa;
    REQUIRE(pmap_extract(w.space.pmap, start, &pa, nullptr));
    CHECK(pa == a);
    w.unmap(start, end);
    CHECK(phys_allocator().free_pages() == before - tables);
    CHECK(phys_allocator().check());
    unsigned order = unsigned(__builtin_ctzll(k_reservation / k_page));
    PhysAddr again = allocated(phys_allocator().alloc(order));
    CHECK(again == a); // coalesced back into the same aligned block
    w.check();
}

TEST_CASE("reservations: running out of pages breaks a reservation instead of failing",
          "[arm64][reserv]")
{
    ReservWorld w;
    const uintptr_t start = 4 * k_reservation, end = start + k_reservation;
    w.fault(start, start, end);
    std::vector<PhysAddr> hog;
    for (Result<PhysAddr> p = phys_allocator().alloc(0); p; p = phys_allocator().alloc(0))
        hog.push_back(p.value());
    // Every page of the reservation but the one in use was handed out.
    CHECK(hog.size() >= k_reservation / k_page - 1);
    CHECK(counter("vm.reserv.reclaimed") >= 1);
    CHECK(reserv_unused_pages() == 0);
    for (PhysAddr p : hog)
        phys_allocator().free(p, 0);
}

#if TOLL_PAGE_SHIFT == 14
TEST_CASE("reservations: at 16 KB a 32 MB reservation fills into an L2 block and coalesces back",
          "[arm64][reserv]")
{
    // 96 MB: a 32 MB block (order 11, the allocator's largest) can be set
    // aside while an eighth of memory stays free.
    ReservWorld w(size_t(96) << 20);
    Counters c;
    const uint64_t l2 = uint64_t(32) << 20;
    const uintptr_t start = 2 * l2, end = start + l2;
    PhysAddr first = w.fault(start, start, end);
    CHECK(first % l2 == 0);
    for (uintptr_t va = start + k_page; va < end; va += k_page)
        REQUIRE(w.fault(va, start, end) == first + (va - start));
    w.check();
    CHECK(c.delta("vm.reserv.fullpop") == 1);
    CHECK(c.delta("vm.pmap.l3c.promotions") == l2 / k_run);
    CHECK(c.delta("vm.pmap.l2.promotions") == 1);
    CHECK(pmap_tlb_entries(w.space.pmap, start, end) == 1);
    w.unmap(start, end);
    CHECK(c.delta("vm.reserv.freed") == 1);

    // Broken with three pages in use, then those freed: the buddies
    // coalesce all the way up to the same 32 MB block.
    PhysAddr a = w.fault(start, start, end);
    CHECK(a == first);
    w.fault(start + 7 * k_page, start, end);
    w.fault(end - k_page, start, end);
    CHECK(reserv_reclaim() == l2 / k_page - 3);
    CHECK(phys_allocator().check());
    w.unmap(start, end);
    CHECK(phys_allocator().check());
    CHECK(allocated(phys_allocator().alloc(PhysAllocator::k_max_order)) == a);
    w.check();
}
#endif

TEST_CASE("reservations: none for a region too small, or when switched off", "[arm64][reserv]")
{
    ReservWorld w;
    const uintptr_t start = 4 * k_reservation;
    // A region one page short of a run has no aligned stretch to reserve.
    CHECK_FALSE(reserv_alloc_page(&w.space, start, start, start + k_run - k_page).has_value());
    // A region of one run gets a run-sized reservation.
    toll::Optional<PhysAddr> got =
        reserv_alloc_page(&w.space, start + k_run, start + k_run, start + 2 * k_run);
    REQUIRE(got.has_value());
    PhysAddr pa = got.value();
    CHECK(pa % k_run == 0);
    CHECK(reserv_alignment(k_reservation) == k_reservation);
    CHECK(reserv_alignment(k_run) == k_run);
    CHECK(reserv_alignment(k_run - k_page) == k_page);
    reserv_reset_for_tests(false);
    phys_allocator().free(pa, 0);
    CHECK_FALSE(reserv_alloc_page(&w.space, start, start, start + k_reservation).has_value());
    CHECK(reserv_alignment(k_reservation) == k_page);
}
