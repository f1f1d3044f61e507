// The CPUs a port started: inter-processor interrupts reach the CPU they are
// sent to and are counted on both ends, every CPU's own clock ticks, and
// the event counters lose no add when every CPU bumps one at once.
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/ktest.h"

namespace toll {
namespace {

// How long the sender waits for the other CPU's handler, in spins: QEMU's
// -icount runs the vCPUs in turn, so the other one may need a time slice,
// and without it a loaded host may not run the other vCPU's thread for a
// good part of a second. The wait ends when the handler has run; only an
// IPI that never arrives spins this long (seconds).
constexpr uint64_t k_ipi_wait_spins = 500'000'000;

uint64_t event_of(const Cpu& cpu, CpuEvent event)
{
    return *static_cast<const volatile uint64_t*>(&cpu.events[static_cast<unsigned>(event)]);
}

// Sends @p target (this CPU, or another online one) a reschedule IPI and
// checks it arrived there and was counted on both ends; returns the cycles
// from the send to the handler.
uint64_t ipi_round(Cpu& target)
{
    Cpu& self = this_cpu();
    bool to_self = &target == &self;
    uint64_t received = event_of(target, CpuEvent::ipi_received);
    uint64_t sent = event_of(self, CpuEvent::ipi_sent);
    uint64_t mine = event_of(self, CpuEvent::ipi_received);
    bool were = arch::interrupts_disable();
    uint64_t start = arch::cycle_counter();
    ipi_send(target.id, IpiReason::reschedule);
    if (to_self) {
        // Masked here, so still pending; it is taken at the unmask.
        KEXPECT_EQ(event_of(self, CpuEvent::ipi_received), mine);
        arch::interrupts_restore(true);
    }
    uint64_t spins = 0;
    while (event_of(target, CpuEvent::ipi_received) == received && spins < k_ipi_wait_spins) {
        arch::cpu_relax();
        ++spins;
    }
    arch::interrupts_disable();
    arch::interrupts_restore(were);
    // At least ours: the other CPUs run the scheduler too and may send
    // their own wake-ups (to the target or here) at any time, so the counts
    // can only be bounded from below, and the pending word is theirs too.
    KEXPECT(event_of(target, CpuEvent::ipi_received) >= received + 1);
    KEXPECT(event_of(self, CpuEvent::ipi_sent) >= sent + 1);
    uint64_t arrived = *static_cast<volatile uint64_t*>(&target.ipi_received_at);
    KEXPECT(arrived > start);
    return arrived - start;
}

} // namespace

KTEST("kern.cpu.ipi_reaches_its_target")
{
    // Every other CPU in turn; with one CPU, this one (an IPI to itself).
    unsigned online = cpus_online();
    Cpu& self = this_cpu();
    if (online == 1) {
        ipi_round(self);
        return;
    }
    for (unsigned i = 0; i < online; ++i) {
        if (i == self.id)
            continue;
        uint64_t cycles = ipi_round(cpu_by_id(i));
        // From the send to the handler on the other CPU: in deterministic
        // mode instructions, those of every vCPU in between (QEMU's -icount
        // runs them in turn).
        if (i == 1)
            ktest::metric("kern.ipi.send_to_handler", cycles, "cycles");
    }
}

KTEST("kern.cpu.every_cpu_counts_its_own_clock_ticks")
{
    // Each other CPU's timer must fire and count on that CPU while this one
    // takes interrupts: at least one of this CPU's ticks, and at most many
    // (a loaded host may not run another vCPU's thread for a good part of
    // a second; a CPU whose clock is dead never ticks at all).
    constexpr unsigned k_min_ticks = 4, k_max_ticks = 1000;
    unsigned online = cpus_online();
    uint64_t before[k_max_cpus];
    for (unsigned i = 0; i < online; ++i)
        before[i] = event_of(cpu_by_id(i), CpuEvent::clock_ticks);
    auto all_ticked = [&] {
        for (unsigned i = 0; i < online; ++i)
            if (event_of(cpu_by_id(i), CpuEvent::clock_ticks) <= before[i])
                return false;
        return true;
    };
    bool were = arch::interrupts_disable();
    for (unsigned t = 0; t < k_max_ticks && (t < k_min_ticks || !all_ticked()); ++t) {
        arch::wait_for_interrupt(); // returns with interrupts on, after one
        arch::interrupts_disable();
    }
    arch::interrupts_restore(were);
    for (unsigned i = 0; i < online; ++i)
        KEXPECT(event_of(cpu_by_id(i), CpuEvent::clock_ticks) > before[i]);
}

namespace {

// Every online CPU adds to one Counter and to one plain word at once: the
// Counter's adds are atomic and must all arrive; the plain word's are a
// load and a store with a window between them, the race the Counter's
// atomic closes, and its losses show that the CPUs really ran together.
constexpr unsigned k_counter_rounds = 100000;
constexpr int k_plain_window = 4; // relaxes between the plain load and store

struct CounterRace {
    Counter counter{"ktest.counter_race", 0};
    unsigned long plain = 0; // bumped without an atomic, on purpose
    unsigned cpus = 0;       // CPUs taking part
    unsigned ready = 0;      // CPUs at the start line
    unsigned done = 0;       // CPUs finished
};

void counter_race(void* arg)
{
    auto* race = static_cast<CounterRace*>(arg);
    // All start together (an IPI may take a while to arrive: without the
    // start line the first CPU could be done before the last begins).
    __atomic_fetch_add(&race->ready, 1u, __ATOMIC_ACQ_REL);
    for (uint64_t s = 0;
         __atomic_load_n(&race->ready, __ATOMIC_ACQUIRE) < race->cpus && s < 4 * k_ipi_wait_spins;
         ++s)
        arch::cpu_relax();
    for (unsigned i = 0; i < k_counter_rounds; ++i) {
        race->counter.add();
        // Each add is its own read-modify-write in memory: the compiler may
        // not merge the loop's adds into one, which no CPU could race.
        asm volatile("" ::: "memory");
        unsigned long v = __atomic_load_n(&race->plain, __ATOMIC_RELAXED);
        for (int k = 0; k < k_plain_window; ++k)
            arch::cpu_relax();
        __atomic_store_n(&race->plain, v + 1, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&race->done, 1u, __ATOMIC_RELEASE);
}

} // namespace

namespace {

// Runs one race on every online CPU; false if some CPU never finished.
bool run_counter_race(CounterRace& race, unsigned cpus)
{
    race.counter.value = 0;
    race.plain = 0;
    race.ready = race.done = 0;
    race.cpus = cpus;
    unsigned self = this_cpu().id;
    for (unsigned i = 0; i < k_max_cpus; ++i)
        if (cpu_by_id(i).online && i != self)
            ipi_call(i, counter_race, &race);
    {
        arch::InterruptsOff off; // this CPU's share, like theirs, from an interrupt-free loop
        counter_race(&race);
    }
    for (uint64_t s = 0;
         __atomic_load_n(&race.done, __ATOMIC_ACQUIRE) < cpus && s < 4 * k_ipi_wait_spins; ++s)
        arch::cpu_relax();
    return __atomic_load_n(&race.done, __ATOMIC_ACQUIRE) == cpus;
}

// Races run until the plain word loses an add. A host that deschedules a
// vCPU's thread right after the start line can keep one race from
// overlapping at all; many in a row cannot all miss.
constexpr unsigned k_max_races = 32;

} // namespace

KTEST("kern.cpu.counters_lose_no_add_on_every_cpu")
{
    static CounterRace race; // the other CPUs write it after this frame could be gone
    unsigned cpus = 0;
    for (unsigned i = 0; i < k_max_cpus; ++i)
        cpus += cpu_by_id(i).online ? 1 : 0;
    const uint64_t total = uint64_t(k_counter_rounds) * cpus;
    uint64_t lost = 0;
    unsigned races = 0;
    while (races < k_max_races) {
        ++races;
        if (!run_counter_race(race, cpus)) {
            KEXPECT(false); // a CPU never finished its share
            return;
        }
        // Every race, overlapped or not, must count every add.
        KEXPECT_EQ(race.counter.read(), total);
        // The plain word can only come out short, never long.
        KEXPECT(race.plain <= total);
        lost = total - race.plain;
        // Alone it is exact, so one race says all there is to say.
        if (cpus == 1 || lost > 0)
            break;
    }
    // With others, its losses show the CPUs overlapped, which is what makes
    // the Counter's exact sum mean something.
    if (cpus == 1)
        KEXPECT_EQ(lost, 0u);
    else
        KEXPECT(lost > 0);
    ktest::metric("kern.counters.plain_adds_lost", lost, "count");
}

} // namespace toll
