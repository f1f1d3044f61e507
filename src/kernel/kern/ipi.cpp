// Inter-processor interrupts (kernel/kern/ipi.h): the reason word and the
// counters are the core's, the interrupt itself the port's.
#include "kernel/kern/ipi.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/thread.h"
#include <stdint.h>

namespace toll {
namespace {
TOLL_CPU_COUNTER(g_ipi_sent, "ipi.sent", CpuEvent::ipi_sent);
TOLL_CPU_COUNTER(g_ipi_received, "ipi.received", CpuEvent::ipi_received);
// How long ipi_stop_others waits for each CPU to take its stop, in spins.
constexpr uint64_t k_stop_wait_spins = 10'000'000;
void (*g_tlb_handler)();
} // namespace

void ipi_set_tlb_handler(void (*handler)())
{
    g_tlb_handler = handler;
}

void ipi_poll()
{
    Cpu& cpu = this_cpu();
    constexpr auto tlb = static_cast<unsigned>(IpiReason::tlb);
    if (!(__atomic_load_n(&cpu.ipi_pending, __ATOMIC_RELAXED) & tlb))
        return;
    __atomic_and_fetch(&cpu.ipi_pending, ~tlb, __ATOMIC_ACQUIRE);
    if (g_tlb_handler)
        g_tlb_handler();
}

void ipi_send(unsigned cpu_id, IpiReason why)
{
    Cpu& target = cpu_by_id(cpu_id);
    TOLL_ASSERT(target.online);
    // Release: whatever the sender wrote before asking (a thread put on the
    // target's run queue) is visible to the handler that sees the bit.
    __atomic_or_fetch(&target.ipi_pending, static_cast<unsigned>(why), __ATOMIC_RELEASE);
    {
        arch::InterruptsOff off; // the count lands on the CPU that sent it
        cpu_count(CpuEvent::ipi_sent);
    }
    arch::send_ipi(target);
}

void ipi_received()
{
    Cpu& cpu = this_cpu();
    cpu.ipi_received_at = arch::cycle_counter();
    cpu_count(CpuEvent::ipi_received);
    unsigned pending = __atomic_exchange_n(&cpu.ipi_pending, 0u, __ATOMIC_ACQUIRE);
    if (pending & static_cast<unsigned>(IpiReason::stop))
        arch::halt();
    if ((pending & static_cast<unsigned>(IpiReason::reschedule)) && cpu.current)
        cpu.current->need_resched = true;
    if ((pending & static_cast<unsigned>(IpiReason::tlb)) && g_tlb_handler)
        g_tlb_handler();
    if (pending & static_cast<unsigned>(IpiReason::call)) {
        auto fn = __atomic_exchange_n(&cpu.ipi_call_fn, nullptr, __ATOMIC_RELAXED);
        if (fn)
            fn(__atomic_load_n(&cpu.ipi_call_arg, __ATOMIC_RELAXED));
    }
}

void ipi_call(unsigned cpu_id, void (*fn)(void*), void* arg)
{
    Cpu& target = cpu_by_id(cpu_id);
    TOLL_ASSERT(cpu_id != this_cpu().id);
    __atomic_store_n(&target.ipi_call_arg, arg, __ATOMIC_RELAXED);
    __atomic_store_n(&target.ipi_call_fn, fn, __ATOMIC_RELAXED);
    ipi_send(cpu_id, IpiReason::call); // its release orders the two stores first
}

unsigned ipi_stop_others()
{
    unsigned self = this_cpu().id;
    for (unsigned i = 0; i < k_max_cpus; ++i)
        if (i != self && cpu_by_id(i).online)
            ipi_send(i, IpiReason::stop);
    // Each takes its pending bits in ipi_received before it halts; one that
    // spins with interrupts masked never does, and is not waited for long.
    unsigned stopped = 0;
    for (unsigned i = 0; i < k_max_cpus; ++i) {
        Cpu& cpu = cpu_by_id(i);
        if (i == self || !cpu.online)
            continue;
        for (uint64_t spin = 0; spin < k_stop_wait_spins; ++spin) {
            if (!(__atomic_load_n(&cpu.ipi_pending, __ATOMIC_ACQUIRE) &
                  static_cast<unsigned>(IpiReason::stop))) {
                ++stopped;
                break;
            }
            arch::cpu_relax();
        }
    }
    return stopped;
}

} // namespace toll
