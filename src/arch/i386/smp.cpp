// Starting the other CPUs of a PC: the ACPI MADT (or the MP table) lists
// their local APIC ids; the boot CPU copies the real-mode start code
// (smp_boot.S) below 1 MB and wakes each with INIT and two STARTUP IPIs;
// each then takes the kernel's page tables, a GDT, TSS and double-fault
// task of its own, the shared IDT, its local APIC and timer, and goes idle.
#include "arch/i386/acpi.h"
#include "arch/i386/apic.h"
#include "arch/i386/cpu.h"
#include "arch/i386/layout.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "kernel/proc/thread.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"
#include <stddef.h>

extern "C" char i386_ap_start[], i386_ap_start_end[];

/// What a starting CPU reads (offsets AP_* in layout.h): the first part with
/// paging off, through its physical address.
struct ApStart {
    uint32_t cr0, cr3, cr4, stack_top;
    toll::Cpu* cpu;
    uint32_t double_fault_stack_top; ///< read in C++ only
};
static_assert(offsetof(ApStart, cr0) == AP_CR0);
static_assert(offsetof(ApStart, cr3) == AP_CR3);
static_assert(offsetof(ApStart, cr4) == AP_CR4);
static_assert(offsetof(ApStart, stack_top) == AP_STACK);
static_assert(offsetof(ApStart, cpu) == AP_CPU);

// One at a time: the boot CPU waits for each CPU before filling it again.
extern "C" ApStart i386_ap_start_block;
ApStart i386_ap_start_block;

namespace toll::i386 {
namespace {

// How long the boot CPU waits for one to come online, in microseconds of the
// PIT: far more than QEMU or Bochs needs, even with the CPUs taking turns.
constexpr uint32_t k_online_wait_us = 1'000'000, k_online_poll_us = 1'000;

// The directory a starting CPU turns paging on with: the kernel's, plus
// the first 4 MB at 0 (a 4 MB page), where the start code runs. A page of
// the heap while CPUs start, given back afterwards.
uint32_t* g_start_directory;

bool start_one(uint32_t apic_id)
{
    Cpu* cpu = cpu_allocate();
    void* stack = cpu ? vm::kmalloc(proc::k_kstack_size) : nullptr;
    void* df_stack = stack ? vm::kmalloc(k_double_fault_stack_size) : nullptr;
    if (!df_stack) {
        kprintf("smp: no room to start apic id %u\n", apic_id);
        return false;
    }
    cpu->hw_id = apic_id;
    i386_ap_start_block.cr0 = read_cr0();
    i386_ap_start_block.cr3 = static_cast<uint32_t>(arch::virt_to_phys(g_start_directory));
    i386_ap_start_block.cr4 = read_cr4();
    i386_ap_start_block.stack_top = reinterpret_cast<uint32_t>(stack) + proc::k_kstack_size;
    i386_ap_start_block.cpu = cpu;
    i386_ap_start_block.double_fault_stack_top =
        reinterpret_cast<uint32_t>(df_stack) + k_double_fault_stack_size;
    unsigned before = cpus_online();
    apic_start_cpu(apic_id, AP_START_PHYS);
    for (uint32_t waited = 0; waited < k_online_wait_us; waited += k_online_poll_us) {
        if (cpus_online() > before)
            return true;
        pit_wait_us(k_online_poll_us);
    }
    kprintf("cpu%u: apic id %u never came online\n", cpu->id, apic_id);
    return false;
}

} // namespace
} // namespace toll::i386

/// Called by smp_boot.S on a started CPU, on its own stack, paging on.
extern "C" [[noreturn]] void i386_ap_main(toll::Cpu* cpu)
{
    using namespace toll;
    using namespace toll::i386;
    load_cr3(kernel_page_directory_phys()); // leave the start directory's low map
    gdt_init(*cpu);                         // from here this_cpu() is this Cpu
    idt_load();
    double_fault_init(cpu->id, i386_ap_start_block.double_fault_stack_top);
    // Under the isolated layouts a trap from user mode lands on this CPU's
    // own trampoline stack.
    if (layout_isolated())
        tss_set_kernel_stack(trampoline_stack_top(cpu->id));
    apic_init_cpu();
    apic_timer_start(arch::clock_hz());
    kprintf("cpu%u: online, apic id %u\n", cpu->id, apic_id());
    // The idle thread first: whoever sees this CPU online sees it too.
    proc::sched_init_secondary(i386_ap_start_block.stack_top - proc::k_kstack_size);
    cpu_mark_online(*cpu); // from here the boot CPU may reuse the start block
    proc::sched_idle_secondary();
}

namespace toll::arch {

bool user_threads_on_every_cpu()
{
    // Each CPU has its own trampoline block (trampoline.h), loaded page
    // directory (pmap.cpp) and FPU owner (fpu.cpp), and a change to a
    // space's tables reaches every CPU that has it loaded (shootdown.cpp).
    return true;
}

void cpus_start()
{
    using namespace toll::i386;
    if (!apic_present()) {
        kprintf("cpu0: online (boot CPU); no local APIC, so no other CPU\n");
        return;
    }
    uint32_t self = apic_id();
    this_cpu().hw_id = self;
    kprintf("cpu0: online, apic id %u (boot CPU)\n", self);
    MachineCpus m = find_cpus();
    if (m.ioapic_phys)
        kprintf("smp: %s lists %u CPUs, I/O APIC at 0x%x (unused: the 8259 serves the boot "
                "CPU)\n",
                m.source, m.count, m.ioapic_phys);
    else
        kprintf("smp: %s lists %u CPUs\n", m.source, m.count);
    if (m.count <= 1)
        return;
    // The start code below 1 MB (the direct map covers it), and the
    // directory it pages with.
    size_t code = static_cast<size_t>(i386_ap_start_end - i386_ap_start);
    memcpy(arch::phys_to_virt(AP_START_PHYS), i386_ap_start, code);
    g_start_directory = static_cast<uint32_t*>(vm::alloc_page());
    if (!g_start_directory) {
        kprintf("smp: no page for the start directory: one CPU\n");
        return;
    }
    auto* kernel = static_cast<const uint32_t*>(arch::phys_to_virt(kernel_page_directory_phys()));
    memcpy(g_start_directory, kernel, k_entries * sizeof *kernel);
    g_start_directory[0] = k_pte_present | k_pte_write | k_pde_large;
    unsigned listed = m.count < k_max_cpus ? m.count : k_max_cpus;
    for (unsigned i = 0; i < listed; ++i)
        if (m.apic_id[i] != self)
            start_one(m.apic_id[i]);
    // Every started CPU has left it for the kernel's directory (its first
    // act); one that never came online may still be on its way, so it
    // stays allocated then.
    if (cpus_online() == listed) {
        vm::free_page(g_start_directory);
        g_start_directory = nullptr;
    }
    kprintf("smp: %u of %u CPUs online\n", cpus_online(), m.count);
}

} // namespace toll::arch
