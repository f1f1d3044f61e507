// The double fault: a task gate to a TSS of its own, so that it runs on a
// fresh stack with the kernel's CR3 loaded whatever state the CPU was in, and
// reports a clean PANIC. A kernel stack overflow ends here: the page fault
// on the guard page cannot push its frame, and the CPU raises #DF.
// Intel SDM Vol. 3, 6.15 (interrupt 8) and 7.2.5 (task gates).
#include "arch/i386/cpu.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/trap.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "lib/string.h"

namespace toll::i386 {
namespace {

// The double-fault task: its TSS lives in the trampoline (the CPU reads it
// whichever CR3 is loaded), its stack in ordinary kernel memory (the TSS
// loads the kernel's CR3 first).
// One task and stack per CPU: two CPUs may double-fault at once. The boot
// CPU's stack is here; a started CPU's comes from the heap (smp.cpp).
TOLL_TRAMPOLINE_DATA Tss g_df_tss[k_max_cpus];
alignas(16) uint8_t g_df_stack[k_double_fault_stack_size];

constexpr uint8_t k_task_gate = 0x85; // present, DPL 0, type 5 (task gate)
constexpr uint8_t k_tss_available = 0x89;

extern "C" [[noreturn]] void i386_double_fault()
{
    // The faulting task's registers were saved in this CPU's TSS by the
    // switch (%fs came from the double-fault TSS: this CPU's Cpu).
    const Tss& t = tss_of(this_cpu().id);
    kprintf("double fault: eip %08x esp %08x ebp %08x eflags %08x\n", t.eip, t.esp, t.ebp,
            t.eflags);
    panic("double fault at eip 0x%x, esp 0x%x: kernel stack overflow or a fault while faulting",
          t.eip, t.esp);
}

} // namespace

void double_fault_init(unsigned cpu_id, uintptr_t stack_top)
{
    Tss& tss = g_df_tss[cpu_id];
    if (!stack_top)
        stack_top = reinterpret_cast<uintptr_t>(g_df_stack + sizeof g_df_stack);
    memset(&tss, 0, sizeof tss);
    tss.cr3 = kernel_page_directory_phys();
    tss.eip = reinterpret_cast<uint32_t>(i386_double_fault);
    tss.esp = tss.esp0 = static_cast<uint32_t>(stack_top);
    tss.ss = tss.ss0 = tss.ds = tss.es = k_kernel_ds;
    tss.fs = k_percpu_sel; // this CPU's: its GDT holds this task's descriptor
    tss.cs = k_kernel_cs;
    tss.eflags = 0x2; // interrupts off
    tss.iomap_base = sizeof(Tss);
    uint32_t base = reinterpret_cast<uint32_t>(&tss);
    uint32_t limit = sizeof(Tss) - 1;
    gdt_of(cpu_id)[k_gdt_double_fault_tss] = SegmentDescriptor{static_cast<uint16_t>(limit),
                                                               static_cast<uint16_t>(base & 0xFFFF),
                                                               static_cast<uint8_t>(base >> 16),
                                                               k_tss_available,
                                                               0,
                                                               static_cast<uint8_t>(base >> 24)};
    idt_set_task_gate(k_vec_double_fault, selector(k_gdt_double_fault_tss), k_task_gate);
}

} // namespace toll::i386
