// The lock-order graph: which lock has been taken while which other was
// held. Taking B while holding A adds the edge A -> B; if B -> ... -> A is
// already known, some other path takes them the other way round, and two CPUs
// running the two paths at once can each hold one lock and wait for the other
// forever. The graph finds that on the first run of the second path, without
// the two CPUs ever having to collide (FreeBSD's WITNESS and Linux's lockdep
// do the same, with far more machinery).
//
// Pure bookkeeping on small integers, with no locks, CPUs or console of its
// own: the spinlocks call it (kernel/kern/spinlock.cpp) and the host tests
// drive it directly (tests/unit/test_lock_order.cpp).
#pragma once
#include <stdint.h>

namespace toll::lockorder {

/// The most locks the graph tracks; a lock beyond that goes unchecked
/// (Graph::add returns k_untracked).
constexpr unsigned k_max_locks = 64;

/// A lock's node number in the graph; k_untracked when the graph is full.
constexpr unsigned k_untracked = ~0u;

/// An order inversion: @p acquiring (taken at @p acquiring_where) while
/// @p held (taken at @p held_where) is held, when earlier @p acquiring was
/// held while @p held was taken: first_where is where the first lock of that
/// earlier pair was taken, second_where where the second (a path with locks
/// in between names its first edge only).
struct Inversion {
    unsigned held;
    uintptr_t held_where;
    unsigned acquiring;
    uintptr_t acquiring_where;
    unsigned earlier_first;
    uintptr_t earlier_first_where;
    unsigned earlier_second;
    uintptr_t earlier_second_where;
};

/// The orders seen so far: an edge a -> b for each "a held while b was
/// taken", and where the first such pair was taken.
class Graph {
  public:
    /// A new node; k_untracked when the graph holds k_max_locks already.
    unsigned add();

    /// Records that @p later is being taken at @p later_where while
    /// @p earlier, taken at @p earlier_where, is held. Returns false and
    /// fills @p out, recording nothing, when that inverts a known order.
    bool record(unsigned earlier, uintptr_t earlier_where, unsigned later, uintptr_t later_where,
                Inversion* out);

    /// True when the edge @p earlier -> @p later is recorded: one test, made
    /// without the graph's lock by the spinlocks' fast path (edges are only
    /// ever added, so a stale answer is "no", and the caller then asks again
    /// under the lock).
    bool has_edge(unsigned earlier, unsigned later) const
    {
        return earlier < k_max_locks && later < k_max_locks && ((m_after[earlier] >> later) & 1);
    }

    /// True when @p to is known to come after @p from (a path of edges).
    bool ordered(unsigned from, unsigned to) const;

    /// The edges recorded so far.
    unsigned edges() const { return m_edges; }

    /// The nodes handed out so far.
    unsigned nodes() const { return m_nodes; }

  private:
    // m_after[a] has bit b set when a -> b is an edge.
    uint64_t m_after[k_max_locks] = {};
    // Where the first lock and the second of each edge's first sighting were taken.
    uintptr_t m_where[k_max_locks][k_max_locks][2] = {};
    unsigned m_nodes = 0;
    unsigned m_edges = 0;
};

} // namespace toll::lockorder
