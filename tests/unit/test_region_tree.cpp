// Host tests of the region set (src/kernel/vm/region_tree.cpp): random
// inserts, erases and hole searches checked against a plain sorted model, and
// the logarithmic cost of a hole search among 50,000 regions.
#include "host_kernel_stubs.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/region_tree.h"
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <vector>

using toll::vm::Region;
using toll::vm::RegionTree;

namespace {

constexpr uintptr_t k_page = 4096;

toll::Counter& steps()
{
    return toll::test::counter_named("vm.regions.steps");
}

/// The highest hole the slow way: every start from the top down.
std::optional<uintptr_t> model_hole(const std::map<uintptr_t, uintptr_t>& model, uintptr_t length,
                                    uintptr_t floor, uintptr_t ceiling)
{
    uintptr_t top = ceiling;
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
        if (top < floor + length)
            return std::nullopt;
        if (it->second <= top - length) // the region ends below the candidate
            return top - length;
        if (it->first < top)
            top = it->first;
    }
    if (top >= floor + length)
        return top - length;
    return std::nullopt;
}

/// The tree's answer in the model's terms.
std::optional<uintptr_t> hole(const RegionTree& tree, uintptr_t length, uintptr_t floor,
                              uintptr_t ceiling)
{
    toll::Optional<uintptr_t> found = tree.find_hole(length, floor, ceiling);
    if (!found)
        return std::nullopt;
    return found.value();
}

Region* make_region(std::vector<std::unique_ptr<Region>>& pool, uintptr_t start, uintptr_t end)
{
    pool.push_back(std::make_unique<Region>());
    Region* r = pool.back().get();
    r->start = start;
    r->end = end;
    r->prot = 1;
    return r;
}

} // namespace

TEST_CASE("regions: random inserts and erases keep the tree, list and gaps right")
{
    std::mt19937 rng(12345);
    RegionTree tree;
    std::map<uintptr_t, uintptr_t> model;
    std::map<uintptr_t, Region*> nodes;
    std::vector<std::unique_ptr<Region>> pool;
    for (int step = 0; step < 4000; ++step) {
        uintptr_t start = (rng() % 2048) * k_page;
        uintptr_t end = start + (1 + rng() % 8) * k_page;
        auto above = model.lower_bound(start);
        bool free = (above == model.end() || above->first >= end) &&
                    (above == model.begin() || std::prev(above)->second <= start);
        if (free && rng() % 3 != 0) {
            Region* r = make_region(pool, start, end);
            tree.insert(r);
            model[start] = end;
            nodes[start] = r;
        } else if (!model.empty()) {
            auto it = model.lower_bound(start);
            if (it == model.end())
                it = model.begin();
            tree.erase(nodes[it->first]);
            nodes.erase(it->first);
            model.erase(it);
        }
        REQUIRE(tree.size() == model.size());
        if (step % 50 == 0)
            REQUIRE(tree.check());
        uintptr_t length = (1 + rng() % 16) * k_page;
        uintptr_t ceiling = (rng() % 2100) * k_page;
        uintptr_t floor = (rng() % 64) * k_page;
        REQUIRE(hole(tree, length, floor, ceiling) == model_hole(model, length, floor, ceiling));
        uintptr_t probe = rng() % (2100 * k_page);
        Region* found = tree.find(probe);
        auto it = model.upper_bound(probe);
        bool inside = it != model.begin() && std::prev(it)->second > probe;
        REQUIRE((found != nullptr) == inside);
        if (found)
            REQUIRE(found->start == std::prev(it)->first);
    }
    // The list walks the regions in order.
    auto it = model.begin();
    for (Region* r = tree.first(); r; r = r->next, ++it)
        REQUIRE(r->start == it->first);
    REQUIRE(it == model.end());
}

TEST_CASE("regions: shrinking a region widens the gap above it")
{
    RegionTree tree;
    std::vector<std::unique_ptr<Region>> pool;
    Region* low = make_region(pool, 10 * k_page, 20 * k_page);
    tree.insert(low);
    tree.insert(make_region(pool, 20 * k_page, 30 * k_page));
    REQUIRE(hole(tree, 5 * k_page, 0, 30 * k_page) == 5 * k_page);
    low->end = 12 * k_page;
    tree.end_changed(low);
    REQUIRE(tree.check());
    REQUIRE(hole(tree, 5 * k_page, 0, 30 * k_page) == 15 * k_page);
}

TEST_CASE("regions: a hole at address 0 is a hole, told apart from no hole at all")
{
    RegionTree tree;
    std::vector<std::unique_ptr<Region>> pool;
    tree.insert(make_region(pool, 2 * k_page, 30 * k_page));
    // Only [0, 2 pages) is free below the region: a two-page hole starts at 0.
    REQUIRE(hole(tree, 2 * k_page, 0, 30 * k_page) == uintptr_t(0));
    // Three pages fit nowhere.
    REQUIRE(hole(tree, 3 * k_page, 0, 30 * k_page) == std::nullopt);
}

TEST_CASE("regions: a hole search among 50,000 one-page regions takes logarithmic steps")
{
    RegionTree tree;
    std::vector<std::unique_ptr<Region>> pool;
    // Back to back from the top down, as mmap places them: no gap but one far below.
    constexpr uintptr_t k_top = 0xB0000000;
    for (uintptr_t i = 1; i <= 50000; ++i)
        tree.insert(make_region(pool, k_top - i * k_page, k_top - (i - 1) * k_page));
    REQUIRE(tree.check());
    uint64_t before = steps().value;
    uintptr_t hole = tree.find_hole(k_page, 16 << 20, k_top).value_or(0);
    uint64_t cost = steps().value - before;
    CHECK(hole == k_top - 50001 * k_page);
    // An AVL tree of 50,000 nodes is at most 1.44 log2(50,000) ~ 23 high; the
    // search walks about two paths. A list walk would take 50,000 steps.
    CHECK(cost <= 100);
    before = steps().value;
    tree.insert(make_region(pool, hole, hole + k_page));
    CHECK(steps().value - before <= 100);
}
