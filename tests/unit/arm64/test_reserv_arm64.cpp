// Host tests of superpage reservations (src/kernel/vm/reserv.cpp) under the
// real fault path (vmspace_fault), over the buddy allocator and the arm64
// pmap: a filled region promotes straight to the largest size, a broken
// reservation gives its unused pages back, and running out of pages (of any
// order) breaks a reservation rather than failing.
#include "vm_world.h"

using namespace pmap_world;
using toll::Result;
using toll::test::allocated;

namespace {

/// The reservation tests' world: one live address space; fault() is a user
/// write through the real fault path (vmspace_fault), unmap() is munmap.
struct ReservWorld : VmWorld {
    using VmWorld::VmWorld;

    /// A user write to page @p va of region [start, end), which is mapped
    /// read-write first if it is not yet: returns the physical page that
    /// vmspace_fault gave it.
    PhysAddr fault(uintptr_t va, uintptr_t start, uintptr_t end)
    {
        Region* r = vmspace_find(space, va);
        if (!r) {
            map(start, end - start);
            r = vmspace_find(space, va);
        }
        REQUIRE((r->start == start && r->end == end));
        REQUIRE(write(space, va, pattern(va)) == toll::k_ok);
        PhysAddr pa = 0;
        unsigned prot = 0;
        REQUIRE(lookup(space, va, &pa, &prot));
        return pa;
    }

    /// munmap of [start, end).
    void unmap(uintptr_t start, uintptr_t end)
    {
        REQUIRE(vmspace_unmap(space, start, end - start) == toll::k_ok);
    }
};

/// The size of the largest reservation in the default world: a 2 MB block at
/// 4 KB (where it is an L2 block), a 2 MB contiguous run at 16 KB (16 MB of
/// memory is too little to set 32 MB aside; see the 32 MB test below).
const uint64_t k_reservation = uint64_t(2) << 20;

} // namespace

TEST_CASE("reservations: filling an aligned region promotes runs, and its last fault the block",
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
    CHECK(counter("vm.reserv.fullpop") == 1);
    if (k_page == 4096) {
        // Every run but the last fills before the block does; the fault
        // that fills the last run fills the block, and makes it at once.
        CHECK(c.delta("vm.pmap.l3c.promotions") == k_reservation / k_run - 1);
        CHECK(c.delta("vm.pmap.l2.promotions") == 1);
    } else {
        CHECK(c.delta("vm.pmap.l3c.promotions") == 1);
        CHECK(c.delta("vm.pmap.l2.promotions") == 0);
    }
    CHECK(pmap_tlb_entries(w.space->pmap, start, end) == 1);
    // Unmapping it all gives the block back whole.
    w.unmap(start, end);
    CHECK(c.delta("vm.reserv.freed") == 1);
    CHECK(counter("vm.reserv.fullpop") == 0);
    CHECK(reserv_unused_pages() == 0);
    // The address space gone, every page is back.
    w.destroy(w.space);
    CHECK(w.available() == w.available_at_start);
}

TEST_CASE("reservations: a broken reservation returns its unused pages, which coalesce",
          "[arm64][reserv]")
{
    ReservWorld w;
    Counters c;
    const uintptr_t start = 4 * k_reservation, end = start + k_reservation;
    w.map(start, end - start);
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
    PhysAddr pa = 0;
    REQUIRE(extract_into(pmap_extract(w.space->pmap, start), &pa, nullptr));
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
    CHECK(counter("vm.reserv.fullpop") == 1);
    CHECK(c.delta("vm.pmap.l3c.promotions") == l2 / k_run - 1);
    CHECK(c.delta("vm.pmap.l2.promotions") == 1);
    CHECK(pmap_tlb_entries(w.space->pmap, start, end) == 1);
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
    CHECK_FALSE(reserv_alloc_page(w.space, start, start, start + k_run - k_page).has_value());
    // A region of one run gets a run-sized reservation.
    toll::Optional<ReservedPage> got =
        reserv_alloc_page(w.space, start + k_run, start + k_run, start + 2 * k_run);
    REQUIRE(got.has_value());
    PhysAddr pa = got.value().pa;
    CHECK(pa % k_run == 0);
    CHECK(reserv_alignment(k_reservation) == k_reservation);
    CHECK(reserv_alignment(k_run) == k_run);
    CHECK(reserv_alignment(k_run - k_page) == k_page);
    reserv_reset_for_tests(false);
    phys_allocator().free(pa, 0);
    CHECK_FALSE(reserv_alloc_page(w.space, start, start, start + k_reservation).has_value());
    CHECK(reserv_alignment(k_reservation) == k_page);
}
