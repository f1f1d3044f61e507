// The one interface between Toll's architecture-independent core and an
// architecture port (src/arch/<arch>/). The core calls only these.
#pragma once
#include "machine/context.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// A short name for banners and records: "i386" or "arm64".
const char* name();

/// Writes one byte to the serial console, waiting until the UART takes it.
void console_putc(char c);

/// Returns the next byte typed on the serial console, or -1 if none is waiting.
int console_getc();

/// Ends the run: powers the machine off through whatever the emulator offers
/// (isa-debug-exit and Bochs port 0x8900 on i386, semihosting on arm64).
/// @p success selects the exit status where the emulator passes one on.
[[noreturn]] void poweroff(bool success);

/// Reads the free-running cycle counter (TSC on i386, CNTVCT_EL0 on arm64).
/// In deterministic mode it counts guest instructions.
uint64_t cycle_counter();

/// Disables interrupts and returns whether they were enabled.
bool interrupts_disable();

/// Re-enables interrupts if @p were_enabled.
void interrupts_restore(bool were_enabled);

/// Waits for the next interrupt (hlt / wfi).
void wait_for_interrupt();

/// Brings up the CPU: descriptor tables, traps, the interrupt controller and
/// the clock (interrupts stay disabled). Called by kernel_main before anything
/// can trap.
void cpu_init();

/// The physical range [*start, *end) the kernel image (and its ramdisk) occupies.
void kernel_image_range(uint64_t* start, uint64_t* end);

/// Frequency of the scheduler clock interrupt, in Hz.
unsigned clock_hz();

// --- threads -------------------------------------------------------------

/// Prepares @p ctx so that the first context_switch() to it calls
/// entry(arg) on the kernel stack that ends at @p stack_top.
void context_init_kernel(ThreadContext& ctx, uintptr_t stack_top, void (*entry)(void*), void* arg);

/// Prepares @p ctx to enter user mode at @p pc with stack pointer @p sp.
/// The thread starts in the kernel and returns to user mode through the
/// common trap exit.
void context_init_user(ThreadContext& ctx, uintptr_t stack_top, uintptr_t pc, uintptr_t sp);

/// Resets the running thread's user frame @p frame for a new program
/// (execve): entry @p pc, stack @p sp, no TLS segment, clean registers.
void frame_reset_user(ThreadContext& ctx, uintptr_t pc, uintptr_t sp);

/// The ELF e_machine and class (1: 32-bit, 2: 64-bit) of this architecture's programs.
unsigned elf_machine();
unsigned elf_class();

/// Prepares @p child as a copy of the user thread @p parent_frame, returning
/// 0 from its system call (fork).
void context_init_fork(ThreadContext& child, uintptr_t stack_top, const TrapFrame& parent_frame);

/// Saves the running thread in @p from and resumes @p to (kernel stack, TSS
/// stack pointer, user TLS segment).
void context_switch(ThreadContext& from, ThreadContext& to);

/// Sets the value the current system call returns to user mode.
void set_syscall_return(TrapFrame& frame, long value);

} // namespace toll::arch
