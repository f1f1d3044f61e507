// The simulated world of the arm64 pmap host tests (test_pmap_arm64.cpp,
// test_mmu_checker.cpp, test_reserv_arm64.cpp): the granule's sizes, the
// memory layout, a World that gives each test a fresh allocator and checks
// break-before-make and well-formedness, and helpers that read the tables by
// hand. The stubs for the hardware half live in pmap_world.cpp.
#pragma once
#include "arch/arm64/mmu.h"
#include "host_kernel_stubs.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/phys.h"
#include "mmu_checker.h"
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <string>
#include <vector>

TOLL_SECTION_BOUNDS(toll::Counter, toll_counters);

namespace pmap_world {

using namespace toll::vm;
using toll::test::Arm64Bits;
using toll::test::Arm64Geometry;
using toll::test::BbmChecker;
using toll::test::extract_into;
using toll::test::SimulatedMemory;

inline const Arm64Geometry g{toll::arch::k_page_shift};
inline const uint64_t k_page = g.page();
inline const uint64_t k_run = g.run_size();
inline const uint64_t k_block = g.l2_block();
inline const unsigned k_run_pages = g.run_pages();
/// User space as the pmap defines it.
inline const uint64_t k_user_limit = user_space_limit();

// Simulated memory: "data" frames (the pages user addresses map to) in the
// first two level-2 blocks, aligned so that runs and blocks can map them,
// then pages for the allocator to give out as page tables.
constexpr PhysAddr k_base = 0x40000000;
inline const PhysAddr k_data = k_base;
inline const PhysAddr k_table_pages = k_base + 2 * k_block;
constexpr size_t k_table_page_count = 64;
inline const size_t k_memory_size = 2 * k_block + k_table_page_count * k_page;
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

/// The stubs' record and the break-before-make checker they feed
/// (pmap_world.cpp).
extern Log g_log;
extern BbmChecker g_bbm;

inline uint64_t* host_words(PhysAddr pa)
{
    return static_cast<uint64_t*>(phys_to_virt(pa));
}

/// The level-1 table of @p pmap (what the checkers watch).
inline uint64_t* l1_of(Pmap* pmap)
{
    return reinterpret_cast<uint64_t*>(pmap);
}

/// The level-2 entry of @p va in @p pmap, walked by hand; fails if no table.
inline uint64_t* l2e_of(Pmap* pmap, uint64_t va)
{
    uint64_t l1e = l1_of(pmap)[va / g.l1_span()];
    REQUIRE((l1e & Arm64Bits::type_mask) == Arm64Bits::type_table_or_page);
    return &host_words(l1e & g.address_mask())[(va % g.l1_span()) / k_block];
}

inline uint64_t counter(const char* name)
{
    return toll::test::counter_named(name).read();
}

/// Counter deltas over a scope.
struct Counters {
    std::map<std::string, uint64_t> start;
    Counters()
    {
        for (toll::Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
            start[c->name] = c->read();
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
inline uint64_t raw_pte(Pmap* pmap, uint64_t va)
{
    uint64_t l2e = *l2e_of(pmap, va);
    REQUIRE((l2e & Arm64Bits::type_mask) == Arm64Bits::type_table_or_page);
    return host_words(l2e & g.address_mask())[(va % k_block) / k_page];
}

inline uint64_t raw_l2e(Pmap* pmap, uint64_t va)
{
    return *l2e_of(pmap, va);
}

inline bool is_block(uint64_t l2e)
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
inline const uint64_t k_va = 2 * k_block;

} // namespace pmap_world
