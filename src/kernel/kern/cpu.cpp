// The Cpu table: one per processor the kernel may bring up, handed out in
// start-up order, each found afterwards through its own per-CPU register.
#include "kernel/kern/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"

namespace toll {
namespace {

Cpu g_cpus[k_max_cpus];
unsigned g_allocated; // Cpus handed out, the boot CPU's included
unsigned g_online;

uint64_t online_now()
{
    return cpus_online();
}
/// The CPUs online, for user programs that size their work by it (the stress
/// test starts one worker per CPU).
TOLL_GAUGE_COMPUTED(g_cpus_online, "kern.cpus_online", online_now);

} // namespace

Cpu& cpu_by_id(unsigned id)
{
    TOLL_ASSERT(id < k_max_cpus);
    return g_cpus[id];
}

unsigned cpus_online()
{
    return __atomic_load_n(&g_online, __ATOMIC_ACQUIRE);
}

Cpu& cpu_boot_prepare()
{
    TOLL_ASSERT(g_allocated == 0);
    g_allocated = 1;
    Cpu& boot = g_cpus[0];
    boot.self = &boot;
    boot.id = 0;
    return boot;
}

Cpu* cpu_allocate()
{
    // Only the boot CPU starts others, one at a time: no lock needed.
    if (g_allocated == k_max_cpus)
        return nullptr;
    Cpu& cpu = g_cpus[g_allocated];
    cpu.self = &cpu;
    cpu.id = g_allocated++;
    return &cpu;
}

void cpu_mark_online(Cpu& cpu)
{
    TOLL_ASSERT(&this_cpu() == &cpu);
    cpu.online = true;
    __atomic_add_fetch(&g_online, 1, __ATOMIC_RELEASE);
}

uint64_t cpu_counter_sum(CpuEvent event)
{
    // Each CPU writes only its own counts, without a lock; the sum is a
    // snapshot (on i386 a count another CPU is bumping could even be read
    // half old, half new, which no reader here needs to rule out).
    uint64_t sum = 0;
    for (const Cpu& cpu : g_cpus)
        sum += *static_cast<const volatile uint64_t*>(&cpu.events[static_cast<unsigned>(event)]);
    return sum;
}

} // namespace toll
