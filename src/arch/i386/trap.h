// Trap vectors and the i386 trap machinery's internal interface.
#pragma once
#include "machine/context.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::i386 {

// Intel SDM Vol. 3, table 6-1: exception vectors.
constexpr unsigned k_vec_divide = 0, k_vec_debug = 1, k_vec_breakpoint = 3, k_vec_overflow = 4,
                   k_vec_invalid_opcode = 6, k_vec_device_not_available = 7, k_vec_double_fault = 8,
                   k_vec_general_protection = 13, k_vec_page_fault = 14, k_vec_x87 = 16,
                   k_vec_alignment = 17, k_vec_simd = 19;
/// Linux's i386 system call vector.
constexpr unsigned k_vec_syscall = 0x80;

// Intel SDM Vol. 3, 4.7: page-fault error code bits.
constexpr uint32_t k_pf_present = 1u << 0, k_pf_write = 1u << 1, k_pf_user = 1u << 2;

/// Loads the IDT with a gate per vector pointing at trap_entry.S's stubs.
void idt_init();

/// Loads the IDT idt_init built on the calling CPU (every CPU shares it).
void idt_load();

/// Points @p vector at @p handler (an interrupt gate; DPL 3 if @p user_callable).
void idt_set_gate(unsigned vector, uint32_t handler, bool user_callable);

/// Points @p vector at a task gate for the TSS @p tss_selector.
void idt_set_task_gate(unsigned vector, uint16_t tss_selector, uint8_t type_attr);

/// The double-fault task's stack, per CPU.
constexpr uint32_t k_double_fault_stack_size = 8192;

/// Routes the double fault through a task gate (double_fault.cpp), to a
/// TSS of the CPU @p cpu_id's own, running on the stack ending at
/// @p stack_top (0: the boot CPU's static one); called on each CPU.
void double_fault_init(unsigned cpu_id, uintptr_t stack_top = 0);

/// Address of the entry stub for @p vector.
uint32_t trap_stub_address(unsigned vector);

/// A subsystem's first look at an exception (the FPU takes #NM, vm86 takes
/// #GP from vm86 mode). Returns true if it handled the trap.
using ExceptionHook = bool (*)(arch::TrapFrame& frame);
void set_exception_hook(unsigned vector, ExceptionHook hook);

/// The name of an exception vector ("page fault").
const char* exception_name(unsigned vector);

/// Prints the registers of a trap frame (for PANIC and for killed programs).
void dump_frame(const arch::TrapFrame& frame);

/// Redirects a page fault inside copyin/copyout to its EFAULT exit; returns
/// false if the faulting instruction is not a user access.
bool fixup_user_access(arch::TrapFrame& frame);

/// Reads vm.copy_fast_max= (the 4/4 fast-path threshold). Called by cpu_init.
void uaccess_init();

/// Decodes a system call from @p frame, runs it and stores the result in eax.
void syscall_dispatch(arch::TrapFrame& frame);

/// Checks a user frame @p frame before it is resumed (arch::user_frame_vet),
/// against the thread's TLS segment @p tls: a data segment register that
/// names no usable segment is nulled, EFLAGS loses the bits a program may
/// not hold (IOPL, VM, VIF, VIP; IF is set). Returns false, with CS and SS
/// reset to the user segments, when CS or SS could not be restored.
bool user_frame_check(arch::TrapFrame& frame, const arch::TlsSegment& tls);

/// The serial port's receive interrupt: feeds the console line discipline.
void console_input_interrupt();

/// The primary ATA channel's interrupt (IRQ 14): the drive finished a
/// sector or a command (ata.cpp).
void ata_interrupt();

/// A PCI device's INTx on 8259 line @p irq: runs the handlers attached to
/// the line (pci.cpp). False when none is.
bool pci_interrupt(unsigned irq);

} // namespace toll::i386
