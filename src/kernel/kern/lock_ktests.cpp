// In-kernel tests of the per-CPU block, the spinlocks and the lock-order
// checker. The checker's graph alone is tested on the host
// (tests/unit/test_lock_order.cpp); these prove that the locks feed it and
// that it reports through the kernel, and the destructive ones that a real
// violation ends the run with a PANIC naming the locks.
#include "kernel/arch/cpu.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/lock_reports_ktest.h"
#include "kernel/kern/spinlock.h"
#include "lib/string.h"

namespace toll {
namespace {

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
    LockReports reports;
    unsigned edges = lock_order_edges();
    for (int i = 0; i < 3; ++i) {
        SpinGuard ga(a);
        SpinGuard gb(b);
    }
    KEXPECT_EQ(reports.count(), 0u);
    KEXPECT_EQ(lock_order_edges(), edges + 1); // a -> b, recorded once
}

KTEST("kern.lock_order.an_inversion_names_both_locks")
{
    static Spinlock a("ktest.inverted_a");
    static Spinlock b("ktest.inverted_b");
    LockReports reports;
    {
        SpinGuard ga(a);
        SpinGuard gb(b);
    }
    KEXPECT_EQ(reports.count(), 0u);
    {
        SpinGuard gb(b);
        SpinGuard ga(a); // the other way round: two CPUs could deadlock
    }
    KEXPECT_EQ(reports.count(), 1u);
    KEXPECT(reports.names("lock order reversal"));
    KEXPECT(reports.names("takes ktest.inverted_a"));
    KEXPECT(reports.names("holding ktest.inverted_b"));
}

KTEST("kern.lock_order.an_inversion_through_a_third_lock_is_found")
{
    static Spinlock a("ktest.chain_a");
    static Spinlock b("ktest.chain_b");
    static Spinlock c("ktest.chain_c");
    LockReports reports;
    {
        SpinGuard ga(a);
        SpinGuard gb(b);
    }
    {
        SpinGuard gb(b);
        SpinGuard gc(c);
    }
    KEXPECT_EQ(reports.count(), 0u);
    {
        SpinGuard gc(c);
        SpinGuard ga(a); // a -> b -> c is known: c before a closes the cycle
    }
    KEXPECT_EQ(reports.count(), 1u);
    KEXPECT(reports.names("takes ktest.chain_a"));
    KEXPECT(reports.names("holding ktest.chain_c"));
}

KTEST("kern.lock_order.sleeping_with_a_spinlock_is_reported")
{
    static Spinlock held("ktest.held_across_sleep");
    LockReports reports;
    lock_order_check_sleep("sleeps");
    KEXPECT_EQ(reports.count(), 0u);
    {
        SpinGuard g(held);
        lock_order_check_sleep("sleeps");
    }
    KEXPECT_EQ(reports.count(), 1u);
    KEXPECT(reports.names("sleeps with spinlock ktest.held_across_sleep"));
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

KTEST("destructive.watchdog.a_cpu_stuck_on_a_spinlock_panics")
{
    // Held, as far as the lock can tell, by a CPU that will never let go:
    // this CPU spins with interrupts off until the watchdog speaks.
    static Spinlock stuck("destructive.stuck");
    stuck.plant_holder_for_test(static_cast<int>(this_cpu().id) + 1);
    stuck.lock();
    ktest::fail(__FILE__, __LINE__, "the stuck acquisition returned");
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

KTEST("kern.lock_order.locks_of_one_name_share_a_class")
{
    static Spinlock first("ktest.class_member");
    static Spinlock second("ktest.class_member");
    static Spinlock other("ktest.class_other");
    LockReports reports;
    unsigned nodes = lock_order_nodes();
    {
        SpinGuard g1(first);
        SpinGuard g2(other);
    }
    {
        SpinGuard g1(other);
        SpinGuard g2(second); // the class's order was learnt on first
    }
    KEXPECT_EQ(reports.count(), 1u);
    KEXPECT(reports.names("takes ktest.class_member"));
    KEXPECT_EQ(lock_order_nodes(), nodes + 2);
    KEXPECT_EQ(first.order_node(), second.order_node());
}

} // namespace toll
