// In-kernel tests of the scheduler: sleep and wakeup, timer preemption of
// kernel threads that never yield, and fairness between equal threads.
#include "kernel/arch/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/thread.h"

namespace toll::proc {
namespace {

struct PingPong {
    int value = 0;
    bool done = false;
};

void ponger(void* arg)
{
    auto* pp = static_cast<PingPong*>(arg);
    while (pp->value < 10) {
        while (pp->value % 2 == 0)
            sleep_on(&pp->value);
        ++pp->value;
        wakeup(&pp->value);
    }
    pp->done = true;
    wakeup(&pp->done);
}

// Spinners run with interrupts on and never yield: only the clock can take
// the CPU away from them.
struct Spinner {
    volatile uint64_t count = 0;
    volatile bool stop = false;
};

void spin(void* arg)
{
    auto* s = static_cast<Spinner*>(arg);
    arch::interrupts_restore(true);
    while (!s->stop)
        s->count = s->count + 1;
    arch::interrupts_disable();
}

} // namespace

KTEST("sched.sleep_wakeup_ping_pong")
{
    PingPong pp;
    KEXPECT(thread_create_kernel("ponger", ponger, &pp, false) != nullptr);
    while (pp.value < 10) {
        ++pp.value; // odd: the ponger's turn
        wakeup(&pp.value);
        while (pp.value % 2 == 1)
            sleep_on(&pp.value);
    }
    while (!pp.done)
        sleep_on(&pp.done);
    KEXPECT_EQ(pp.value, 10);
}

KTEST("sched.timer_preempts_and_shares_fairly")
{
    Spinner a, b;
    Thread* ta = thread_create_kernel("spin-a", spin, &a, true);
    Thread* tb = thread_create_kernel("spin-b", spin, &b, true);
    KEXPECT(ta && tb);
    uint64_t start = ticks();
    // Sleep 20 ticks; the spinners share the CPU meanwhile.
    sleep_on(&a, start + 20);
    a.stop = true;
    b.stop = true;
    uint64_t ca = a.count, cb = b.count;
    uint64_t sa = ta->switches_in, sb = tb->switches_in;
    sleep_on(&b, ticks() + 2); // let both see stop and exit
    KEXPECT(ticks() >= start + 20);
    KEXPECT(ca > 0 && cb > 0); // both ran: the clock preempted the first one
    // Round robin with one-tick quanta: the two take turns, so each is
    // switched in as often as the other, give or take the turn in progress.
    // (Turns, not iterations: without --deterministic a tick is host time,
    // and a busy host can take the CPU from QEMU in the middle of a turn.)
    KEXPECT(sa >= 5 && sb >= 5);
    KEXPECT(sa <= sb + 1 && sb <= sa + 1);
    ktest::metric("sched.spinner_a_turns", sa, "count");
    ktest::metric("sched.spinner_b_turns", sb, "count");
    ktest::metric("sched.spinner_a_iterations", ca, "count");
    ktest::metric("sched.spinner_b_iterations", cb, "count");
}

} // namespace toll::proc

namespace toll::proc {

KTEST("destructive.lock_order.sleep_with_spinlock_panics")
{
    static Spinlock held("destructive.held_asleep");
    SpinGuard g(held);
    sleep_on(&held, ticks() + 1); // panics: a spinlock held across a sleep
    ktest::fail(__FILE__, __LINE__, "sleeping with a spinlock held did not panic");
}

} // namespace toll::proc
