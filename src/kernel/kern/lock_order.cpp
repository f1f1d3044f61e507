// The lock-order graph (lock_order.h): a bit matrix of edges, searched
// depth first for a path that would close a cycle.
#include "kernel/kern/lock_order.h"

namespace toll::lockorder {

static_assert(k_max_locks <= 64, "m_after holds one bit per node in a uint64_t");

unsigned Graph::add()
{
    if (m_nodes == k_max_locks)
        return k_untracked;
    return m_nodes++;
}

bool Graph::ordered(unsigned from, unsigned to) const
{
    if (from >= m_nodes || to >= m_nodes)
        return false;
    // Depth first over the nodes reachable from @p from, each visited once.
    uint64_t seen = 1ull << from;
    unsigned stack[k_max_locks];
    unsigned depth = 0;
    stack[depth++] = from;
    while (depth) {
        unsigned node = stack[--depth];
        uint64_t next = m_after[node] & ~seen;
        if (next & (1ull << to))
            return true;
        seen |= next;
        for (unsigned n = 0; next; ++n, next >>= 1)
            if (next & 1)
                stack[depth++] = n;
    }
    return false;
}

bool Graph::record(unsigned earlier, uintptr_t earlier_where, unsigned later, uintptr_t later_where,
                   Inversion* out)
{
    if (earlier >= m_nodes || later >= m_nodes || earlier == later)
        return true;
    if (m_after[earlier] & (1ull << later))
        return true; // known already: the common case, one test
    if (ordered(later, earlier)) {
        // Name the first edge of the path later -> ... -> earlier.
        unsigned second = earlier;
        if (!(m_after[later] & (1ull << earlier)))
            for (unsigned n = 0; n < m_nodes; ++n)
                if ((m_after[later] & (1ull << n)) && (n == earlier || ordered(n, earlier))) {
                    second = n;
                    break;
                }
        *out = Inversion{earlier, earlier_where,
                         later,   later_where,
                         later,   m_where[later][second][0],
                         second,  m_where[later][second][1]};
        return false;
    }
    m_after[earlier] |= 1ull << later;
    m_where[earlier][later][0] = earlier_where;
    m_where[earlier][later][1] = later_where;
    ++m_edges;
    return true;
}

} // namespace toll::lockorder
