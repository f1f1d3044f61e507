// In-kernel tests of the scheduler: sleep and wakeup, timer preemption of
// kernel threads that never yield, fairness between equal threads, and with
// several CPUs: threads spread over them, follow their affinity, and wake
// each other across CPUs.
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/sched.h"
#include "kernel/proc/thread.h"

namespace toll::proc {
namespace {

struct PingPong {
    int value = 0;
    bool done = false;
};

// The ping-pong's turn, tested and slept on under one lock: the ponger may
// run on another CPU, whose wakeup could otherwise fall between the test of
// the turn and the sleep, and both ends would wait for each other forever.
Spinlock g_ping_turn("ktest.ping_turn");

void ponger(void* arg)
{
    auto* pp = static_cast<PingPong*>(arg);
    SpinGuard g(g_ping_turn);
    while (pp->value < 10) {
        while (pp->value % 2 == 0)
            sleep_on(&pp->value, g_ping_turn);
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
    volatile bool done = false;
};

// How long a test waits for another thread to get somewhere before it
// calls the wait a failure. Without --deterministic a tick is host time,
// and a loaded host may leave a vCPU's thread unscheduled for many of
// them: a test waits for what it wants to see, a tick at a time, and only
// a thread that never gets there runs into this bound.
constexpr uint64_t k_patience_ticks = 1000;

// Sleeps a tick at a time until @p ready() holds or k_patience_ticks have
// passed; returns whether it held.
template <typename Ready>
bool wait_until(Ready ready)
{
    uint64_t deadline = ticks() + k_patience_ticks;
    while (!ready() && ticks() < deadline) {
        static char s_channel; // nobody wakes it: the clock does
        sleep_on(&s_channel, ticks() + 1);
    }
    return ready();
}

// Waits for a thread to say it is finished, so that no thread outlives the
// test's stack frame it points into.
void wait_done(volatile bool& done)
{
    wait_until([&] { return done; });
}

void spin(void* arg)
{
    auto* s = static_cast<Spinner*>(arg);
    arch::interrupts_restore(true);
    while (!s->stop)
        s->count = s->count + 1;
    arch::interrupts_disable();
    s->done = true;
}

} // namespace

KTEST("sched.sleep_wakeup_ping_pong")
{
    PingPong pp;
    KEXPECT(thread_create_kernel("ponger", ponger, &pp, false) != nullptr);
    {
        SpinGuard g(g_ping_turn);
        while (pp.value < 10) {
            ++pp.value; // odd: the ponger's turn
            wakeup(&pp.value);
            while (pp.value % 2 == 1)
                sleep_on(&pp.value, g_ping_turn);
        }
        while (!pp.done)
            sleep_on(&pp.done, g_ping_turn);
    }
    KEXPECT_EQ(pp.value, 10);
}

KTEST("sched.timer_preempts_and_shares_fairly")
{
    Spinner a, b;
    // Both on the boot CPU (whose clock preempts them), whatever the CPU count.
    Thread* ta = thread_create_kernel_on("spin-a", spin, &a, true, 1u);
    Thread* tb = thread_create_kernel_on("spin-b", spin, &b, true, 1u);
    KEXPECT(ta && tb);
    uint64_t start = ticks();
    // Sleep 20 ticks; the spinners share the CPU meanwhile.
    sleep_on(&a, start + 20);
    a.stop = true;
    b.stop = true;
    uint64_t ca = a.count, cb = b.count;
    uint64_t sa = ta->switches_in, sb = tb->switches_in;
    wait_done(a.done); // both see stop and exit before a and b go
    wait_done(b.done);
    KEXPECT(a.done && b.done);
    KEXPECT(ticks() >= start + 20);
    KEXPECT(ca > 0 && cb > 0); // both ran: the clock preempted the first one
    // Round robin with one-tick quanta: the two take turns, so each is
    // switched in as often as the other, give or take the turn in progress.
    // (Turns, not iterations: without --deterministic a tick is host time,
    // and a busy host can take the CPU from QEMU in the middle of a turn.)
    // (The MLFQ's quanta grow to 4 ticks as the two drop: fewer turns.)
    uint64_t min_turns = sched_policy() == Policy::rr ? 5 : 3;
    KEXPECT(sa >= min_turns && sb >= min_turns);
    KEXPECT(sa <= sb + 1 && sb <= sa + 1);
    ktest::metric("sched.spinner_a_turns", sa, "count");
    ktest::metric("sched.spinner_b_turns", sb, "count");
    ktest::metric("sched.spinner_a_iterations", ca, "count");
    ktest::metric("sched.spinner_b_iterations", cb, "count");
}

// A spinner on the boot CPU next to a thread that sleeps a tick at a time:
// under the MLFQ the spinner uses up its allotments and drops to the
// bottom level, the sleeper never uses one up and stays on top; round
// robin has one level.
KTEST("sched.policy_levels")
{
    Spinner a;
    Thread* spinner = thread_create_kernel_on("spin-lv", spin, &a, true, 1u);
    KEXPECT(spinner != nullptr);
    uint32_t mine = sched_get_affinity(current());
    KEXPECT(sched_set_affinity(current(), 1u) == k_ok);
    // Seen at the bottom once within 60 ticks (a boost, every 50, lifts it
    // for a while); never below the top under round robin.
    unsigned spinner_level = 0, my_level = 0;
    for (int i = 0; i < 60 && spinner_level < 2; ++i) {
        sleep_on(&a, ticks() + 1);
        if (spinner->level > spinner_level)
            spinner_level = spinner->level;
        if (current()->level > my_level)
            my_level = current()->level;
    }
    a.stop = true;
    wait_done(a.done);
    KEXPECT(a.done);
    KEXPECT(sched_set_affinity(current(), mine) == k_ok);
    if (sched_policy() == Policy::mlfq) {
        KEXPECT_EQ(spinner_level, 2u);
        KEXPECT_EQ(my_level, 0u);
    } else {
        KEXPECT_EQ(spinner_level, 0u);
        KEXPECT_EQ(my_level, 0u);
    }
}

namespace {

// A thread that notes every CPU it runs on until told to stop: how many
// turns it took on each, and (published after the count) the CPU of its
// latest turn.
struct Roamer {
    volatile uint32_t seen = 0;
    uint32_t turns[k_max_cpus] = {};
    unsigned last = ~0u;
    volatile bool stop = false;
    volatile bool done = false;
};

void roam(void* arg)
{
    auto* r = static_cast<Roamer*>(arg);
    arch::interrupts_restore(true); // the clock must get through to end the test
    while (!r->stop) {
        unsigned cpu = sched_this_cpu();
        r->seen = r->seen | (1u << cpu);
        __atomic_add_fetch(&r->turns[cpu], 1, __ATOMIC_RELAXED);
        __atomic_store_n(&r->last, cpu, __ATOMIC_RELEASE);
        yield();
    }
    arch::interrupts_disable();
    r->done = true;
}

uint32_t turns_on(const Roamer& r, unsigned cpu)
{
    return __atomic_load_n(&r.turns[cpu], __ATOMIC_RELAXED);
}

// Waits until @p r has taken a turn on @p cpu, then until it has taken two
// more there, and checks it took none anywhere else in between: once a
// pinned thread has run where it is pinned, it runs nowhere else.
bool runs_only_on(const Roamer& r, unsigned cpu)
{
    if (!wait_until([&] { return __atomic_load_n(&r.last, __ATOMIC_ACQUIRE) == cpu; }))
        return false;
    uint32_t before[k_max_cpus];
    for (unsigned i = 0; i < k_max_cpus; ++i)
        before[i] = turns_on(r, i);
    if (!wait_until([&] { return turns_on(r, cpu) >= before[cpu] + 2; }))
        return false;
    for (unsigned i = 0; i < k_max_cpus; ++i)
        if (i != cpu && turns_on(r, i) != before[i])
            return false;
    return true;
}

unsigned bits(uint32_t mask)
{
    return static_cast<unsigned>(__builtin_popcount(mask));
}

} // namespace

// One yielding thread per CPU: between them they run on every CPU (the
// idle CPUs steal from the busy ones, or the placement picks them).
KTEST("sched.smp.threads_spread_over_cpus")
{
    // (With one CPU online: they all run there, and nowhere else.)
    unsigned n = bits(sched_online_mask());
    static Roamer r[k_max_cpus]; // written by the roamers until they are done
    for (unsigned i = 0; i < n; ++i)
        r[i] = Roamer{};
    for (unsigned i = 0; i < n; ++i)
        KEXPECT(thread_create_kernel("roamer", roam, &r[i], true) != nullptr);
    auto seen_by_all = [&] {
        uint32_t seen = 0;
        for (unsigned i = 0; i < n; ++i)
            seen |= r[i].seen;
        return seen;
    };
    wait_until([&] { return seen_by_all() == sched_online_mask(); });
    uint32_t seen = seen_by_all();
    for (unsigned i = 0; i < n; ++i)
        r[i].stop = true;
    for (unsigned i = 0; i < n; ++i)
        wait_done(r[i].done);
    ktest::metric("sched.smp.cpus_seen", bits(seen), "count");
    KEXPECT_EQ(seen, sched_online_mask());
}

// A thread pinned to the boot CPU, then to the last CPU, then to the boot
// CPU again, runs where it is told each time, and nowhere else once it got
// there. (Each step waits for the thread to get there, not a fixed number
// of ticks: on a loaded host the other CPU may not run at all for a while.)
KTEST("sched.smp.affinity_moves_a_thread")
{
    uint32_t online = sched_online_mask();
    // (With one CPU online "the last CPU" is the boot CPU.)
    unsigned last = 31 - static_cast<unsigned>(__builtin_clz(online));
    static Roamer r; // the roamer writes it until it is done, a wait that may give up
    r = Roamer{};
    Thread* t = thread_create_kernel_on("pinned", roam, &r, true, 1u);
    KEXPECT(t != nullptr);
    KEXPECT(runs_only_on(r, 0));
    KEXPECT_EQ(r.seen, 1u);
    KEXPECT(sched_set_affinity(t, 1u << last) == k_ok);
    KEXPECT_EQ(sched_get_affinity(t), 1u << last);
    KEXPECT(runs_only_on(r, last));
    KEXPECT(sched_set_affinity(t, 1u) == k_ok);
    KEXPECT(runs_only_on(r, 0));
    r.stop = true;
    wait_done(r.done);
    KEXPECT(r.done);
    // A mask of offline CPUs only is refused, as Linux refuses it.
    if (last + 1 < 32)
        KEXPECT(sched_set_affinity(current(), 1u << (last + 1)) == k_einval);
    KEXPECT(sched_set_affinity(current(), 0) == k_einval);
}

// Sleep and wakeup between a thread on the boot CPU and one on the last:
// every wakeup crosses CPUs, and none is lost. The turn is tested and slept
// on under one spinlock (sleep_on with a lock), so a wakeup from the other CPU
// cannot fall between the test and the sleep; with plain sleep_on it can,
// and the two would wait for each other forever.
KTEST("sched.smp.cross_cpu_wakeups_are_not_lost")
{
    uint32_t online = sched_online_mask();
    // (With one CPU online both ends are on it, and no wakeup crosses.)
    unsigned last = 31 - static_cast<unsigned>(__builtin_clz(online));
    uint32_t mine = sched_get_affinity(current());
    KEXPECT(sched_set_affinity(current(), 1u) == k_ok);
    uint64_t remote_before = cpu_counter_sum(CpuEvent::sched_wakeups_remote);
    static Spinlock turn("ktest.turn");
    static PingPong pp;
    pp = PingPong{};
    // 200 rounds, not 10: enough for a lost wakeup to show (as a hang).
    constexpr int k_rounds = 200;
    KEXPECT(thread_create_kernel_on(
                "far-ponger",
                [](void* arg) {
                    auto* p = static_cast<PingPong*>(arg);
                    turn.lock();
                    while (p->value < k_rounds) {
                        while (p->value % 2 == 0)
                            sleep_on(&p->value, turn);
                        ++p->value;
                        wakeup(&p->value);
                    }
                    p->done = true;
                    wakeup(&p->done);
                    turn.unlock();
                },
                &pp, false, 1u << last) != nullptr);
    turn.lock();
    while (pp.value < k_rounds) {
        ++pp.value;
        wakeup(&pp.value);
        while (pp.value % 2 == 1)
            sleep_on(&pp.value, turn);
    }
    while (!pp.done)
        sleep_on(&pp.done, turn);
    turn.unlock();
    uint64_t remote = cpu_counter_sum(CpuEvent::sched_wakeups_remote) - remote_before;
    KEXPECT(sched_set_affinity(current(), mine) == k_ok);
    KEXPECT_EQ(pp.value, k_rounds);
    // Each round puts one side to sleep and the other CPU wakes it (the
    // very first wakeup may find the ponger not asleep yet).
    if (last > 0)
        KEXPECT(remote >= static_cast<uint64_t>(k_rounds - 1));
    else
        KEXPECT_EQ(remote, 0u);
    ktest::metric("sched.smp.remote_wakeups", remote, "count");
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
