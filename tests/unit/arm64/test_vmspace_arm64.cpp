// Host tests of address spaces over superpages: fork, munmap, MAP_FIXED and
// mprotect inside filled runs and blocks, through the real vmspace_fault,
// vmspace_fork, vmspace_unmap, vmspace_map and vmspace_protect. Each checks
// the data every page holds, the counters, and that the free pages (plus
// the pages reservations hold unused) come back to where they started.
#include "vm_world.h"
#include <vector>

using namespace pmap_world;
using toll::k_efault;
using toll::k_ok;

namespace {

/// The superpage sizes to test at this granule: a contiguous run and a
/// level-2 block.
std::vector<uint64_t> stretch_sizes()
{
    return {k_run, k_block};
}

/// Memory enough for a reservation of @p stretch while an eighth stays free.
size_t world_bytes(uint64_t stretch)
{
    size_t fallback = 8 * (size_t(2) << 20) / (k_page == 4096 ? 2 : 1);
    return 3 * stretch > fallback ? 3 * stretch : fallback;
}

/// Where the tests' region starts: aligned for any superpage.
const uintptr_t k_start = 4 * k_block;

/// The number of pages in @p bytes.
uint64_t pages(uint64_t bytes)
{
    return bytes / k_page;
}

/// Forks @p w's space, lets the child exit, and rewrites [start, end) in the
/// parent: with no child left, every write takes its page back, none copies,
/// and the memory fork took comes back.
void fork_exit_rewrite(VmWorld& w, uintptr_t start, uintptr_t end, uint64_t mapped_pages)
{
    size_t before = w.available();
    Counters c;
    VmSpace* child = w.fork(w.space);
    // Every mapped page is shared once: a superpage shared whole is not
    // shared again page by page.
    CHECK(c.delta("vm.fork.pages_shared") == mapped_pages);
    CHECK(c.delta("vm.fork.pages_copied") == 0);
    CHECK(VmWorld::holds(child, start, end, 0));
    w.destroy(child);
    CHECK(w.available() == before);
    VmWorld::fill(w.space, start, end, 7);
    CHECK(c.delta("vm.cow.copies") == 0);
    CHECK(VmWorld::holds(w.space, start, end, 7));
    CHECK(w.available() == before);
    w.check();
}

/// The end of every test: the address space goes, and all its memory with it.
void destroy_all(VmWorld& w)
{
    w.check();
    w.destroy(w.space);
    CHECK(reserv_unused_pages() == 0);
    CHECK(w.available() == w.available_at_start);
}

} // namespace

TEST_CASE("vmspace: fork shares a filled superpage whole, and it comes back after the child",
          "[arm64][vmspace]")
{
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size;
        w.map(start, size);
        VmWorld::fill(w.space, start, end);
        REQUIRE(pmap_tlb_entries(w.space->pmap, start, end) == 1);
        size_t before = w.available();
        Counters c;
        VmSpace* child = w.fork(w.space);
        CHECK(c.delta("vm.fork.pages_shared") == pages(size));
        CHECK(pmap_tlb_entries(child->pmap, start, end) == 1); // one mapping in the child too
        CHECK(VmWorld::holds(child, start, end));
        // The child's write copies one page; the parent's stays as it was.
        REQUIRE(VmWorld::write(child, start + k_page, 99) == k_ok);
        CHECK(c.delta("vm.cow.copies") == 1);
        CHECK(VmWorld::read(w.space, start + k_page) == VmWorld::pattern(start + k_page));
        w.destroy(child);
        CHECK(w.available() == before);
        // Alone again: every write reuses its page, and the last one makes
        // the stretch uniform, so it is a superpage again.
        Counters r;
        VmWorld::fill(w.space, start, end, 1);
        CHECK(r.delta("vm.cow.copies") == 0);
        CHECK(r.delta("vm.cow.reuses") == pages(size));
        CHECK(pmap_tlb_entries(w.space->pmap, start, end) == 1);
        CHECK(VmWorld::holds(w.space, start, end, 1));
        CHECK(w.available() == before);
        destroy_all(w);
    }
}

TEST_CASE("vmspace: a superpage copied page by page after fork is a superpage again",
          "[arm64][vmspace]")
{
    // The parent rewrites every page while the child still shares them:
    // every write copies, each copy comes from one new reservation, and
    // the last one makes the stretch one mapping again. The child keeps
    // the old data; once it exits, the old pages come back.
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size;
        w.map(start, size);
        VmWorld::fill(w.space, start, end);
        REQUIRE(pmap_tlb_entries(w.space->pmap, start, end) == 1);
        size_t before = w.available();
        VmSpace* child = w.fork(w.space);
        Counters c;
        VmWorld::fill(w.space, start, end, 3);
        CHECK(c.delta("vm.cow.copies") == pages(size));
        CHECK(c.delta("vm.cow.reuses") == 0);
        CHECK(c.delta("vm.reserv.broken") == 1); // the old one: its pages are the child's
        CHECK(pmap_tlb_entries(w.space->pmap, start, end) == 1);
        CHECK(VmWorld::holds(w.space, start, end, 3));
        CHECK(VmWorld::holds(child, start, end));
        w.check();
        w.check(child);
        w.destroy(child);
        // The parent's copies replace its old pages, which go with the child.
        CHECK(w.available() == before);
        destroy_all(w);
    }
}

TEST_CASE("vmspace: a reservation split by mprotect before it fills never spans two regions",
          "[arm64][vmspace]")
{
    // The straddle case: touch the first page (the reservation is made),
    // mprotect the second half read-only and back, fill, fork, let the
    // child exit, rewrite. Fork must share each page once, and the
    // parent's writes must copy nothing.
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size, half = start + size / 2;
        w.map(start, size);
        REQUIRE(VmWorld::write(w.space, start, VmWorld::pattern(start)) == k_ok);
        REQUIRE(vmspace_protect(w.space, half, end - half, k_prot_read) == k_ok);
        REQUIRE(vmspace_protect(w.space, half, end - half, k_rw) == k_ok);
        VmWorld::fill(w.space, start, end);
        CHECK(pmap_tlb_entries(w.space->pmap, start, end) >= 2); // nothing across the split
        fork_exit_rewrite(w, start, end, pages(size));
        destroy_all(w);
    }
}

TEST_CASE("vmspace: MAP_FIXED inside a filled superpage takes no page from its reservation",
          "[arm64][vmspace]")
{
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size, mid = start + size / 2;
        w.map(start, size);
        VmWorld::fill(w.space, start, end);
        Counters c;
        w.map(mid, k_page);                // MAP_FIXED over one page
        CHECK(reserv_unused_pages() == 0); // the old reservation is gone
        CHECK(VmWorld::read(w.space, mid) == 0);
        REQUIRE(VmWorld::write(w.space, mid, VmWorld::pattern(mid)) == k_ok);
        // Its page came from no reservation, and no superpage re-formed
        // across the three regions.
        CHECK(reserv_unused_pages() == 0);
        CHECK(c.delta("vm.pmap.l2.promotions") == 0);
        CHECK(c.delta("vm.pmap.l3c.promotions") == 0);
        CHECK(VmWorld::holds(w.space, start, end));
        CHECK(pmap_tlb_entries(w.space->pmap, start, end) >= 3); // three regions
        fork_exit_rewrite(w, start, end, pages(size));
        destroy_all(w);
    }
}

TEST_CASE("vmspace: munmap inside a superpage frees its pages and its reservation's",
          "[arm64][vmspace]")
{
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size, mid = start + size / 2;
        // A reservation partly used: unmapping its pages gives back the
        // unused ones too, at once.
        size_t before = w.available();
        w.map(start, size);
        VmWorld::fill(w.space, start, start + 3 * k_page);
        CHECK(reserv_unused_pages() == pages(size) - 3);
        REQUIRE(vmspace_unmap(w.space, start, 2 * k_page) == k_ok);
        CHECK(reserv_unused_pages() == 0);
        REQUIRE(vmspace_unmap(w.space, start, size) == k_ok);
        // Only the page tables the faults made are left.
        size_t tables = before - w.available();
        CHECK(tables <= 3);

        // A filled superpage loses one page: the rest keep their data.
        w.map(start, size);
        VmWorld::fill(w.space, start, end);
        REQUIRE(pmap_tlb_entries(w.space->pmap, start, end) == 1);
        Counters c;
        size_t filled = w.available();
        REQUIRE(vmspace_unmap(w.space, mid, k_page) == k_ok);
        CHECK(w.available() == filled + 1);
        CHECK(vmspace_fault(w.space, mid, false) == k_efault);
        CHECK(VmWorld::holds(w.space, start, mid));
        CHECK(VmWorld::holds(w.space, mid + k_page, end));
        // Mapped again, the hole is zero, and from elsewhere.
        w.map(mid, k_page);
        CHECK(VmWorld::read(w.space, mid) == 0);
        REQUIRE(VmWorld::write(w.space, mid, VmWorld::pattern(mid)) == k_ok);
        fork_exit_rewrite(w, start, end, pages(size));
        destroy_all(w);
    }
}

TEST_CASE("vmspace: mprotect inside a filled superpage splits it, and only there",
          "[arm64][vmspace]")
{
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size;
        // A run in the middle of a block; a page in the middle of a run.
        const uint64_t piece = size == k_block ? k_run : k_page;
        const uintptr_t mid = start + size / 2;
        w.map(start, size);
        VmWorld::fill(w.space, start, end);
        Counters c;
        REQUIRE(vmspace_protect(w.space, mid, piece, k_prot_read) == k_ok);
        CHECK(c.delta(size == k_block ? "vm.pmap.l2.demotions" : "vm.pmap.l3c.demotions") == 1);
        CHECK(VmWorld::write(w.space, mid, 1) == k_efault);
        CHECK(VmWorld::holds(w.space, start, end));
        REQUIRE(VmWorld::write(w.space, mid - k_page, VmWorld::pattern(mid - k_page)) == k_ok);
        REQUIRE(vmspace_protect(w.space, mid, piece, k_rw) == k_ok);
        REQUIRE(VmWorld::write(w.space, mid, VmWorld::pattern(mid)) == k_ok);
        CHECK(VmWorld::holds(w.space, start, end));
        fork_exit_rewrite(w, start, end, pages(size));
        destroy_all(w);
    }
}

TEST_CASE("vmspace: mprotect of a whole superpage to none and back makes it a superpage again",
          "[arm64][vmspace]")
{
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size;
        w.map(start, size);
        VmWorld::fill(w.space, start, end);
        REQUIRE(vmspace_protect(w.space, start, size, k_prot_none) == k_ok);
        CHECK(vmspace_fault(w.space, start, false) == k_efault);
        Counters c;
        REQUIRE(vmspace_protect(w.space, start, size, k_rw) == k_ok);
        CHECK(c.delta(size == k_block ? "vm.pmap.l2.promotions" : "vm.pmap.l3c.promotions") == 1);
        CHECK(pmap_tlb_entries(w.space->pmap, start, end) == 1);
        CHECK(VmWorld::holds(w.space, start, end));
        destroy_all(w);
    }
}

TEST_CASE("vmspace: mprotect(+W) after fork keeps a shared superpage whole and read-only",
          "[arm64][vmspace]")
{
    for (uint64_t size : stretch_sizes()) {
        INFO("stretch " << size);
        VmWorld w(world_bytes(size));
        const uintptr_t start = k_start, end = start + size;
        w.map(start, size);
        VmWorld::fill(w.space, start, end);
        VmSpace* child = w.fork(w.space);
        Counters c;
        uint64_t stores = g_log.stores;
        REQUIRE(vmspace_protect(w.space, start, size, k_rw) == k_ok);
        CHECK(c.delta("vm.pmap.l2.demotions") == 0);
        CHECK(c.delta("vm.pmap.l3c.demotions") == 0);
        CHECK(g_log.stores == stores); // nothing to change: nothing written
        CHECK(pmap_tlb_entries(w.space->pmap, start, end) == 1);
        unsigned prot = 0;
        PhysAddr pa = 0;
        REQUIRE(extract_into(pmap_extract(w.space->pmap, start), &pa, &prot));
        CHECK(prot == k_prot_read); // still shared: still read-only
        REQUIRE(VmWorld::write(w.space, start, 5) == k_ok);
        CHECK(c.delta("vm.cow.copies") == 1);
        CHECK(VmWorld::read(child, start) == VmWorld::pattern(start));
        w.destroy(child);
        destroy_all(w);
    }
}

TEST_CASE("vmspace: reclaim serves a page-table allocation of any order", "[arm64][vmspace]")
{
    VmWorld w;
    const uintptr_t start = k_start;
    w.map(start, k_block);
    REQUIRE(VmWorld::write(w.space, start, 1) == k_ok); // a reservation, nearly all unused
    REQUIRE(reserv_unused_pages() > 2);
    std::vector<PhysAddr> hog;
    for (toll::Result<PhysAddr> p = phys_allocator().alloc(0, false); p;
         p = phys_allocator().alloc(0, false))
        hog.push_back(p.value());
    // Nothing is free but what the reservation holds. A new address space
    // needs an order-1 block for its level-1 table: reclaim must serve it.
    Counters c;
    VmSpace* other = vmspace_create();
    REQUIRE(other != nullptr);
    CHECK(c.delta("vm.reserv.reclaimed") == 1);
    vmspace_destroy(other);
    for (PhysAddr p : hog)
        phys_allocator().free(p, 0);
    destroy_all(w);
}
