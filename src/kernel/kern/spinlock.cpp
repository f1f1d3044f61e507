// Spinlocks and the lock-order checker that every acquisition passes.
#include "kernel/kern/spinlock.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/backtrace.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/lock_order.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll {
namespace {

// The graph, the node names, and the one lock that guards them; a raw
// test-and-set flag rather than a Spinlock, so that the checker does not
// check itself.
lockorder::Graph g_graph;
const char* g_node_names[lockorder::k_max_locks];
uint32_t g_graph_busy;
LockOrderHook g_hook;

void graph_lock()
{
    while (__atomic_exchange_n(&g_graph_busy, 1, __ATOMIC_ACQUIRE))
        arch::cpu_relax();
}

void graph_unlock()
{
    __atomic_store_n(&g_graph_busy, 0, __ATOMIC_RELEASE);
}

TOLL_PARAM(g_param_watchdog, "lock.watchdog",
           "a spinlock waiter panics after 2^N turns with interrupts off (default 26)");

// The watchdog's limit, read from the command line at the first wait.
uint64_t watchdog_spins()
{
    static uint64_t s_limit;
    if (!s_limit) {
        unsigned long shift = param_get_ulong("lock.watchdog", k_watchdog_shift);
        s_limit = uint64_t(1) << (shift < 8 ? 8 : shift > 40 ? 40 : shift);
    }
    return s_limit;
}

const char* node_name(unsigned node)
{
    return node < lockorder::k_max_locks && g_node_names[node] ? g_node_names[node] : "?";
}

// Assigns @p lock its class's node; the caller holds the graph lock.
unsigned node_locked(const char* name)
{
    // The same literal is usually the same pointer: try that first.
    for (unsigned n = 0; n < g_graph.nodes(); ++n)
        if (g_node_names[n] == name)
            return n;
    for (unsigned n = 0; n < g_graph.nodes(); ++n)
        if (g_node_names[n] && strcmp(g_node_names[n], name) == 0)
            return n;
    unsigned node = g_graph.add();
    if (node != lockorder::k_untracked)
        g_node_names[node] = name;
    return node;
}

// Records "held, then @p lock" for each held lock; reports the first
// inversion. The caller holds the graph lock; the report comes after it.
bool record_all(unsigned node, uintptr_t where, const LockClass* const* held,
                const uintptr_t* held_where, unsigned count, lockorder::Inversion* inv)
{
    if (!count)
        return true;
    for (unsigned i = 0; i < count; ++i)
        if (!g_graph.record(held[i]->order_node(), held_where[i], node, where, inv))
            return false;
    return true;
}

void report_inversion(unsigned cpu, const lockorder::Inversion& inv)
{
    lock_order_violation(
        "lock order reversal: cpu%u takes %s at %p while holding %s (taken at %p); "
        "earlier %s (taken at %p) was held when %s was taken at %p",
        cpu, node_name(inv.acquiring), reinterpret_cast<void*>(inv.acquiring_where),
        node_name(inv.held), reinterpret_cast<void*>(inv.held_where), node_name(inv.earlier_first),
        reinterpret_cast<void*>(inv.earlier_first_where), node_name(inv.earlier_second),
        reinterpret_cast<void*>(inv.earlier_second_where));
}

} // namespace

void lock_order_violation(const char* fmt, ...)
{
    char message[240];
    va_list args;
    va_start(args, fmt);
    lib::vsnformat(message, sizeof message, fmt, args);
    va_end(args);
    if (g_hook) {
        g_hook(message);
        return;
    }
    panic("%s", message);
}

unsigned lock_order_node(LockClass& lock)
{
    if (__atomic_load_n(&lock.m_order_assigned, __ATOMIC_ACQUIRE))
        return lock.m_order_node;
    graph_lock();
    if (!lock.m_order_assigned) {
        lock.m_order_node = node_locked(lock.name());
        __atomic_store_n(&lock.m_order_assigned, true, __ATOMIC_RELEASE);
    }
    graph_unlock();
    return lock.m_order_node;
}

// The slow part of lock_order_acquire: some order here is new (or the
// lock's node is not assigned yet), so the graph learns it, under its lock.
[[gnu::noinline]] static void lock_order_learn(Cpu& cpu, Spinlock& lock, uintptr_t where,
                                               unsigned held)
{
    unsigned node = lock_order_node(lock);
    const MutexesHeld* m = cpu.mutexes;
    unsigned mutexes = m ? m->depth : 0;
    if (mutexes > k_max_held_mutexes)
        mutexes = k_max_held_mutexes;
    const LockClass* spins[k_max_held_locks];
    uintptr_t spins_where[k_max_held_locks];
    unsigned n = 0;
    for (unsigned i = 0; i < held; ++i)
        if (cpu.held[i].lock) {
            spins[n] = cpu.held[i].lock;
            spins_where[n++] = cpu.held[i].where;
        }
    held = n;
    // The thread's sleeping locks came first, then this CPU's spinlocks.
    lockorder::Inversion inv{};
    graph_lock();
    bool ok = record_all(node, where, m ? m->lock : nullptr, m ? m->where : nullptr, mutexes, &inv);
    if (ok)
        ok = record_all(node, where, spins, spins_where, held, &inv);
    graph_unlock();
    if (!ok)
        report_inversion(cpu.id, inv);
}

void lock_order_acquire(Cpu& cpu, Spinlock& lock, uintptr_t where)
{
    auto held = static_cast<unsigned>(cpu.spin_depth - 1); // this acquisition is counted already
    if (held > k_max_held_locks)
        held = k_max_held_locks;
    unsigned node = lock.order_node();
    // Known orders are one test each, without the graph's lock (edges are
    // only ever added); a new one, or an unassigned node, is learnt.
    bool known = node != lockorder::k_untracked;
    for (unsigned i = 0; i < held; ++i) {
        const Spinlock* h = cpu.held[i].lock;
        if (!h)
            continue; // a slot whose acquisition was refused by a report
        if (h == &lock)
            lock_order_violation("lock order: cpu%u takes %s at %p, which it holds since %p",
                                 cpu.id, lock.name(), reinterpret_cast<void*>(where),
                                 reinterpret_cast<void*>(cpu.held[i].where));
        known = known && (h->order_node() == node || g_graph.has_edge(h->order_node(), node));
    }
    if (const MutexesHeld* m = cpu.mutexes)
        for (unsigned i = 0; i < m->depth && i < k_max_held_mutexes && known; ++i)
            known = m->lock[i]->order_node() == node ||
                    g_graph.has_edge(m->lock[i]->order_node(), node);
    if (!known)
        lock_order_learn(cpu, lock, where, held);
    if (held >= k_max_held_locks)
        lock_order_violation("lock order: cpu%u takes %s at %p holding %u spinlocks already",
                             cpu.id, lock.name(), reinterpret_cast<void*>(where), held);
    else
        cpu.held[held] = HeldLock{&lock, where};
}

void lock_order_acquire_sleeping(LockClass& lock, uintptr_t where, LockClass* const* held,
                                 const uintptr_t* held_where, unsigned count)
{
    arch::InterruptsOff off; // the graph's lock is also taken under spinlocks
    Cpu& cpu = this_cpu();
    for (unsigned i = 0; i < count; ++i)
        if (held[i] == &lock)
            lock_order_violation("lock order: cpu%u takes %s at %p, which it holds since %p",
                                 cpu.id, lock.name(), reinterpret_cast<void*>(where),
                                 reinterpret_cast<void*>(held_where[i]));
    unsigned node = lock_order_node(lock);
    if (!count)
        return;
    lockorder::Inversion inv{};
    graph_lock();
    bool ok = record_all(node, where, held, held_where, count, &inv);
    graph_unlock();
    if (!ok)
        report_inversion(cpu.id, inv);
}

void Spinlock::lock_slow(uintptr_t where, bool were)
{
    Cpu& cpu = this_cpu();
    uintptr_t depth = cpu.spin_depth++;
    // Checked before spinning: an inversion panics even when this run of it
    // would not have deadlocked. The usual cases are inline: the only lock
    // (nothing to check against: it is only noted), and the second, when
    // the order from the first is known already (one bit of the graph);
    // anything else (a sleeping lock held, a new order, a lock taken twice,
    // a node not assigned yet) goes through lock_order_acquire.
    unsigned node = order_node();
    bool mutexes = cpu.mutexes && cpu.mutexes->depth;
    if (depth == 0) {
        cpu.spin_interrupts_were = were;
        if (node != lockorder::k_untracked && !mutexes)
            cpu.held[0] = HeldLock{this, where};
        else
            lock_order_acquire(cpu, *this, where);
    } else if (const Spinlock* h = cpu.held[0].lock;
               depth == 1 && h && h != this && !mutexes && node != lockorder::k_untracked &&
               (h->order_node() == node || g_graph.has_edge(h->order_node(), node))) {
        cpu.held[1] = HeldLock{this, where};
    } else {
        lock_order_acquire(cpu, *this, where);
    }
    if (__builtin_expect(__atomic_exchange_n(&m_locked, 1, __ATOMIC_ACQUIRE) != 0, 0))
        spin(where);
    // Ours now: the statistics are written under the lock.
    ++m_acquisitions;
    m_holder_where = where;
    __atomic_store_n(&m_holder_cpu, static_cast<int>(cpu.id), __ATOMIC_RELAXED);
}

void Spinlock::spin(uintptr_t where)
{
    uint64_t spins = 0;
    do {
        // Wait with plain loads, so the line stays shared until it is free.
        while (__atomic_load_n(&m_locked, __ATOMIC_RELAXED)) {
            arch::cpu_relax();
            // The holder may be waiting, interrupts off, for this CPU to
            // take a TLB shootdown: take it here (kernel/kern/ipi.h).
            ipi_poll();
            if (++spins == watchdog_spins())
                watchdog(where, spins);
        }
    } while (__atomic_exchange_n(&m_locked, 1, __ATOMIC_ACQUIRE));
    ++m_contended;
    m_spins += spins;
}

void Spinlock::unlock_slow()
{
    Cpu& cpu = this_cpu();
    if (__atomic_load_n(&m_holder_cpu, __ATOMIC_RELAXED) != static_cast<int>(cpu.id))
        panic("spinlock %s released by cpu%u, which does not hold it (holder cpu%d)", name(),
              cpu.id, holder_cpu());
    // Locks may be released in any order: drop this one from the held list
    // (the last one taken, usually).
    uintptr_t depth = cpu.spin_depth;
    auto n = static_cast<unsigned>(depth < k_max_held_locks ? depth : k_max_held_locks);
    if (__builtin_expect(n && cpu.held[n - 1].lock == this, 1)) {
        cpu.held[n - 1].lock = nullptr; // its where is dead: the next acquisition writes both
    } else {
        for (unsigned i = 0; i < n; ++i)
            if (cpu.held[i].lock == this) {
                for (unsigned j = i; j + 1 < n; ++j)
                    cpu.held[j] = cpu.held[j + 1];
                cpu.held[n - 1] = HeldLock{};
                break;
            }
    }
    m_holder_where = 0;
    __atomic_store_n(&m_holder_cpu, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&m_locked, 0, __ATOMIC_RELEASE);
    cpu.spin_depth = depth - 1;
    if (depth == 1)
        arch::interrupts_restore(cpu.spin_interrupts_were);
}

void Spinlock::watchdog(uintptr_t where, uint64_t spins)
{
    uintptr_t frames[6];
    unsigned n = backtrace(frames, 6);
    char trace[6 * 20] = "";
    size_t used = 0;
    for (unsigned i = 0; i < n && used < sizeof trace; ++i)
        used += lib::snformat(trace + used, sizeof trace - used, " %p",
                              reinterpret_cast<void*>(frames[i]));
    panic("watchdog: cpu%u spun %llu turns with interrupts off waiting for %s (at %p), held by "
          "cpu%d since %p; backtrace%s",
          this_cpu().id, static_cast<unsigned long long>(spins), name(),
          reinterpret_cast<void*>(where), holder_cpu(), reinterpret_cast<void*>(m_holder_where),
          trace);
}

void Spinlock::plant_holder_for_test(int cpu)
{
    __atomic_store_n(&m_locked, 1, __ATOMIC_RELEASE);
    m_holder_where = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
    __atomic_store_n(&m_holder_cpu, cpu, __ATOMIC_RELAXED);
}

bool Spinlock::held_here() const
{
    return __atomic_load_n(&m_locked, __ATOMIC_RELAXED) &&
           holder_cpu() == static_cast<int>(this_cpu().id);
}

void lock_order_check_sleep_slow(const char* what)
{
    Cpu& cpu = this_cpu();
    const HeldLock& h = cpu.held[0];
    lock_order_violation("lock order: cpu%u %s with spinlock %s held (taken at %p)", cpu.id, what,
                         h.lock ? h.lock->name() : "?", reinterpret_cast<void*>(h.where));
}

void lock_order_set_hook_for_test(LockOrderHook hook)
{
    g_hook = hook;
}

unsigned lock_order_nodes()
{
    graph_lock();
    unsigned n = g_graph.nodes();
    graph_unlock();
    return n;
}

unsigned lock_order_edges()
{
    graph_lock();
    unsigned n = g_graph.edges();
    graph_unlock();
    return n;
}

} // namespace toll
