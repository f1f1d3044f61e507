// In-kernel tests of the wait queues and the sleeping locks: a waiter sleeps
// until woken and no longer, a wait gives up its condition lock while it
// sleeps, a mutex puts its contender to sleep, and the order checker sees
// mutexes as it sees spinlocks.
#include "kernel/arch/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/lock_reports_ktest.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/mutex.h"
#include "kernel/proc/thread.h"
#include "kernel/proc/waitqueue.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

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
        yield();
}

} // namespace

KTEST("kern.waitqueue.a_waiter_sleeps_until_woken")
{
    static WaitQueue queue("ktest.queue");
    Waiter w{&queue, nullptr};
    uint64_t sleeps = queue.sleeps();
    KEXPECT(thread_create_kernel("waiter", wait_for_flag, &w, false) != nullptr);
    yield_until([&] { return !queue.empty(); });
    KEXPECT(!queue.empty());
    KEXPECT(!w.done); // asleep: its condition is false
    KEXPECT_EQ(queue.sleeps(), sleeps + 1);
    yield();
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
    KEXPECT(thread_create_kernel("waiter", wait_for_flag, &w, false) != nullptr);
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
    KEXPECT_EQ(current()->mutexes.depth, 1u);
    KEXPECT(thread_create_kernel("contender", take_mutex, &c, false) != nullptr);
    for (int i = 0; i < 5; ++i)
        yield();
    KEXPECT(!c.got); // it sleeps: the mutex is ours
    KEXPECT_EQ(mutex.contended(), contended + 1);
    KEXPECT(mutex.sleeps() >= 1u);
    mutex.unlock();
    KEXPECT_EQ(current()->mutexes.depth, 0u);
    yield_until([&] { return c.got; });
    KEXPECT(c.got);
    KEXPECT(!mutex.held_by_current());
}

KTEST("kern.mutex.an_inversion_between_mutexes_is_reported")
{
    static Mutex a("ktest.mutex_a");
    static Mutex b("ktest.mutex_b");
    LockReports reports;
    {
        MutexGuard ga(a);
        MutexGuard gb(b);
    }
    KEXPECT_EQ(reports.count(), 0u);
    {
        MutexGuard gb(b);
        MutexGuard ga(a);
    }
    KEXPECT_EQ(reports.count(), 1u);
    KEXPECT(reports.names("takes ktest.mutex_a"));
    KEXPECT(reports.names("holding ktest.mutex_b"));
}

KTEST("kern.mutex.a_spinlock_after_a_mutex_is_ordered_too")
{
    static Mutex m("ktest.mutex_outer");
    static Spinlock s("ktest.spin_inner");
    LockReports reports;
    unsigned edges = lock_order_edges();
    {
        MutexGuard gm(m);
        SpinGuard gs(s); // mutex, then spinlock: the usual way round
    }
    KEXPECT_EQ(reports.count(), 0u);
    KEXPECT_EQ(lock_order_edges(), edges + 1);
    {
        SpinGuard gs(s);
        m.lock(); // a sleeping lock under a spinlock: reported
        m.unlock();
    }
    KEXPECT(reports.count() >= 1u);
    KEXPECT(reports.names("takes mutex ktest.mutex_outer"));
    KEXPECT(reports.names("with spinlock ktest.spin_inner held"));
}

} // namespace toll::proc

namespace toll::proc {
namespace {

constexpr unsigned k_cost_rounds = 1000;

struct HandOff {
    Mutex* mutex;
    unsigned rounds = 0;
    bool done = false;
};

// Takes and releases the mutex, yielding while holding it, so that each
// acquisition by the other thread finds it owned and sleeps.
void hand_off(void* arg)
{
    auto* h = static_cast<HandOff*>(arg);
    for (unsigned i = 0; i < h->rounds; ++i) {
        h->mutex->lock();
        yield();
        h->mutex->unlock();
    }
    h->done = true;
}

} // namespace

// The price of the locks, per acquisition and release, in cycles (in
// deterministic mode, instructions): a spinlock nobody else holds, one
// taken while another is held (a known order: one more check), a mutex
// nobody else holds, and a mutex that two threads hand back and forth, each
// acquisition finding it owned (a sleep, a wake-up and switches).
KTEST("kern.lock_cost")
{
    static Spinlock outer("ktest.cost_outer");
    static Spinlock lock("ktest.cost");
    static Mutex mutex("ktest.cost_mutex");
    {
        SpinGuard warm(lock); // the first acquisition assigns the node
    }
    uint64_t start = arch::cycle_counter();
    for (unsigned i = 0; i < k_cost_rounds; ++i) {
        lock.lock();
        lock.unlock();
    }
    uint64_t spin = arch::cycle_counter() - start;
    {
        SpinGuard g(outer);
        {
            SpinGuard warm(lock);
        }
        start = arch::cycle_counter();
        for (unsigned i = 0; i < k_cost_rounds; ++i) {
            lock.lock();
            lock.unlock();
        }
    }
    uint64_t nested = arch::cycle_counter() - start;
    {
        MutexGuard warm(mutex);
    }
    start = arch::cycle_counter();
    for (unsigned i = 0; i < k_cost_rounds; ++i) {
        mutex.lock();
        mutex.unlock();
    }
    uint64_t sleeping = arch::cycle_counter() - start;
    HandOff h{&mutex, k_cost_rounds / 10};
    uint64_t contended = mutex.contended();
    KEXPECT(thread_create_kernel("handoff", hand_off, &h, false) != nullptr);
    start = arch::cycle_counter();
    for (unsigned i = 0; i < h.rounds; ++i) {
        mutex.lock();
        yield();
        mutex.unlock();
    }
    while (!h.done)
        yield();
    uint64_t handed = arch::cycle_counter() - start;
    KEXPECT(mutex.contended() > contended); // the hand-off did contend
    KEXPECT(spin > 0 && sleeping > 0);
    ktest::metric("lock.spin_uncontended", spin / k_cost_rounds, "cycles");
    ktest::metric("lock.spin_nested", nested / k_cost_rounds, "cycles");
    ktest::metric("lock.mutex_uncontended", sleeping / k_cost_rounds, "cycles");
    ktest::metric("lock.mutex_handoff", handed / (2 * h.rounds), "cycles");
    ktest::metric("lock.mutex_handoff_contended", mutex.contended() - contended, "count");
}

} // namespace toll::proc
