// Inter-processor interrupts reach the CPU they are sent to, and are counted
// on both ends.
#include "kernel/arch/cpu.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/ktest.h"

namespace toll {
namespace {

// How long the sender waits for the other CPU's handler, in spins: QEMU's
// -icount runs the vCPUs in turn, so the other one may need a time slice.
constexpr uint64_t k_ipi_wait_spins = 50'000'000;

uint64_t event_of(const Cpu& cpu, CpuEvent event)
{
    return *static_cast<const volatile uint64_t*>(&cpu.events[static_cast<unsigned>(event)]);
}

} // namespace

KTEST("kern.cpu.ipi_reaches_every_other_cpu")
{
    unsigned online = cpus_online();
    if (online < 2) {
        ktest::skip("one CPU online: no other CPU to interrupt");
        return;
    }
    Cpu& self = this_cpu();
    for (unsigned i = 0; i < online; ++i) {
        if (i == self.id)
            continue;
        Cpu& target = cpu_by_id(i);
        uint64_t received = event_of(target, CpuEvent::ipi_received);
        uint64_t sent = event_of(self, CpuEvent::ipi_sent);
        uint64_t mine = event_of(self, CpuEvent::ipi_received);
        ipi_send(i, IpiReason::reschedule);
        uint64_t spins = 0;
        while (event_of(target, CpuEvent::ipi_received) == received && spins < k_ipi_wait_spins) {
            arch::cpu_relax();
            ++spins;
        }
        KEXPECT_EQ(event_of(target, CpuEvent::ipi_received), received + 1);
        KEXPECT_EQ(event_of(self, CpuEvent::ipi_sent), sent + 1);
        KEXPECT_EQ(event_of(self, CpuEvent::ipi_received), mine); // it went there, not here
        // The handler took the reason bit.
        KEXPECT_EQ(__atomic_load_n(&target.ipi_pending, __ATOMIC_ACQUIRE), 0u);
    }
}

} // namespace toll
