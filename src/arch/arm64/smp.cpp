// Starting the other CPUs of QEMU's virt board: the device tree lists them
// (/cpus/cpu@N, reg = MPIDR affinity), PSCI CPU_ON starts each at
// arm64_secondary_entry (boot/entry.S) with the MMU off, and each then
// takes the boot CPU's translation tables, its own stack and per-CPU
// pointer, enables its GIC CPU interface and goes idle.
#include "arch/arm64/board.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/layout.h"
#include "arch/arm64/mmu.h"
#include "arch/arm64/timer.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "kernel/proc/thread.h"
#include "kernel/vm/kmalloc.h"
#include <stddef.h>

extern "C" char arm64_secondary_entry[];

namespace toll::arm64 {
namespace {

// Arm Power State Coordination Interface (DEN0022D), 5.1.4: CPU_ON, SMC64
// calling convention; 5.2.2: its return codes.
constexpr uint64_t k_psci_cpu_on = 0xC4000003;
constexpr int64_t k_psci_success = 0;
// MPIDR_EL1 (Arm ARM D13.2.86): Aff3 [39:32], Aff2 [23:16], Aff1 [15:8], Aff0 [7:0].
constexpr uint64_t k_mpidr_affinity = 0xFF00FFFFFFull;
// How long the boot CPU waits for one to come online, in spins: far more
// than QEMU needs, even with the vCPUs taking turns (-icount).
constexpr uint64_t k_online_wait_spins = 200'000'000;

/// What a starting CPU reads with the MMU off (offsets SS_* in layout.h).
struct SecondaryStart {
    uint64_t mair, tcr, ttbr, sctlr, stack_top, cpu;
};
static_assert(offsetof(SecondaryStart, mair) == SS_MAIR);
static_assert(offsetof(SecondaryStart, tcr) == SS_TCR);
static_assert(offsetof(SecondaryStart, ttbr) == SS_TTBR);
static_assert(offsetof(SecondaryStart, sctlr) == SS_SCTLR);
static_assert(offsetof(SecondaryStart, stack_top) == SS_STACK);
static_assert(offsetof(SecondaryStart, cpu) == SS_CPU);

// One at a time: the boot CPU waits for each before filling it again.
alignas(64) SecondaryStart g_start;

int64_t psci_call(uint64_t function, uint64_t a1, uint64_t a2, uint64_t a3)
{
    register uint64_t x0 asm("x0") = function;
    register uint64_t x1 asm("x1") = a1;
    register uint64_t x2 asm("x2") = a2;
    register uint64_t x3 asm("x3") = a3;
    if (board().psci == PsciConduit::hvc)
        asm volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
    else
        asm volatile("smc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
    return static_cast<int64_t>(x0);
}

uint64_t read_mpidr()
{
    uint64_t v;
    asm volatile("mrs %0, mpidr_el1" : "=r"(v));
    return v & k_mpidr_affinity;
}

// The new CPU reads g_start with its caches off, from memory: write it
// back there from this CPU's cache (DC CVAC, to the point of coherency).
void clean_to_memory(const void* p, size_t size)
{
    constexpr uintptr_t k_line = 64; // at most; CTR_EL0.DminLine says the truth
    for (uintptr_t a = reinterpret_cast<uintptr_t>(p) & ~(k_line - 1);
         a < reinterpret_cast<uintptr_t>(p) + size; a += k_line)
        asm volatile("dc cvac, %0" ::"r"(a) : "memory");
    asm volatile("dsb sy" ::: "memory");
}

bool start_one(uint64_t mpidr)
{
    Cpu* cpu = cpu_allocate();
    void* stack = cpu ? vm::kmalloc(proc::k_kstack_size) : nullptr;
    if (!stack) {
        kprintf("smp: no room to start mpidr 0x%llx\n", (unsigned long long)mpidr);
        return false;
    }
    cpu->hw_id = mpidr;
    asm volatile("mrs %0, mair_el1" : "=r"(g_start.mair));
    asm volatile("mrs %0, tcr_el1" : "=r"(g_start.tcr));
    asm volatile("mrs %0, sctlr_el1" : "=r"(g_start.sctlr));
    g_start.ttbr = kernel_l1_phys();
    g_start.stack_top = reinterpret_cast<uintptr_t>(stack) + proc::k_kstack_size;
    g_start.cpu = reinterpret_cast<uintptr_t>(cpu);
    clean_to_memory(&g_start, sizeof g_start);
    unsigned before = cpus_online();
    int64_t status = psci_call(k_psci_cpu_on, mpidr, arch::virt_to_phys(arm64_secondary_entry),
                               arch::virt_to_phys(&g_start));
    if (status != k_psci_success) {
        kprintf("cpu%u: mpidr 0x%llx did not start (PSCI CPU_ON returned %lld)\n", cpu->id,
                (unsigned long long)mpidr, (long long)status);
        return false;
    }
    for (uint64_t spin = 0; spin < k_online_wait_spins; ++spin) {
        if (cpus_online() > before)
            return true;
        arch::cpu_relax();
    }
    kprintf("cpu%u: mpidr 0x%llx never came online\n", cpu->id, (unsigned long long)mpidr);
    return false;
}

} // namespace
} // namespace toll::arm64

/// Called by entry.S on a CPU PSCI started, on its own stack, MMU on.
extern "C" [[noreturn]] void arm64_secondary_main(toll::Cpu* cpu)
{
    using namespace toll;
    // Leave the identity map, as mmu_init does on the boot CPU.
    asm volatile("msr ttbr0_el1, %0\n"
                 "isb\n"
                 "tlbi vmalle1\n"
                 "dsb nsh\n"
                 "isb" ::"r"(arm64::empty_user_table_phys())
                 : "memory");
    arm64::gic_init_cpu();
    arm64::timer_start_cpu(); // ticks once the idle loop lets interrupts in
    kprintf("cpu%u: online, mpidr 0x%llx\n", cpu->id, (unsigned long long)cpu->hw_id);
    // The idle thread first: whoever sees this CPU online sees it too.
    proc::sched_init_secondary(arm64::g_start.stack_top - proc::k_kstack_size);
    cpu_mark_online(*cpu); // from here the boot CPU may reuse g_start
    proc::sched_idle_secondary();
}

namespace toll::arch {

bool user_threads_on_every_cpu()
{
    // Each CPU has its own SP_EL1 trap stack, its own loaded table
    // (pmap.cpp) and FP/SIMD owner (fpu.cpp), and TLB maintenance is
    // broadcast to every CPU (mmu.cpp, asid.cpp).
    return true;
}

void cpus_start()
{
    const arm64::Board& b = arm64::board();
    uint64_t self = arm64::read_mpidr();
    this_cpu().hw_id = self;
    kprintf("cpu0: online, mpidr 0x%llx (boot CPU)\n", (unsigned long long)self);
    if (b.psci == arm64::PsciConduit::none) {
        if (b.cpu_count > 1)
            kprintf("smp: no PSCI in the device tree: one CPU of %u\n", b.cpu_count);
        return;
    }
    for (unsigned i = 0; i < b.cpu_count; ++i)
        if (b.cpu_mpidr[i] != self)
            arm64::start_one(b.cpu_mpidr[i]);
    kprintf("smp: %u of %u CPUs online\n", cpus_online(), b.cpu_count);
}

} // namespace toll::arch
