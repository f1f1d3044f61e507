// Host tests of the lock-order graph (kernel/kern/lock_order.h): an order
// seen once is silent forever, its reverse is an inversion naming both locks
// and the earlier sighting, cycles through other locks are found, and a full
// graph stops tracking instead of overflowing.
#include "kernel/kern/lock_order.h"
#include <catch2/catch.hpp>

using toll::lockorder::Graph;
using toll::lockorder::Inversion;
using toll::lockorder::k_max_locks;
using toll::lockorder::k_untracked;

TEST_CASE("lock_order: an order seen again is recorded once and never reported")
{
    static Graph g;
    g = Graph{};
    unsigned a = g.add(), b = g.add();
    Inversion inv{};
    for (int i = 0; i < 3; ++i)
        REQUIRE(g.record(a, 0x100, b, 0x200, &inv));
    REQUIRE(g.edges() == 1);
    REQUIRE(g.ordered(a, b));
    REQUIRE_FALSE(g.ordered(b, a));
}

TEST_CASE("lock_order: the reverse of a known order is an inversion with both sightings")
{
    static Graph g;
    g = Graph{};
    unsigned a = g.add(), b = g.add();
    Inversion inv{};
    REQUIRE(g.record(a, 0x100, b, 0x200, &inv));
    REQUIRE_FALSE(g.record(b, 0x300, a, 0x400, &inv));
    CHECK(inv.held == b);
    CHECK(inv.held_where == 0x300);
    CHECK(inv.acquiring == a);
    CHECK(inv.acquiring_where == 0x400);
    CHECK(inv.earlier_first == a);
    CHECK(inv.earlier_first_where == 0x100);
    CHECK(inv.earlier_second == b);
    CHECK(inv.earlier_second_where == 0x200);
    // Nothing was recorded: the graph has no cycle.
    REQUIRE(g.edges() == 1);
    REQUIRE_FALSE(g.ordered(b, a));
}

TEST_CASE("lock_order: a cycle through other locks is found, naming the path's first edge")
{
    static Graph g;
    g = Graph{};
    unsigned a = g.add(), b = g.add(), c = g.add(), d = g.add();
    Inversion inv{};
    REQUIRE(g.record(a, 1, b, 2, &inv));
    REQUIRE(g.record(b, 3, c, 4, &inv));
    REQUIRE(g.record(c, 5, d, 6, &inv));
    REQUIRE(g.ordered(a, d));
    REQUIRE_FALSE(g.record(d, 7, a, 8, &inv));
    CHECK(inv.held == d);
    CHECK(inv.acquiring == a);
    CHECK(inv.earlier_first == a);
    CHECK(inv.earlier_second == b);
    CHECK(inv.earlier_first_where == 1);
    CHECK(inv.earlier_second_where == 2);
    // Unrelated orders stay allowed: d before a new lock e, e before b? b -> c -> d -> e.
    unsigned e = g.add();
    REQUIRE(g.record(d, 9, e, 10, &inv));
    REQUIRE_FALSE(g.record(e, 11, b, 12, &inv));
    REQUIRE(g.record(a, 13, e, 14, &inv)); // consistent with a -> ... -> e
}

TEST_CASE("lock_order: a full graph hands out untracked nodes that are never reported")
{
    static Graph g;
    g = Graph{};
    unsigned first = g.add();
    for (unsigned i = 1; i < k_max_locks; ++i)
        REQUIRE(g.add() == i);
    unsigned extra = g.add();
    REQUIRE(extra == k_untracked);
    REQUIRE(g.nodes() == k_max_locks);
    Inversion inv{};
    REQUIRE(g.record(first, 1, extra, 2, &inv));
    REQUIRE(g.record(extra, 3, first, 4, &inv));
    REQUIRE(g.edges() == 0);
    // The last tracked node still works: bit 63 of the matrix.
    REQUIRE(g.record(first, 5, k_max_locks - 1, 6, &inv));
    REQUIRE_FALSE(g.record(k_max_locks - 1, 7, first, 8, &inv));
}

TEST_CASE("lock_order: taking a lock after itself is no edge")
{
    static Graph g;
    g = Graph{};
    unsigned a = g.add();
    Inversion inv{};
    REQUIRE(g.record(a, 1, a, 2, &inv));
    REQUIRE(g.edges() == 0);
}
