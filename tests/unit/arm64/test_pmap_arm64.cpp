// Host tests of the arm64 pmap (src/arch/arm64/pmap.cpp) over simulated
// physical memory, built once per granule. Stubs stand in for the hardware
// operations and log every descriptor store, TLB invalidation and
// instruction-cache sync; every test runs the break-before-make checker on
// each store and the well-formedness checker after each operation.
#include "arch/arm64/maintenance.h"
#include "arch/arm64/mmu.h"
#include "host_kernel_stubs.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/reserv.h"
#include "kernel/vm/vmspace.h"
#include "mmu_checker.h"
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>

TOLL_SECTION_BOUNDS(toll::Counter, toll_counters);

using namespace toll::vm;
using toll::Result;
using toll::test::allocated;
using toll::test::Arm64Bits;
using toll::test::Arm64Geometry;
using toll::test::BbmChecker;
using toll::test::SimulatedMemory;

namespace {

const Arm64Geometry g{toll::vm::k_page_shift};
const uint64_t k_page = g.page();
const uint64_t k_run = g.run_size();
const uint64_t k_block = g.l2_block();
const unsigned k_run_pages = g.run_pages();
/// User space as the pmap defines it.
const uint64_t k_user_limit = user_space_limit();

// Simulated memory: "data" frames (the pages user addresses map to) in the
// first two level-2 blocks, aligned so that runs and blocks can map them,
// then pages for the allocator to give out as page tables.
constexpr PhysAddr k_base = 0x40000000;
const PhysAddr k_data = k_base;
const PhysAddr k_table_pages = k_base + 2 * k_block;
constexpr size_t k_table_page_count = 64;
const size_t k_memory_size = 2 * k_block + k_table_page_count * k_page;
/// What TTBR0 holds when no process runs (never dereferenced here).
constexpr PhysAddr k_empty_user_table = 0x1000;

/// What the stubs record.
struct Log {
    uint64_t stores = 0;
    uint64_t tlbi_pages = 0;
    uint64_t tlbi_ranges = 0;
    uint64_t ttbr_loads = 0;
    std::vector<std::pair<PhysAddr, size_t>> icache; ///< (physical start, length)
    bool interrupts_on = true;
    uint64_t stores_with_interrupts_on = 0;
};

Log g_log;
BbmChecker g_bbm{g};

uint64_t* host_words(PhysAddr pa)
{
    return static_cast<uint64_t*>(phys_to_virt(pa));
}

/// The level-1 table of @p pmap (what the checkers watch).
uint64_t* l1_of(Pmap* pmap)
{
    return reinterpret_cast<uint64_t*>(pmap);
}

/// The level-2 entry of @p va in @p pmap, walked by hand; fails if no table.
uint64_t* l2e_of(Pmap* pmap, uint64_t va)
{
    uint64_t l1e = l1_of(pmap)[va / g.l1_span()];
    REQUIRE((l1e & Arm64Bits::type_mask) == Arm64Bits::type_table_or_page);
    return &host_words(l1e & g.address_mask())[(va % g.l1_span()) / k_block];
}

} // namespace

// ---- stubs for the hardware half of the arm64 MMU code ----------------------

namespace toll::arm64 {

PhysAddr empty_user_table_phys()
{
    return k_empty_user_table;
}

void set_user_table(PhysAddr)
{
    ++g_log.ttbr_loads;
    g_bbm.on_tlbi_all(); // no ASIDs: a TTBR0 load empties the TLB
}

void invalidate_page(uint64_t va)
{
    ++g_log.tlbi_pages;
    g_bbm.on_tlbi(va);
}

void store_entry(uint64_t* slot, uint64_t value)
{
    ++g_log.stores;
    g_bbm.on_store(slot, value);
    *slot = value;
}

void invalidate_range(uint64_t va, uint64_t length)
{
    ++g_log.tlbi_ranges;
    g_bbm.on_tlbi_range(va, length);
}

void sync_icache_range(const void* start, size_t length)
{
    g_log.icache.emplace_back(virt_to_phys(start), length);
}

} // namespace toll::arm64

// ASIDs (arch/arm64/asid.h), modelled conservatively: every activation
// empties the TLB, as a switch without ASIDs does.
namespace toll::arm64::asid {

void activate(PhysAddr l1_phys, uint64_t&)
{
    set_user_table(l1_phys);
}

void activate_none()
{
    set_user_table(k_empty_user_table);
}

void forget(uint64_t& context)
{
    context = 0;
}

void release(uint64_t& context)
{
    context = 0;
}

} // namespace toll::arm64::asid

namespace toll::arch {

bool interrupts_disable()
{
    bool were = g_log.interrupts_on;
    g_log.interrupts_on = false;
    return were;
}

void interrupts_restore(bool were_enabled)
{
    g_log.interrupts_on = were_enabled;
}

} // namespace toll::arch

namespace {

uint64_t counter(const char* name)
{
    for (toll::Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        if (std::strcmp(c->name, name) == 0)
            return c->value;
    FAIL("no counter named " << name);
    return 0;
}

/// Counter deltas over a scope.
struct Counters {
    std::map<std::string, uint64_t> start;
    Counters()
    {
        for (toll::Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
            start[c->name] = c->value;
    }
    uint64_t delta(const char* name) const { return counter(name) - start.at(name); }
};

/// A fresh allocator and kernel tables over simulated memory, the logs and
/// checkers reset; checks both invariants on request and at the end.
struct World {
    SimulatedMemory mem{k_base, k_memory_size};
    std::vector<Pmap*> pmaps;

    World()
    {
        phys_allocator() = PhysAllocator();
        phys_allocator().add_range(k_table_pages, k_table_page_count * k_page);
        g_log = Log{};
        g_bbm = BbmChecker{g};
    }

    ~World()
    {
        pmap_activate(nullptr);
        phys_allocator() = PhysAllocator();
    }

    Pmap* create(bool live = true)
    {
        Pmap* pmap = pmap_create();
        REQUIRE(pmap != nullptr);
        g_bbm.watch(l1_of(pmap), k_user_limit, false);
        pmaps.push_back(pmap);
        if (live)
            activate(pmap);
        return pmap;
    }

    void activate(Pmap* pmap)
    {
        pmap_activate(pmap);
        for (Pmap* p : pmaps)
            g_bbm.set_live(l1_of(p), p == pmap);
    }

    void destroy(Pmap* pmap)
    {
        g_bbm.forget(l1_of(pmap));
        pmap_destroy(pmap);
        pmaps.erase(std::find(pmaps.begin(), pmaps.end(), pmap));
    }

    /// Both checkers: no break-before-make violation so far, every table well formed.
    void check()
    {
        for (const std::string& v : g_bbm.violations())
            FAIL_CHECK("break-before-make: " << v);
        g_bbm.clear_violations();
        for (Pmap* p : pmaps)
            for (const std::string& w : toll::test::check_well_formed(l1_of(p), k_user_limit, g))
                FAIL_CHECK("malformed: " << w);
    }

    /// Enters @p pages single pages at @p va mapping consecutive data frames
    /// from @p pa.
    void enter_pages(Pmap* pmap, uint64_t va, PhysAddr pa, uint64_t pages, unsigned prot)
    {
        for (uint64_t i = 0; i < pages; ++i)
            REQUIRE(pmap_enter(pmap, va + i * k_page, pa + i * k_page, prot) == toll::k_ok);
        check();
    }
};

/// The level-3 entry of @p va, walked by hand (fails if there is no table).
uint64_t raw_pte(Pmap* pmap, uint64_t va)
{
    uint64_t l2e = *l2e_of(pmap, va);
    REQUIRE((l2e & Arm64Bits::type_mask) == Arm64Bits::type_table_or_page);
    return host_words(l2e & g.address_mask())[(va % k_block) / k_page];
}

uint64_t raw_l2e(Pmap* pmap, uint64_t va)
{
    return *l2e_of(pmap, va);
}

bool is_block(uint64_t l2e)
{
    return (l2e & Arm64Bits::valid) && (l2e & Arm64Bits::type_mask) == Arm64Bits::type_block;
}

constexpr unsigned k_rw = k_prot_read | k_prot_write;
constexpr unsigned k_rx = k_prot_read | k_prot_exec;

/// Collects what pmap_remove hands back.
struct Sink {
    std::vector<std::pair<uint64_t, PhysAddr>> pages;
    static void take(void* context, uintptr_t va, PhysAddr pa)
    {
        static_cast<Sink*>(context)->pages.emplace_back(va, pa);
    }
};

// A user address two blocks up, so that tests have room on both sides.
const uint64_t k_va = 2 * k_block;

} // namespace

TEST_CASE("arm64 pmap: the granule's sizes are the architecture's", "[arm64][pmap]")
{
    World w;
    REQUIRE(pmap_page_size_count() == 3);
    CHECK(pmap_page_size(0) == k_page);
    CHECK(pmap_page_size(1) == k_run);
    CHECK(pmap_page_size(2) == k_block);
    CHECK(pmap_page_size(3) == 0);
    if (k_page == 4096) {
        CHECK(k_run == 64 * 1024);
        CHECK(k_block == 2 * 1024 * 1024);
    } else {
        CHECK(k_run == 2 * 1024 * 1024); // L3C at 16 KB plays L2's part at 4 KB
        CHECK(k_block == 32 * 1024 * 1024);
    }
}

TEST_CASE("arm64 pmap: single pages map, change rights and unmap", "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    REQUIRE(pmap_enter(pmap, k_va, k_data, k_rw) == toll::k_ok);
    PhysAddr pa;
    unsigned prot;
    REQUIRE(pmap_extract(pmap, k_va + 12, &pa, &prot));
    CHECK(pa == k_data + 12);
    CHECK(prot == k_rw);
    CHECK(pmap_protect(pmap, k_va, k_va + k_page, k_prot_read) == toll::k_ok);
    REQUIRE(pmap_extract(pmap, k_va, nullptr, &prot));
    CHECK(prot == k_prot_read);
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == 1);
    // Moving a live page to another frame is break-before-make.
    uint64_t tlbi = g_log.tlbi_pages;
    REQUIRE(pmap_enter(pmap, k_va, k_data + k_page, k_rw) == toll::k_ok);
    CHECK(g_log.tlbi_pages == tlbi + 1);
    CHECK(allocated(pmap_remove_page(pmap, k_va)) == k_data + k_page);
    CHECK_FALSE(pmap_extract(pmap, k_va, nullptr, nullptr));
    CHECK(pmap_enter(pmap, k_user_limit, k_data, k_rw) == toll::k_einval);
    w.check();
}

TEST_CASE("arm64 pmap: an aligned run entered at once is one contiguous mapping, synced once",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    Counters c;
    uint64_t stores = g_log.stores;
    REQUIRE(pmap_enter(pmap, k_va, k_data, k_rx, 1) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l3c.mappings") == 1);
    REQUIRE(g_log.icache.size() == 1); // one sync for the run, not one per page
    CHECK(g_log.icache[0] == std::make_pair(k_data, size_t(k_run)));
    // Links to a new level-2 and level-3 table, then one store per entry.
    CHECK(g_log.stores - stores == 2 + k_run_pages);
    for (unsigned i = 0; i < k_run_pages; ++i)
        CHECK((raw_pte(pmap, k_va + i * k_page) & Arm64Bits::contiguous) != 0);
    PhysAddr pa;
    REQUIRE(pmap_extract(pmap, k_va + 5 * k_page + 7, &pa, nullptr));
    CHECK(pa == k_data + 5 * k_page + 7);
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == 1);
    // Misaligned or occupied: refused.
    CHECK(pmap_enter(pmap, k_va + k_page, k_data, k_rx, 1) == toll::k_einval);
    CHECK(pmap_enter(pmap, k_va, k_data + k_run, k_rx, 1) == toll::k_eexist);
    CHECK(pmap_enter(pmap, k_va + k_run, k_data + k_page, k_rx, 1) == toll::k_einval);
    w.check();
}

TEST_CASE("arm64 pmap: a populated aligned run promotes to a contiguous run", "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    w.enter_pages(pmap, k_va, k_data, k_run_pages, k_rw);
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == k_run_pages);
    Counters c;
    uint64_t stores = g_log.stores;
    REQUIRE(pmap_promote(pmap, k_va + 3 * k_page, 1));
    w.check();
    CHECK(c.delta("vm.pmap.l3c.promotions") == 1);
    CHECK(g_log.stores - stores == 2 * k_run_pages); // break, then make
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == 1);
    CHECK(g_log.icache.empty()); // nothing executable
    // Promoting again changes nothing and is no failure.
    CHECK_FALSE(pmap_promote(pmap, k_va, 1));
    CHECK(c.delta("vm.pmap.l3c.p_failures") == 0);
}

TEST_CASE("arm64 pmap: a run with one differing page does not promote", "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    Counters c;
    SECTION("one page has other rights")
    {
        w.enter_pages(pmap, k_va, k_data, k_run_pages, k_rw);
        REQUIRE(pmap_protect(pmap, k_va + k_page, k_va + 2 * k_page, k_prot_read) == toll::k_ok);
    }
    SECTION("one page maps another frame")
    {
        w.enter_pages(pmap, k_va, k_data, k_run_pages, k_rw);
        REQUIRE(pmap_enter(pmap, k_va + 2 * k_page, k_data + k_run, k_rw) == toll::k_ok);
    }
    SECTION("one page is missing")
    {
        w.enter_pages(pmap, k_va, k_data, k_run_pages - 1, k_rw);
    }
    SECTION("the frames are not aligned")
    {
        w.enter_pages(pmap, k_va, k_data + k_page, k_run_pages, k_rw);
    }
    uint64_t stores = g_log.stores;
    CHECK_FALSE(pmap_promote(pmap, k_va, 1));
    CHECK(c.delta("vm.pmap.l3c.p_failures") == 1);
    CHECK(c.delta("vm.pmap.l3c.promotions") == 0);
    CHECK(g_log.stores == stores); // nothing touched
    CHECK((raw_pte(pmap, k_va) & Arm64Bits::contiguous) == 0);
    w.check();
}

TEST_CASE("arm64 pmap: a full level-3 table promotes to a block and keeps the table",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    w.enter_pages(pmap, k_va, k_data, g.entries(), k_rw);
    Counters c;
    for (uint64_t run = k_va; run < k_va + k_block; run += k_run)
        REQUIRE(pmap_promote(pmap, run, 1));
    w.check();
    CHECK(c.delta("vm.pmap.l3c.promotions") == g.entries() / k_run_pages);
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == g.entries() / k_run_pages);
    size_t free_before = phys_allocator().free_pages();
    REQUIRE(pmap_promote(pmap, k_va + 77 * k_page, 2));
    w.check();
    CHECK(c.delta("vm.pmap.l2.promotions") == 1);
    CHECK(is_block(raw_l2e(pmap, k_va)));
    CHECK((raw_l2e(pmap, k_va) & g.address_mask()) == k_data);
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == 1);
    CHECK(phys_allocator().free_pages() == free_before); // the level-3 table is kept
    PhysAddr pa;
    unsigned prot;
    REQUIRE(pmap_extract(pmap, k_va + k_block - 1, &pa, &prot));
    CHECK(pa == k_data + k_block - 1);
    CHECK(prot == k_rw);
}

TEST_CASE("arm64 pmap: a block that differs in one page does not promote", "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    w.enter_pages(pmap, k_va, k_data, g.entries(), k_rw);
    REQUIRE(pmap_protect(pmap, k_va + k_block - k_page, k_va + k_block, k_prot_read) == toll::k_ok);
    Counters c;
    CHECK_FALSE(pmap_promote(pmap, k_va, 2));
    CHECK(c.delta("vm.pmap.l2.p_failures") == 1);
    CHECK_FALSE(is_block(raw_l2e(pmap, k_va)));
    w.check();
}

namespace {

// A block made by promotion at k_va over k_data, read-write.
Pmap* promoted_block(World& w)
{
    Pmap* pmap = w.create();
    w.enter_pages(pmap, k_va, k_data, g.entries(), k_rw);
    REQUIRE(pmap_promote(pmap, k_va, 2));
    w.check();
    return pmap;
}

// A run made by promotion at k_va over k_data, read-write.
Pmap* promoted_run(World& w)
{
    Pmap* pmap = w.create();
    w.enter_pages(pmap, k_va, k_data, k_run_pages, k_rw);
    REQUIRE(pmap_promote(pmap, k_va, 1));
    w.check();
    return pmap;
}

} // namespace

TEST_CASE("arm64 pmap: protecting one page of a run demotes it", "[arm64][pmap]")
{
    World w;
    Pmap* pmap = promoted_run(w);
    Counters c;
    REQUIRE(pmap_protect(pmap, k_va + 4 * k_page, k_va + 5 * k_page, k_prot_read) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l3c.demotions") == 1);
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == k_run_pages);
    for (unsigned i = 0; i < k_run_pages; ++i) {
        PhysAddr pa;
        unsigned prot;
        REQUIRE(pmap_extract(pmap, k_va + i * k_page, &pa, &prot));
        CHECK(pa == k_data + i * k_page);
        CHECK(prot == (i == 4 ? k_prot_read : k_rw));
    }
}

TEST_CASE("arm64 pmap: protecting a whole run keeps it, and syncs it once", "[arm64][pmap]")
{
    World w;
    Pmap* pmap = promoted_run(w);
    Counters c;
    REQUIRE(pmap_protect(pmap, k_va, k_va + k_run, k_rx) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l3c.demotions") == 0);
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == 1);
    REQUIRE(g_log.icache.size() == 1);
    CHECK(g_log.icache[0].second == k_run);
    unsigned prot;
    REQUIRE(pmap_extract(pmap, k_va + k_run - 1, nullptr, &prot));
    CHECK(prot == k_rx);
}

TEST_CASE("arm64 pmap: protecting one page of a block demotes the block, then one run",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = promoted_block(w);
    Counters c;
    size_t free_before = phys_allocator().free_pages();
    uint64_t victim = k_va + 3 * k_run + k_page;
    REQUIRE(pmap_protect(pmap, victim, victim + k_page, k_prot_read) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l2.demotions") == 1);
    CHECK(c.delta("vm.pmap.l3c.demotions") == 1);
    CHECK(phys_allocator().free_pages() == free_before); // the kept table, no allocation
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == g.entries() / k_run_pages - 1 + k_run_pages);
    unsigned prot;
    REQUIRE(pmap_extract(pmap, victim, nullptr, &prot));
    CHECK(prot == k_prot_read);
    REQUIRE(pmap_extract(pmap, victim + k_page, nullptr, &prot));
    CHECK(prot == k_rw);
}

TEST_CASE("arm64 pmap: protecting a whole block keeps it", "[arm64][pmap]")
{
    World w;
    Pmap* pmap = promoted_block(w);
    Counters c;
    REQUIRE(pmap_protect(pmap, k_va, k_va + k_block, k_rx) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l2.demotions") == 0);
    CHECK(is_block(raw_l2e(pmap, k_va)));
    REQUIRE(g_log.icache.size() == 1);
    CHECK(g_log.icache[0] == std::make_pair(k_data, size_t(k_block)));
}

TEST_CASE("arm64 pmap: unmapping one page of a block demotes it and frees one page",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = promoted_block(w);
    Counters c;
    Sink sink;
    uint64_t victim = k_va + k_block - k_page;
    REQUIRE(pmap_remove(pmap, victim, victim + k_page, Sink::take, &sink) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l2.demotions") == 1);
    CHECK(c.delta("vm.pmap.l3c.demotions") == 1);
    REQUIRE(sink.pages.size() == 1);
    CHECK(sink.pages[0] == std::make_pair(victim, k_data + k_block - k_page));
    CHECK_FALSE(pmap_extract(pmap, victim, nullptr, nullptr));
    PhysAddr pa;
    REQUIRE(pmap_extract(pmap, victim - k_page, &pa, nullptr));
    CHECK(pa == k_data + k_block - 2 * k_page);
}

TEST_CASE("arm64 pmap: unmapping a whole run or block hands back every page without demotion",
          "[arm64][pmap]")
{
    World w;
    Counters c;
    Sink sink;
    SECTION("a run")
    {
        Pmap* pmap = promoted_run(w);
        REQUIRE(pmap_remove(pmap, k_va, k_va + k_run, Sink::take, &sink) == toll::k_ok);
        CHECK(sink.pages.size() == k_run_pages);
        CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == 0);
    }
    SECTION("a block")
    {
        Pmap* pmap = promoted_block(w);
        size_t free_before = phys_allocator().free_pages();
        REQUIRE(pmap_remove(pmap, 0, k_user_limit, Sink::take, &sink) == toll::k_ok);
        CHECK(sink.pages.size() == g.entries());
        CHECK(phys_allocator().free_pages() == free_before + 1); // the kept table
        CHECK(raw_l2e(pmap, k_va) == 0);
    }
    w.check();
    for (size_t i = 0; i < sink.pages.size(); ++i)
        CHECK(sink.pages[i] == std::make_pair(k_va + i * k_page, k_data + i * k_page));
    CHECK(c.delta("vm.pmap.l3c.demotions") == 0);
    CHECK(c.delta("vm.pmap.l2.demotions") == 0);
}

TEST_CASE("arm64 pmap: PROT_NONE over a run hides its pages and keeps their frames",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = promoted_run(w);
    REQUIRE(pmap_protect(pmap, k_va, k_va + k_run, k_prot_none) == toll::k_ok);
    w.check();
    CHECK(pmap_tlb_entries(pmap, 0, k_user_limit) == 0);
    unsigned prot;
    REQUIRE(pmap_extract(pmap, k_va, nullptr, &prot));
    CHECK(prot == k_prot_none);
    REQUIRE(pmap_protect(pmap, k_va, k_va + k_run, k_rw) == toll::k_ok);
    w.check();
    PhysAddr pa;
    REQUIRE(pmap_extract(pmap, k_va + k_run - k_page, &pa, &prot));
    CHECK(pa == k_data + k_run - k_page);
    CHECK(prot == k_rw);
}

TEST_CASE("arm64 pmap: entering one page inside a block demotes it, break before make",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = promoted_block(w);
    Counters c;
    REQUIRE(pmap_enter(pmap, k_va + k_page, k_data + k_block, k_rw) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l2.demotions") == 1);
    CHECK(c.delta("vm.pmap.l3c.demotions") == 1);
    PhysAddr pa;
    REQUIRE(pmap_extract(pmap, k_va + k_page, &pa, nullptr));
    CHECK(pa == k_data + k_block);
}

TEST_CASE("arm64 pmap: fork's copy of a run is one mapping with one icache sync", "[arm64][pmap]")
{
    World w;
    Pmap* parent = w.create();
    REQUIRE(pmap_enter(parent, k_va, k_data, k_rx, 1) == toll::k_ok);
    Pmap* child = w.create(false);
    g_log.icache.clear();
    Counters c;
    REQUIRE(pmap_enter(child, k_va, k_data + k_run, k_rx, 1) == toll::k_ok);
    w.check();
    CHECK(g_log.icache.size() == 1);
    CHECK(c.delta("vm.pmap.l3c.mappings") == 1);
    CHECK(pmap_tlb_entries(child, 0, k_user_limit) == 1);
    w.destroy(child);
    w.destroy(parent);
}

TEST_CASE("arm64 pmap: a block entered at once keeps a table aside and demotes without memory",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    Counters c;
    REQUIRE(pmap_enter(pmap, k_va, k_data, k_rw, 2) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l2.mappings") == 1);
    // Exhaust the allocator: a demotion must still work.
    std::vector<PhysAddr> hog;
    for (Result<PhysAddr> p = phys_allocator().alloc(0); p; p = phys_allocator().alloc(0))
        hog.push_back(p.value());
    // The allocator says why it has nothing: ENOMEM, not an address.
    CHECK(toll::test::failure(phys_allocator().alloc(0)) == toll::k_enomem);
    CHECK(toll::test::failure(phys_allocator().alloc(1)) == toll::k_enomem);
    REQUIRE(pmap_protect(pmap, k_va, k_va + k_page, k_prot_read) == toll::k_ok);
    w.check();
    CHECK(c.delta("vm.pmap.l2.demotions") == 1);
    // With no memory, a page in a new 2 MB stretch cannot get its table, a
    // new pmap cannot get its level-1 table, and a block cannot get the table
    // it must keep aside; each failure leaves nothing behind.
    CHECK(pmap_enter(pmap, 0, k_data, k_rw) == toll::k_enomem);
    CHECK(pmap_create() == nullptr);
    CHECK(pmap_enter(pmap, 4 * k_block, k_data + 4 * k_block, k_rw, 2) == toll::k_enomem);
    CHECK_FALSE(pmap_extract(pmap, 0, nullptr, nullptr));
    CHECK_FALSE(pmap_extract(pmap, 4 * k_block, nullptr, nullptr));
    w.check();
    // The demoted pages unmap one by one without memory; a second removal
    // finds nothing and says so.
    CHECK(allocated(pmap_remove_page(pmap, k_va)) == k_data);
    CHECK(toll::test::failure(pmap_remove_page(pmap, k_va)) == toll::k_enoent);
    for (PhysAddr p : hog)
        phys_allocator().free(p, 0);
}

TEST_CASE("arm64 pmap: destroying a pmap with runs and blocks frees every table", "[arm64][pmap]")
{
    World w;
    size_t free_at_start = phys_allocator().free_pages() + 0;
    {
        Pmap* pmap = w.create();
        REQUIRE(pmap_enter(pmap, 0, k_data, k_rw, 2) == toll::k_ok);
        REQUIRE(pmap_enter(pmap, k_block, k_data + k_block, k_rx, 1) == toll::k_ok);
        w.enter_pages(pmap, k_va, k_data, g.entries(), k_rw);
        REQUIRE(pmap_promote(pmap, k_va, 2));
        w.check();
        w.destroy(pmap);
    }
    // The allocator was empty of allocations before: all of it is back.
    CHECK(phys_allocator().free_pages() == free_at_start);
    CHECK(phys_allocator().check());
}

TEST_CASE("arm64 pmap: random operations keep the tables well formed and agree with a model",
          "[arm64][pmap]")
{
    World w;
    Pmap* pmap = w.create();
    // Two blocks of user space over two blocks of frames; page i of the
    // window maps frame i unless an operation moved it.
    const uint64_t window = 2 * k_block, pages = window / k_page;
    std::map<uint64_t, std::pair<PhysAddr, unsigned>> model;
    std::mt19937 rng(12345);
    const unsigned prots[] = {k_prot_read, k_rw, k_rx, k_prot_none};
    for (int step = 0; step < 400; ++step) {
        uint64_t first = rng() % pages;
        uint64_t count = 1 + rng() % (step % 3 == 0 ? pages - first : 40);
        if (first + count > pages)
            count = pages - first;
        uint64_t va = k_va + first * k_page, end = va + count * k_page;
        switch (rng() % 5) {
        case 0: // fill pages in order, as faults would
            for (uint64_t v = va; v < end; v += k_page) {
                PhysAddr pa = k_data + (v - k_va);
                REQUIRE(pmap_enter(pmap, v, pa, k_rw) == toll::k_ok);
                model[v] = {pa, k_rw};
            }
            break;
        case 1: {
            unsigned prot = prots[rng() % 4];
            REQUIRE(pmap_protect(pmap, va, end, prot) == toll::k_ok);
            for (auto& [v, m] : model)
                if (v >= va && v < end)
                    m.second = prot;
            break;
        }
        case 2: {
            Sink sink;
            REQUIRE(pmap_remove(pmap, va, end, Sink::take, &sink) == toll::k_ok);
            size_t expected = 0;
            for (auto it = model.lower_bound(va); it != model.end() && it->first < end;) {
                ++expected;
                it = model.erase(it);
            }
            CHECK(sink.pages.size() == expected);
            break;
        }
        default: { // try to promote around va
            unsigned psind = 1 + rng() % 2;
            pmap_promote(pmap, va, psind);
            break;
        }
        }
        w.check();
        for (uint64_t v = k_va; v < k_va + window; v += k_page) {
            auto it = model.find(v);
            PhysAddr pa;
            unsigned prot;
            bool present = pmap_extract(pmap, v, &pa, &prot);
            REQUIRE(present == (it != model.end()));
            if (present) {
                REQUIRE(pa == it->second.first);
                REQUIRE(prot == it->second.second);
            }
        }
    }
    CHECK(counter("vm.pmap.l3c.promotions") > 0);
}

// The checkers themselves must fail on the mistakes they exist to catch.
TEST_CASE("arm64 checkers: break-before-make violations are caught", "[arm64][checker]")
{
    World w;
    Pmap* pmap = w.create();
    REQUIRE(pmap_enter(pmap, k_va, k_data, k_rw) == toll::k_ok);
    uint64_t* pte = &host_words(raw_l2e(pmap, k_va) & g.address_mask())[(k_va % k_block) / k_page];
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
    Pmap* pmap = w.create();
    REQUIRE(pmap_enter(pmap, k_va, k_data, k_rw) == toll::k_ok);
    uint64_t* pte = &host_words(raw_l2e(pmap, k_va) & g.address_mask())[(k_va % k_block) / k_page];
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

// ---- reservations (src/kernel/vm/reserv.cpp) over the buddy allocator ------

namespace toll {
// The kernel reads vm.superpages from the command line; the host has none.
unsigned long param_get_ulong(const char*, unsigned long fallback)
{
    return fallback;
}
} // namespace toll

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
