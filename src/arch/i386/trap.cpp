// The IDT and i386_trap(), where every trap, interrupt and system call lands:
// exceptions from user mode kill the program alone; from the kernel they are
// either a recoverable fault in copyin/copyout or a PANIC with a register dump.
#include "arch/i386/trap.h"
#include "arch/i386/apic.h"
#include "arch/i386/asm_offsets.h"
#include "arch/i386/cpu.h"
#include "arch/i386/io.h"
#include "arch/i386/pic.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/uart.h"
#include "arch/i386/walks.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/profile.h"
#include "kernel/proc/fault.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/vm/vmspace.h"

extern "C" char trap_stubs[], isolated_trap_stubs[], isolated_syscall_entry[];

namespace toll::i386 {
namespace {

constexpr unsigned k_stub_size = 16; // each stub is .balign 16 in trap_entry.S

alignas(8) TOLL_TRAMPOLINE_DATA Gate g_idt[256]; // in the trampoline: read on every trap

TOLL_COUNTER(g_traps_total, "cpu.traps");
TOLL_COUNTER(g_syscalls, "cpu.syscalls");
TOLL_COUNTER(g_page_faults, "cpu.traps.page_fault");
TOLL_COUNTER(g_gp_faults, "cpu.traps.general_protection");
TOLL_COUNTER(g_timer_irqs, "cpu.irq.timer");
TOLL_COUNTER(g_serial_irqs, "cpu.irq.serial");
TOLL_COUNTER(g_other_traps, "cpu.traps.other");

const char* const k_exception_names[32] = {"divide error",
                                           "debug",
                                           "NMI",
                                           "breakpoint",
                                           "overflow",
                                           "bound range",
                                           "invalid opcode",
                                           "device not available",
                                           "double fault",
                                           "coprocessor overrun",
                                           "invalid TSS",
                                           "segment not present",
                                           "stack fault",
                                           "general protection",
                                           "page fault",
                                           "reserved",
                                           "x87 FPU error",
                                           "alignment check",
                                           "machine check",
                                           "SIMD FP exception",
                                           "virtualization",
                                           "control protection",
                                           "reserved",
                                           "reserved",
                                           "reserved",
                                           "reserved",
                                           "reserved",
                                           "reserved",
                                           "reserved",
                                           "reserved",
                                           "security",
                                           "reserved"};

// What each exception a user program can cause is, for the core's fault
// policy (proc::user_fault picks the signal and si_code).
proc::FaultKind fault_kind(unsigned vector)
{
    using proc::FaultKind;
    switch (vector) {
    case k_vec_divide:
    case k_vec_x87:
    case k_vec_simd:
        return FaultKind::arithmetic;
    case k_vec_debug:
    case k_vec_breakpoint:
        return FaultKind::breakpoint;
    case k_vec_invalid_opcode:
    case k_vec_device_not_available:
        return FaultKind::illegal;
    case k_vec_alignment:
        return FaultKind::alignment;
    case k_vec_page_fault:
        return FaultKind::page;
    default:
        return FaultKind::protection;
    }
}

ExceptionHook g_exception_hooks[32];

// Intel SDM Vol. 3, 2.3: EFLAGS.TF (bit 8), the trap flag: a debug
// exception after every instruction. Vol. 3, 18.2.3: DR6.BS (bit 14) says a
// debug exception was that single step.
constexpr uint32_t k_eflags_tf = 1u << 8;
constexpr uint32_t k_dr6_bs = 1u << 14;
// Intel SDM Vol. 2, PUSH: opcode 50+rd, EBP is register 5.
constexpr uint8_t k_push_ebp = 0x55;

uint32_t read_dr6()
{
    uint32_t v;
    asm volatile("movl %%dr6, %0" : "=r"(v));
    return v;
}

// The counting profiler's step (kern/profile.h): a single-step trap counts
// the kernel instruction it follows. One that follows the IRET into user
// mode (the frame's TF clear: the program did not set it) is the last of a
// stepped trap, and ignored. Returns whether the trap was the profiler's.
bool profile_step(arch::TrapFrame& f)
{
    uint32_t dr6 = read_dr6();
    if (!(dr6 & k_dr6_bs))
        return false;
    if (f.from_user()) {
        if (f.eflags & k_eflags_tf)
            return false; // the program's own single step: SIGTRAP
    } else if (profile_counting()) {
        profile_count(f.eip);
        // A function's first instruction (push %ebp: the kernel keeps frame
        // pointers) is a call: the return address is on top of the stack,
        // where the frame would have held the user's ESP.
        if (*reinterpret_cast<const uint8_t*>(f.eip) == k_push_ebp)
            profile_count_call(f.eip, *reinterpret_cast<const uint32_t*>(&f.user_esp));
    }
    asm volatile(
        "movl %0, %%dr6" ::"r"(dr6 & ~k_dr6_bs)); // Vol. 3, 18.2.3: never cleared by the CPU
    return true;
}

// While the profiler counts, every trap's kernel code is stepped from here
// on: TF set in EFLAGS (the gate cleared it) until the IRET reloads the
// interrupted EFLAGS. Out of line: the common path pays one test.
[[gnu::noinline, gnu::cold]] void profile_step_trap(const arch::TrapFrame& f)
{
    if (f.vector != k_vec_debug)
        asm volatile("pushfl; orl %0, (%%esp); popfl" ::"i"(k_eflags_tf) : "memory", "cc");
}

} // namespace

} // namespace toll::i386

namespace toll::arch {
// Stepping needs the trap flag to stay in the kernel's own address space:
// in the isolated layouts the way out runs through the trampoline, where a
// step would trap on the user's page directory.
bool profile_can_step()
{
    return !i386::layout_isolated();
}

void profile_step_stop()
{
    asm volatile("pushfl; andl %0, (%%esp); popfl" ::"i"(~i386::k_eflags_tf) : "memory", "cc");
}
} // namespace toll::arch

namespace toll::i386 {

const char* exception_name(unsigned vector)
{
    return vector < 32 ? k_exception_names[vector] : "interrupt";
}

void set_exception_hook(unsigned vector, ExceptionHook hook)
{
    g_exception_hooks[vector] = hook;
}

void idt_set_gate(unsigned vector, uint32_t handler, bool user_callable)
{
    g_idt[vector] = interrupt_gate(
        handler, static_cast<uint8_t>(k_gate_interrupt32 | (user_callable ? k_gate_dpl3 : 0)));
}

void idt_set_task_gate(unsigned vector, uint16_t tss_selector, uint8_t type_attr)
{
    g_idt[vector] = Gate{0, tss_selector, 0, type_attr, 0};
}

uint32_t trap_stub_address(unsigned vector)
{
    // The isolated layouts' stubs lead to their short path from user mode;
    // vm.walks=count takes the general path, which counts walks.
    char* table = layout_isolated() && !i386_walks_counting ? isolated_trap_stubs : trap_stubs;
    return reinterpret_cast<uint32_t>(table) + vector * k_stub_size;
}

void idt_init()
{
    for (unsigned v = 0; v < 256; ++v)
        idt_set_gate(v, trap_stub_address(v), false);
    // User mode may raise these three itself: int3, into, and int $0x80.
    idt_set_gate(k_vec_breakpoint, trap_stub_address(k_vec_breakpoint), true);
    idt_set_gate(k_vec_overflow, trap_stub_address(k_vec_overflow), true);
    // The isolated layouts enter system calls through a path of their own
    // that knows the trap came from 32-bit user mode (trap_entry.S).
    idt_set_gate(k_vec_syscall,
                 layout_isolated() && !i386_walks_counting
                     ? reinterpret_cast<uint32_t>(isolated_syscall_entry)
                     : trap_stub_address(k_vec_syscall),
                 true);
    if (profile_booted())
        set_exception_hook(k_vec_debug, profile_step);
    idt_load();
}

void idt_load()
{
    TableRegister idtr{sizeof g_idt - 1, reinterpret_cast<uint32_t>(g_idt)};
    asm volatile("lidt %0" : : "m"(idtr));
}

void dump_frame(const arch::TrapFrame& f)
{
    kprintf("trap %u (%s), error 0x%x, eip %08x cs %04x eflags %08x cr2 %08x cr3 %08x\n", f.vector,
            exception_name(f.vector), f.error, f.eip, f.cs, f.eflags, read_cr2(), read_cr3());
    kprintf("eax %08x ebx %08x ecx %08x edx %08x esi %08x edi %08x ebp %08x\n", f.eax, f.ebx, f.ecx,
            f.edx, f.esi, f.edi, f.ebp);
    if (f.from_user())
        kprintf("user esp %08x ss %04x\n", f.user_esp, f.user_ss);
    else
        kprintf("kernel esp %08x\n", reinterpret_cast<uint32_t>(&f.user_esp));
}

namespace {

void kernel_exception(arch::TrapFrame& f)
{
    if (f.vector == k_vec_page_fault && fixup_user_access(f))
        return; // a bad user pointer in copyin/copyout: it returns EFAULT
    dump_frame(f);
    panic("kernel %s (trap %u) at eip 0x%x", exception_name(f.vector), f.vector, f.eip);
}

// Out of line, so that the system call path through i386_trap stays short.
[[gnu::noinline]] void user_exception(arch::TrapFrame& f)
{
    if (f.vector == k_vec_page_fault) {
        proc::user_page_fault(f.vector, "page fault", f.eip, read_cr2(),
                              (f.error & k_pf_write) != 0, (f.error & k_pf_present) != 0);
        return;
    }
    proc::user_fault(
        proc::UserFault{fault_kind(f.vector), f.vector, exception_name(f.vector), f.eip});
}

void interrupt(unsigned irq);

// A trap from virtual-8086 mode through the kernel's IDT. The kernel's own
// BIOS calls run under the vm86 monitor's tables, so this is a program that
// got into the mode itself: a ring-3 iret may not set EFLAGS.VM (Intel SDM
// Vol. 2, IRET: VM is loaded only at CPL 0), but QEMU's TCG lets it. It is
// the program's fault, whatever the vector: an interrupt is still serviced,
// then the program ends. Nothing is mapped below k_user_space_floor, so its
// first instruction fetch already traps here.
[[noreturn]] void vm86_intruder(arch::TrapFrame& f)
{
    if (f.vector >= k_irq_base && f.vector < k_irq_base + 16)
        interrupt(f.vector - k_irq_base);
    proc::terminate_by_fault(TOLL_SIGSEGV, f.vector, "entered virtual-8086 mode", f.eip, 0);
}

void interrupt(unsigned irq)
{
    if ((irq == 7 || irq == 15) && pic_is_spurious(irq))
        return;
    InterruptScope in_interrupt;
    pic_eoi(irq);
    if (irq == k_irq_timer) {
        g_timer_irqs.add();
        proc::sched_clock_tick();
    } else if (irq == k_irq_com1) {
        g_serial_irqs.add();
        console_input_interrupt();
    } else if (irq == k_irq_ata0) {
        ata_interrupt();
    } else {
        pci_interrupt(irq);
    }
}

// The local APIC's own vectors: its timer and the IPI (the spurious vector
// needs no EOI, Intel SDM Vol. 3, 10.9).
void apic_interrupt(unsigned vector)
{
    if (vector == k_vec_apic_spurious)
        return;
    InterruptScope in_interrupt;
    apic_eoi();
    if (vector == k_vec_ipi) {
        ipi_received();
    } else if (vector == k_vec_apic_timer) {
        // Every CPU's clock: the scheduler's tick there (the boot CPU's
        // also drives the global time, sched_clock_tick says).
        g_timer_irqs.add();
        proc::sched_clock_tick();
    }
}

} // namespace
} // namespace toll::i386

/// The C++ side of every trap (trap_entry.S).
extern "C" void i386_trap(toll::arch::TrapFrame* frame)
{
    using namespace toll;
    using namespace toll::i386;
    arch::TrapFrame& f = *frame;
    if (profile_counting()) [[unlikely]]
        profile_step_trap(f);
    g_traps_total.add();
    if (f.eflags & arch::TrapFrame::k_eflags_vm)
        vm86_intruder(f);
    bool from_user = f.from_user();
    if (f.vector == k_vec_syscall) [[likely]] {
        g_syscalls.add();
        syscall_dispatch(f);
    } else if (f.vector < 32) {
        if (f.vector == k_vec_page_fault)
            g_page_faults.add();
        else if (f.vector == k_vec_general_protection)
            g_gp_faults.add();
        else
            g_other_traps.add();
        if (g_exception_hooks[f.vector] && g_exception_hooks[f.vector](f))
            return;
        if (from_user)
            user_exception(f);
        else
            kernel_exception(f);
    } else if (f.vector >= k_irq_base && f.vector < k_irq_base + 16) {
        interrupt(f.vector - k_irq_base);
    } else if (f.vector >= k_vec_apic_timer) {
        apic_interrupt(f.vector);
    } else {
        g_other_traps.add();
        if (!from_user)
            panic("unexpected vector %u in the kernel", f.vector);
    }
    proc::trap_exit(f, from_user);
}
