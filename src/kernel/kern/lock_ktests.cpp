// In-kernel tests of the per-CPU block, the spinlocks and the lock-order
// checker. The checker's graph alone is tested on the host
// (tests/unit/test_lock_order.cpp); these prove that the locks feed it and
// that it reports through the kernel, and the destructive ones that a real
// violation ends the run with a PANIC naming the locks.
#include "kernel/arch/cpu.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/mutex.h"
#include "kernel/kern/spinlock.h"
#include "kernel/kern/waitqueue.h"
#include "kernel/proc/thread.h"
#include "lib/string.h"

namespace toll {
namespace {

char g_report[240];
unsigned g_reports;

void catch_report(const char* message)
{
    ++g_reports;
    size_t n = strnlen(message, sizeof g_report - 1);
    memcpy(g_report, message, n);
    g_report[n] = '\0';
}

bool report_names(const char* what)
{
    size_t n = strlen(what);
    for (const char* p = g_report; *p; ++p)
        if (strncmp(p, what, n) == 0)
            return true;
    return false;
}

// Watches for reports instead of panicking, for the lifetime of the guard.
class Catching {
  public:
    Catching()
    {
        g_reports = 0;
        g_report[0] = '\0';
        lock_order_set_hook_for_test(catch_report);
    }
    ~Catching() { lock_order_set_hook_for_test(nullptr); }
    Catching(const Catching&) = delete;
    Catching& operator=(const Catching&) = delete;
};

struct Waiter {
    WaitQueue* queue;
    Spinlock* held; // nullptr: wait_until on the queue's own lock
    bool flag = false;
    bool done = false;
};

void wait_for_flag(void* arg)
{
    auto* w = static_cast<Waiter*>(arg);
    if (w->held) {
        SpinGuard g(*w->held);
        while (!w->flag)
            w->queue->wait(*w->held);
    } else {
        w->queue->wait_until([w] { return w->flag; });
    }
    w->done = true;
}

struct Contender {
    Mutex* mutex;
    bool got = false;
};

void take_mutex(void* arg)
{
    auto* c = static_cast<Contender*>(arg);
    MutexGuard g(*c->mutex);
    c->got = true;
}

// Lets the other threads run until @p done() or a few hundred turns pass.
template <typename Done>
void yield_until(Done done)
{
    for (int i = 0; i < 500 && !done(); ++i)
        proc::yield();
}

} // namespace

KTEST("kern.cpu.per_cpu_pointer_is_this_cpu")
{
    Cpu& cpu = this_cpu();
    KEXPECT(cpu.self == &cpu);
    KEXPECT(&cpu_by_id(cpu.id) == &cpu);
    KEXPECT(cpu.online);
    KEXPECT_EQ(cpu.id, 0u); // the ktests run on the boot CPU
    KEXPECT(cpus_online() >= 1);
    KEXPECT(cpus_online() <= k_max_cpus);
    KEXPECT(cpu.current != nullptr);
    KEXPECT(cpu.idle != nullptr && cpu.idle != cpu.current);
    KEXPECT_EQ(cpu.interrupt_depth, 0u);
}

KTEST("kern.cpu.interrupts_are_counted_per_cpu")
{
    uint64_t before = cpu_counter_sum(CpuEvent::interrupts);
    uint64_t mine = this_cpu().events[static_cast<unsigned>(CpuEvent::interrupts)];
    bool were = arch::interrupts_disable();
    arch::wait_for_interrupt(); // returns with interrupts on, after one
    arch::interrupts_disable();
    arch::interrupts_restore(were);
    KEXPECT(this_cpu().events[static_cast<unsigned>(CpuEvent::interrupts)] > mine);
    KEXPECT(cpu_counter_sum(CpuEvent::interrupts) > before);
    KEXPECT_EQ(this_cpu().interrupt_depth, 0u);
}

KTEST("kern.spinlock.masks_interrupts_and_records_its_holder")
{
    static Spinlock outer("ktest.outer");
    static Spinlock inner("ktest.inner");
    bool were = arch::interrupts_disable();
    arch::interrupts_restore(true);
    uint64_t taken = outer.acquisitions();
    outer.lock();
    KEXPECT(outer.held_here());
    KEXPECT_EQ(outer.holder_cpu(), static_cast<int>(this_cpu().id));
    KEXPECT(outer.holder_where() != 0);
    KEXPECT_EQ(this_cpu().spin_depth, 1u);
    inner.lock();
    KEXPECT_EQ(this_cpu().spin_depth, 2u);
    KEXPECT(this_cpu().held[1].lock == &inner);
    inner.unlock();
    // The inner release must not turn interrupts back on under the outer lock.
    bool on_under_outer = arch::interrupts_disable();
    KEXPECT(!on_under_outer);
    outer.unlock();
    bool on_after = arch::interrupts_disable();
    KEXPECT(on_after);
    KEXPECT(!outer.held_here());
    KEXPECT_EQ(outer.holder_cpu(), -1);
    KEXPECT_EQ(outer.acquisitions(), taken + 1);
    KEXPECT_EQ(outer.contended(), 0u); // one CPU takes it: never contended
    KEXPECT_EQ(this_cpu().spin_depth, 0u);
    arch::interrupts_restore(were);
}

KTEST("kern.lock_order.a_consistent_order_is_silent")
{
    static Spinlock a("ktest.consistent_a");
    static Spinlock b("ktest.consistent_b");
    Catching catching;
    unsigned edges = lock_order_edges();
    for (int i = 0; i < 3; ++i) {
        SpinGuard ga(a);
        SpinGuard gb(b);
    }
    KEXPECT_EQ(g_reports, 0u);
    KEXPECT_EQ(lock_order_edges(), edges + 1); // a -> b, recorded once
}

KTEST("kern.lock_order.an_inversion_names_both_locks")
{
    static Spinlock a("ktest.inverted_a");
    static Spinlock b("ktest.inverted_b");
    Catching catching;
    {
        SpinGuard ga(a);
        SpinGuard gb(b);
    }
    KEXPECT_EQ(g_reports, 0u);
    {
        SpinGuard gb(b);
        SpinGuard ga(a); // the other way round: two CPUs could deadlock
    }
    KEXPECT_EQ(g_reports, 1u);
    KEXPECT(report_names("lock order reversal"));
    KEXPECT(report_names("takes ktest.inverted_a"));
    KEXPECT(report_names("holding ktest.inverted_b"));
}

KTEST("kern.lock_order.an_inversion_through_a_third_lock_is_found")
{
    static Spinlock a("ktest.chain_a");
    static Spinlock b("ktest.chain_b");
    static Spinlock c("ktest.chain_c");
    Catching catching;
    {
        SpinGuard ga(a);
        SpinGuard gb(b);
    }
    {
        SpinGuard gb(b);
        SpinGuard gc(c);
    }
    KEXPECT_EQ(g_reports, 0u);
    {
        SpinGuard gc(c);
        SpinGuard ga(a); // a -> b -> c is known: c before a closes the cycle
    }
    KEXPECT_EQ(g_reports, 1u);
    KEXPECT(report_names("takes ktest.chain_a"));
    KEXPECT(report_names("holding ktest.chain_c"));
}

KTEST("kern.lock_order.sleeping_with_a_spinlock_is_reported")
{
    static Spinlock held("ktest.held_across_sleep");
    Catching catching;
    lock_order_check_sleep("sleeps");
    KEXPECT_EQ(g_reports, 0u);
    {
        SpinGuard g(held);
        lock_order_check_sleep("sleeps");
    }
    KEXPECT_EQ(g_reports, 1u);
    KEXPECT(report_names("sleeps with spinlock ktest.held_across_sleep"));
}

KTEST("destructive.lock_order.inversion_panics")
{
    static Spinlock first("destructive.first");
    static Spinlock second("destructive.second");
    {
        SpinGuard g1(first);
        SpinGuard g2(second);
    }
    SpinGuard g2(second);
    SpinGuard g1(first); // panics: lock order reversal
    ktest::fail(__FILE__, __LINE__, "the inverted acquisition did not panic");
}

KTEST("destructive.lock_order.recursion_panics")
{
    static Spinlock once("destructive.once");
    SpinGuard g1(once);
    SpinGuard g2(once); // panics before it spins on itself
    ktest::fail(__FILE__, __LINE__, "the recursive acquisition did not panic");
}

} // namespace toll

namespace toll {

KTEST("kern.cpu.every_started_cpu_is_online_and_idle")
{
    unsigned online = cpus_online();
    for (unsigned i = 0; i < online; ++i) {
        Cpu& cpu = cpu_by_id(i);
        KEXPECT(cpu.online);
        KEXPECT(cpu.self == &cpu);
        KEXPECT_EQ(cpu.id, i);
        KEXPECT(cpu.idle != nullptr);
        if (i > 0)
            KEXPECT(cpu.current == cpu.idle); // nothing runs on the others yet
        for (unsigned j = 0; j < i; ++j)
            KEXPECT(cpu_by_id(j).hw_id != cpu.hw_id);
    }
    for (unsigned i = online; i < k_max_cpus; ++i)
        KEXPECT(!cpu_by_id(i).online);
}

} // namespace toll

namespace toll {

KTEST("kern.waitqueue.a_waiter_sleeps_until_woken")
{
    static WaitQueue queue("ktest.queue");
    Waiter w{&queue, nullptr};
    uint64_t sleeps = queue.sleeps();
    KEXPECT(proc::thread_create_kernel("waiter", wait_for_flag, &w, false) != nullptr);
    yield_until([&] { return !queue.empty(); });
    KEXPECT(!queue.empty());
    KEXPECT(!w.done); // asleep: its condition is false
    KEXPECT_EQ(queue.sleeps(), sleeps + 1);
    proc::yield();
    KEXPECT(!w.done); // nothing woke it: it is not run again
    {
        SpinGuard g(queue.lock());
        w.flag = true; // the condition changes under the queue's lock
        KEXPECT(queue.wake_one_locked());
    }
    yield_until([&] { return w.done; });
    KEXPECT(w.done);
    KEXPECT(queue.empty());
    KEXPECT(!queue.wake_one()); // nobody left
}

KTEST("kern.waitqueue.wait_releases_the_condition_lock_while_asleep")
{
    static WaitQueue queue("ktest.cond_queue");
    static Spinlock cond("ktest.cond");
    Waiter w{&queue, &cond};
    KEXPECT(proc::thread_create_kernel("waiter", wait_for_flag, &w, false) != nullptr);
    yield_until([&] { return !queue.empty(); });
    KEXPECT(!queue.empty());
    // Held across the sleep, this would be a recursion report or a hang.
    KEXPECT(cond.holder_cpu() == -1);
    {
        SpinGuard g(cond);
        w.flag = true;
        KEXPECT_EQ(queue.wake_all(), 1u);
    }
    yield_until([&] { return w.done; });
    KEXPECT(w.done);
    KEXPECT(cond.holder_cpu() == -1); // the waiter took it again and released it
}

KTEST("kern.mutex.a_contender_sleeps_until_the_owner_releases")
{
    static Mutex mutex("ktest.mutex");
    Contender c{&mutex};
    uint64_t contended = mutex.contended();
    mutex.lock();
    KEXPECT(mutex.held_by_current());
    KEXPECT_EQ(proc::current()->mutex_depth, 1u);
    KEXPECT(proc::thread_create_kernel("contender", take_mutex, &c, false) != nullptr);
    for (int i = 0; i < 5; ++i)
        proc::yield();
    KEXPECT(!c.got); // it sleeps: the mutex is ours
    KEXPECT_EQ(mutex.contended(), contended + 1);
    KEXPECT(mutex.sleeps() >= 1u);
    mutex.unlock();
    KEXPECT_EQ(proc::current()->mutex_depth, 0u);
    yield_until([&] { return c.got; });
    KEXPECT(c.got);
    KEXPECT(!mutex.held_by_current());
}

KTEST("kern.mutex.an_inversion_between_mutexes_is_reported")
{
    static Mutex a("ktest.mutex_a");
    static Mutex b("ktest.mutex_b");
    Catching catching;
    {
        MutexGuard ga(a);
        MutexGuard gb(b);
    }
    KEXPECT_EQ(g_reports, 0u);
    {
        MutexGuard gb(b);
        MutexGuard ga(a);
    }
    KEXPECT_EQ(g_reports, 1u);
    KEXPECT(report_names("takes ktest.mutex_a"));
    KEXPECT(report_names("holding ktest.mutex_b"));
}

KTEST("kern.mutex.a_spinlock_after_a_mutex_is_ordered_too")
{
    static Mutex m("ktest.mutex_outer");
    static Spinlock s("ktest.spin_inner");
    Catching catching;
    unsigned edges = lock_order_edges();
    {
        MutexGuard gm(m);
        SpinGuard gs(s); // mutex, then spinlock: the usual way round
    }
    KEXPECT_EQ(g_reports, 0u);
    KEXPECT_EQ(lock_order_edges(), edges + 1);
    {
        SpinGuard gs(s);
        m.lock(); // a sleeping lock under a spinlock: reported
        m.unlock();
    }
    KEXPECT(g_reports >= 1u);
    KEXPECT(report_names("takes mutex ktest.mutex_outer"));
    KEXPECT(report_names("with spinlock ktest.spin_inner held"));
}

KTEST("kern.lock_order.locks_of_one_name_share_a_class")
{
    static Spinlock first("ktest.class_member");
    static Spinlock second("ktest.class_member");
    static Spinlock other("ktest.class_other");
    Catching catching;
    unsigned nodes = lock_order_nodes();
    {
        SpinGuard g1(first);
        SpinGuard g2(other);
    }
    {
        SpinGuard g1(other);
        SpinGuard g2(second); // the class's order was learnt on first
    }
    KEXPECT_EQ(g_reports, 1u);
    KEXPECT(report_names("takes ktest.class_member"));
    KEXPECT_EQ(lock_order_nodes(), nodes + 2);
    KEXPECT_EQ(first.order_node(), second.order_node());
}

} // namespace toll
