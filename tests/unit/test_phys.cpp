// Host tests of the physical page allocator (src/kernel/vm/phys.cpp), run over
// 64 MB of simulated physical memory that starts at 1 MB, not at 0.
#include "host_kernel_stubs.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/phys.h"
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

using toll::Result;
using toll::arch::k_page_size;
using toll::arch::PhysAddr;
using toll::test::allocated;
using toll::test::failure;
using toll::test::KernelPanic;
using toll::test::SimulatedMemory;
using toll::vm::PhysAllocator;

namespace {

constexpr PhysAddr k_base = 0x100000; // Not 0, and not aligned to the largest block.
constexpr size_t k_memory_size = 64 << 20;
constexpr PhysAddr k_page = k_page_size;
constexpr PhysAddr k_max_block = k_page << PhysAllocator::k_max_order;

PhysAddr block_size(unsigned order)
{
    return k_page << order;
}

/// The value of the kernel counter @p name, read straight from the linker-built
/// table (GNU ld provides __start_/__stop_ for the toll_counters section).
uint64_t counter(const char* name)
{
    return toll::test::counter_named(name).read();
}

/// Allocates single pages until the allocator runs dry; returns them in order.
std::vector<PhysAddr> take_all_pages(PhysAllocator& a)
{
    std::vector<PhysAddr> pages;
    for (Result<PhysAddr> pa = a.alloc(0); pa; pa = a.alloc(0))
        pages.push_back(pa.value());
    return pages;
}

} // namespace

TEST_CASE("phys: blocks of every order are naturally aligned")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    a.add_range(k_base, k_memory_size);
    REQUIRE(a.check());
    std::vector<std::pair<PhysAddr, unsigned>> taken;
    for (unsigned round = 0; round < 3; ++round)
        for (unsigned order = 0; order <= PhysAllocator::k_max_order; ++order) {
            PhysAddr pa = allocated(a.alloc(order));
            CHECK(pa % block_size(order) == 0);
            CHECK(pa >= k_base);
            CHECK(pa + block_size(order) <= k_base + k_memory_size);
            taken.emplace_back(pa, order);
        }
    REQUIRE(a.check());
    for (auto [pa, order] : taken)
        a.free(pa, order);
    CHECK(a.check());
    CHECK(a.free_pages() == a.total_pages());
}

TEST_CASE("phys: allocation runs dry exactly when every page is handed out")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    a.add_range(k_base, k_memory_size);
    size_t start_free = a.free_pages();
    // 64 MB is 16384 pages; the bitmap (2 KB) takes one of them.
    CHECK(a.total_pages() == k_memory_size / k_page - 1);
    CHECK(start_free == a.total_pages());

    uint64_t failures = counter("vm.phys.failures");
    std::vector<PhysAddr> pages = take_all_pages(a);
    CHECK(pages.size() == start_free);
    CHECK(a.free_pages() == 0);
    CHECK(counter("vm.phys.failures") == failures + 1);
    CHECK(failure(a.alloc(0)) == toll::k_enomem);
    CHECK(a.check());
    std::set<PhysAddr> distinct(pages.begin(), pages.end());
    CHECK(distinct.size() == pages.size());

    // Give back every other page: plenty of memory, but no two pages together.
    std::sort(pages.begin(), pages.end());
    size_t given_back = 0;
    for (PhysAddr pa : pages)
        if ((pa / k_page) % 2 == 0) {
            a.free(pa);
            ++given_back;
        }
    CHECK(a.free_pages() == given_back);
    CHECK(a.check());
    CHECK(failure(a.alloc(1)) == toll::k_enomem);
    CHECK(failure(a.alloc(PhysAllocator::k_max_order)) == toll::k_enomem);
    CHECK(failure(a.alloc(PhysAllocator::k_max_order + 1)) == toll::k_einval);
    CHECK(a.alloc(0).ok());
    CHECK(a.free_pages() == given_back - 1);
}

TEST_CASE("phys: freeing everything in random order coalesces back to whole blocks")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    // 11 MB and an untidy tail: small enough for check() at every step.
    a.add_range(k_base + 3 * k_page, (11 << 20) + 5 * k_page);
    size_t total = a.total_pages();
    std::vector<PhysAddr> pages = take_all_pages(a);
    REQUIRE(pages.size() == total);
    CHECK(failure(a.alloc(PhysAllocator::k_max_order)) == toll::k_enomem);

    uint64_t merges = counter("vm.phys.merges");
    std::mt19937 rng(1234);
    std::shuffle(pages.begin(), pages.end(), rng);
    for (PhysAddr pa : pages) {
        a.free(pa);
        REQUIRE(a.check());
    }
    CHECK(a.free_pages() == total);
    CHECK(counter("vm.phys.merges") > merges);
    // Every whole block of the largest order that fits inside the range
    // (after its one bitmap page) must be whole again.
    PhysAddr lo = k_base + 4 * k_page, hi = k_base + 3 * k_page + (11 << 20) + 5 * k_page;
    PhysAddr first = (lo + k_max_block - 1) & ~(k_max_block - 1);
    size_t expected = (hi - first) / k_max_block, whole = 0;
    REQUIRE(expected >= 1);
    for (Result<PhysAddr> big = a.alloc(PhysAllocator::k_max_order); big;
         big = a.alloc(PhysAllocator::k_max_order)) {
        CHECK(big.value() % k_max_block == 0);
        ++whole;
    }
    CHECK(whole == expected);
}

TEST_CASE("phys: one split per order on the way down, one merge per order on the way up")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    // One bitmap page just below a boundary of the largest block, then
    // exactly one such block: one split per order, one merge per order.
    PhysAddr block = k_max_block;
    a.add_range(block - k_page, k_max_block + k_page);
    REQUIRE(a.total_pages() == k_max_block / k_page);

    uint64_t splits = counter("vm.phys.splits"), merges = counter("vm.phys.merges");
    uint64_t allocs = counter("vm.phys.allocs"), frees = counter("vm.phys.frees");
    PhysAddr pa = allocated(a.alloc(0));
    CHECK(pa == block);
    CHECK(counter("vm.phys.splits") - splits == PhysAllocator::k_max_order);
    CHECK(counter("vm.phys.allocs") - allocs == 1);
    a.free(pa);
    CHECK(counter("vm.phys.merges") - merges == PhysAllocator::k_max_order);
    CHECK(counter("vm.phys.frees") - frees == 1);
    CHECK(allocated(a.alloc(PhysAllocator::k_max_order)) == block);
}

TEST_CASE("phys: pages reserved before the first alloc are never handed out")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    a.add_range(k_base, 16 << 20);
    size_t total = a.total_pages();
    CHECK(total == (16 << 20) / k_page - 1);

    // A hole with ragged edges: it touches pages 0x105..0x108 (4 pages).
    a.reserve(k_base + 0x5123, 0x3000);
    // A whole largest block, and the last page of the range.
    a.reserve(0x800000, k_max_block);
    a.reserve(k_base + (16 << 20) - 1, 1);
    // Outside every range, and a second time over the same pages: no effect.
    a.reserve(k_base + (32 << 20), 1 << 20);
    a.reserve(k_base + 0x5000, 0x1000);
    size_t reserved = 4 + k_max_block / k_page + 1;
    // The two holes inside the range split it in three; the two new pieces
    // each pay one page for their own bitmap.
    size_t extra_bitmaps = 2;
    CHECK(a.total_pages() == total - reserved - extra_bitmaps);
    CHECK(a.free_pages() == a.total_pages());
    REQUIRE(a.check());

    std::vector<PhysAddr> pages = take_all_pages(a);
    CHECK(pages.size() == total - reserved - extra_bitmaps);
    for (PhysAddr pa : pages) {
        INFO("page " << std::hex << pa);
        CHECK_FALSE((pa >= k_base + 0x5000 && pa < k_base + 0x9000));
        CHECK_FALSE((pa >= 0x800000 && pa < 0x800000 + k_max_block));
        CHECK(pa != k_base + (16 << 20) - k_page);
    }
    for (PhysAddr pa : pages)
        a.free(pa);
    CHECK(a.free_pages() == a.total_pages());
    CHECK(a.check());
}

TEST_CASE("phys: pages reserved after allocation started are taken off the free lists")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    a.add_range(k_base, 16 << 20);
    PhysAddr held = allocated(a.alloc(2)); // Builds the allocator.
    size_t total = a.total_pages();

    // Ragged edges again (pages 0x205..0x208), then a whole largest block.
    a.reserve(k_base + 0x105123, 0x3000);
    a.reserve(0x800000, k_max_block);
    // Memory that is allocated stays allocated: it is not freed twice later.
    a.reserve(held, block_size(2));
    size_t reserved = 4 + k_max_block / k_page;
    CHECK(a.total_pages() == total - reserved); // No new bitmaps now.
    CHECK(a.free_pages() == a.total_pages() - 4);
    REQUIRE(a.check());

    std::vector<PhysAddr> pages = take_all_pages(a);
    CHECK(pages.size() == total - reserved - 4);
    for (PhysAddr pa : pages) {
        INFO("page " << std::hex << pa);
        CHECK_FALSE((pa >= k_base + 0x105000 && pa < k_base + 0x109000));
        CHECK_FALSE((pa >= 0x800000 && pa < 0x800000 + k_max_block));
        CHECK_FALSE((pa >= held && pa < held + block_size(2)));
    }
    for (PhysAddr pa : pages)
        a.free(pa);
    a.free(held, 2);
    CHECK(a.free_pages() == a.total_pages());
    CHECK(a.check());
}

TEST_CASE("phys: reserved and unmanaged memory is never written")
{
    SimulatedMemory mem(k_base, k_memory_size);
    // A copy of the initial contents to compare against.
    std::vector<unsigned char> before(mem.host(), mem.host() + k_memory_size);
    PhysAllocator a;
    // The boot sequence: the memory map first, then the kernel image (at
    // 1 MB, like the i386 kernel) and some boot data out of it.
    a.add_range(k_base, 40 << 20);
    const PhysAddr kernel_end = k_base + 0x87654, data = 0x2345678, data_size = 0x10000;
    a.reserve(k_base, kernel_end - k_base);
    a.reserve(data, data_size);

    std::vector<std::pair<PhysAddr, unsigned>> taken;
    for (unsigned i = 0; i < 200; ++i) {
        unsigned order = i % 5;
        PhysAddr pa = allocated(a.alloc(order));
        taken.emplace_back(pa, order);
    }
    for (auto [pa, order] : taken)
        a.free(pa, order);
    REQUIRE(a.check());

    auto unchanged = [&](PhysAddr lo, PhysAddr hi) {
        return std::memcmp(mem.host() + (lo - k_base), before.data() + (lo - k_base), hi - lo) == 0;
    };
    CHECK(unchanged(k_base, kernel_end));
    CHECK(unchanged(data, data + data_size));
    CHECK(unchanged(k_base + (40 << 20), k_base + k_memory_size));
}

TEST_CASE("phys: odd, disjoint and overlapping ranges are trimmed to whole pages")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    struct Span {
        PhysAddr base, length;
    };
    // Pages wholly inside each span; each loses one bitmap page at its start.
    const Span spans[] = {
        {k_base + 0x1234, 0x56789},      // pages 0x102..0x156: 85, 84 managed
        {k_base + 0x800010, 0x212345},   // pages 0x901..0xb11: 529, 528 managed
        {k_base + 0x2000000, 0x1000000}, // 4096 pages at 33 MB, 4095 managed
    };
    a.add_range(spans[2].base, spans[2].length);
    a.add_range(spans[0].base, spans[0].length);
    a.add_range(spans[1].base, spans[1].length);
    size_t expected = 84 + 528 + 4095;
    CHECK(a.total_pages() == expected);
    // Too small to hold a bitmap and a page, or less than one whole page.
    a.add_range(k_base + 0x1800000, k_page);
    a.add_range(k_base + 0x1900800, k_page);
    CHECK(a.total_pages() == expected);
    // Overlapping what is there: only the new 8 pages on each side count, and
    // each side is its own range (with its own bitmap page).
    a.add_range(spans[2].base - 8 * k_page, spans[2].length + 16 * k_page);
    expected += 7 + 7;
    CHECK(a.total_pages() == expected);
    REQUIRE(a.check());

    std::vector<PhysAddr> pages = take_all_pages(a);
    CHECK(pages.size() == expected);
    for (PhysAddr pa : pages) {
        INFO("page " << std::hex << pa);
        bool inside = false;
        for (const Span& s : spans)
            inside |= pa >= s.base + k_page && pa + k_page <= s.base + s.length;
        inside |= pa > spans[2].base - 8 * k_page && pa < spans[2].base;
        inside |= pa > spans[2].base + spans[2].length &&
                  pa < spans[2].base + spans[2].length + 8 * k_page;
        CHECK(inside);
    }
    for (PhysAddr pa : pages)
        a.free(pa);
    CHECK(a.free_pages() == expected);
    CHECK(a.check());
}

TEST_CASE("phys: a double free or a foreign address panics")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    a.add_range(k_base, 8 << 20);
    PhysAddr p = allocated(a.alloc(0));
    a.free(p);
    REQUIRE_THROWS_AS(a.free(p), KernelPanic);

    // Two buddies freed merge into one block: freeing either again is caught.
    PhysAddr pair = allocated(a.alloc(1));
    a.free(pair + k_page);
    a.free(pair);
    CHECK_THROWS_AS(a.free(pair + k_page), KernelPanic);
    CHECK_THROWS_AS(a.free(pair), KernelPanic);

    // A block whose second page is free (a second allocator, with one largest block).
    PhysAllocator b;
    PhysAddr block = 0x1000000;
    b.add_range(block - k_page, k_max_block + k_page);
    REQUIRE(allocated(b.alloc(0)) == block);
    REQUIRE(allocated(b.alloc(0)) == block + k_page);
    b.free(block + k_page);
    CHECK_THROWS_AS(b.free(block, 1), KernelPanic);
    CHECK(b.check());
    PhysAddr r = allocated(a.alloc(0));

    // Not from this allocator: outside the range, misaligned, the bitmap page.
    CHECK_THROWS_AS(a.free(k_base + (16 << 20)), KernelPanic);
    CHECK_THROWS_AS(a.free(k_base + 0x1000 + 1), KernelPanic);
    PhysAddr big = allocated(a.alloc(2));
    CHECK_THROWS_AS(a.free(big + k_page, 2), KernelPanic);
    CHECK_THROWS_AS(a.free(k_base), KernelPanic);
    CHECK_THROWS_AS(a.free(r, PhysAllocator::k_max_order + 1), KernelPanic);
    // A caught panic left the allocator as it was.
    CHECK(a.check());
    a.free(big, 2);
    a.free(r);
    CHECK(a.free_pages() == a.total_pages());
    CHECK(a.check());
}

TEST_CASE("phys: a forged free-block header in an allocated page fools nobody")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    a.add_range(k_base, 8 << 20);
    PhysAddr pair = allocated(a.alloc(1));
    PhysAddr mine = pair, theirs = pair + k_page;
    // Let the allocator write a genuine header into `theirs`, copy it, take
    // the page back, and put the copy in: a user program could do the same.
    a.free(theirs);
    unsigned char header[64];
    std::memcpy(header, mem.host() + (theirs - k_base), sizeof header);
    REQUIRE(allocated(a.alloc(0)) == theirs);
    // alloc() wiped the header: no stale one is left in memory handed out.
    CHECK(std::memcmp(header, mem.host() + (theirs - k_base), sizeof header) != 0);
    std::memcpy(mem.host() + (theirs - k_base), header, sizeof header);

    a.free(mine); // Must not merge with `theirs`, which is still allocated.
    CHECK(a.check());
    for (PhysAddr pa : take_all_pages(a))
        CHECK(pa != theirs);
}

TEST_CASE("phys: a write into a free block is noticed")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    a.add_range(k_base, 8 << 20);
    PhysAddr p = allocated(a.alloc(0));
    a.free(p);
    REQUIRE(a.check());
    std::memset(mem.host() + (p - k_base), 0, 16); // A use after free.
    CHECK_FALSE(a.check());
}

TEST_CASE("phys: random allocations and frees agree with a reference model")
{
    SimulatedMemory mem(k_base, k_memory_size);
    PhysAllocator a;
    // Three disjoint ranges with untidy edges.
    a.add_range(k_base + 0x3456, 0x5f0000);
    a.add_range(k_base + 0x900000, 0x480000);
    a.add_range(k_base + 0x1400000 - 3 * k_page, 0x401234);
    REQUIRE(a.check());
    const size_t total = a.total_pages();

    // The census: every page the allocator manages, each exactly once.
    std::vector<PhysAddr> census = take_all_pages(a);
    std::set<PhysAddr> managed(census.begin(), census.end());
    REQUIRE(managed.size() == total);
    for (PhysAddr pa : census)
        a.free(pa);
    REQUIRE(a.free_pages() == total);

    std::map<PhysAddr, unsigned> blocks; // allocated block -> order
    std::set<PhysAddr> used;             // every allocated page
    std::mt19937 rng(20240601);
    std::uniform_int_distribution<unsigned> coin(0, 99);
    // Mostly small blocks, sometimes big ones, so that large orders both
    // succeed and fail as memory fills up.
    auto pick_order = [&] {
        unsigned r = coin(rng);
        return r < 60 ? 0u : r < 85 ? r % 4 : r % (PhysAllocator::k_max_order + 1);
    };
    // With full coalescing a free, aligned 2^order run inside one range is
    // always part of one free block, so alloc(order) must not fail while one exists.
    auto free_run_exists = [&](unsigned order) {
        PhysAddr n = PhysAddr(1) << order;
        for (PhysAddr pa : managed) {
            if (pa % block_size(order) != 0)
                continue;
            bool all = true;
            for (PhysAddr i = 0; all && i < n; ++i)
                all = managed.count(pa + i * k_page) && !used.count(pa + i * k_page);
            if (all)
                return true;
        }
        return false;
    };

    size_t fails = 0;
    for (int step = 0; step < 6000; ++step) {
        bool do_alloc = blocks.empty() || coin(rng) < 55;
        if (do_alloc) {
            unsigned order = pick_order();
            Result<PhysAddr> got = a.alloc(order);
            if (!got) {
                ++fails;
                REQUIRE(got.error() == toll::k_enomem);
                REQUIRE_FALSE(free_run_exists(order));
                continue;
            }
            PhysAddr pa = got.value();
            REQUIRE(pa % block_size(order) == 0);
            for (PhysAddr i = 0; i < (PhysAddr(1) << order); ++i) {
                PhysAddr page = pa + i * k_page;
                REQUIRE(managed.count(page) == 1); // Inside the added ranges.
                REQUIRE(used.insert(page).second); // Overlaps no other allocation.
            }
            blocks[pa] = order;
            // Stamp the block: the allocator must not touch it while it is ours.
            std::memset(mem.host() + (pa - k_base), int(pa / k_page), block_size(order));
        } else {
            auto it = blocks.begin();
            std::advance(it, coin(rng) * blocks.size() / 100);
            auto [pa, order] = *it;
            const unsigned char* host = mem.host() + (pa - k_base);
            unsigned char stamp = static_cast<unsigned char>(pa / k_page);
            REQUIRE(std::all_of(host, host + block_size(order),
                                [&](unsigned char c) { return c == stamp; }));
            a.free(pa, order);
            for (PhysAddr i = 0; i < (PhysAddr(1) << order); ++i)
                used.erase(pa + i * k_page);
            blocks.erase(it);
        }
        REQUIRE(a.free_pages() + used.size() == total);
        if (step % 200 == 0)
            REQUIRE(a.check());
    }
    CHECK(fails > 0); // The run did reach memory pressure.
    for (auto [pa, order] : blocks)
        a.free(pa, order);
    CHECK(a.free_pages() == total);
    CHECK(a.check());
}
