// Signals: what a port implements so that the core can run a program's
// signal handlers. The frames are Linux's for each architecture, so that
// unmodified musl programs (their handlers, their restorers that call
// sigreturn) run; the core decides what to deliver (kernel/proc/signal.cpp).
#pragma once
#include "kernel/kern/signal_abi.h"
#include "machine/context.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// Checks a frame the core marked for checking (proc::k_exit_check_frame:
/// after sigreturn, or i386's set_thread_area) before it is resumed: whatever
/// the program may not hold is made safe, and false means the frame cannot
/// be resumed at all (the program gets SIGSEGV).
bool user_frame_vet(TrapFrame& frame, ThreadContext& ctx);

/// Saves the interrupted user state of @p frame (and @p ctx's FPU registers)
/// in a signal frame on the user stack and points @p frame at the handler of
/// @p delivery, returning through its restorer. Returns false when the frame
/// cannot be written (a bad stack pointer); the process then dies of SIGSEGV.
bool signal_frame_push(TrapFrame& frame, ThreadContext& ctx, const SignalDelivery& delivery);

/// The port's code that returns from a signal handler installed without
/// SA_RESTORER (glibc's on arm64, which counts on Linux's vDSO for it): its
/// bytes in *@p code and its length, or 0 when the port needs none. exec
/// maps it read-and-execute into every program at
/// proc::signal_trampoline_address().
size_t signal_trampoline(const uint8_t** code);

/// sigreturn: restores @p frame and @p ctx from the signal frame at the user
/// stack pointer, keeping only what a user program may hold (the next return
/// to user mode checks the rest: the core marks the frame for
/// user_frame_vet). @p rt selects rt_sigreturn's frame (i386
/// also has sigreturn's). Stores the saved signal mask in @p mask. Returns
/// false when the frame cannot be read.
bool signal_frame_pop(TrapFrame& frame, ThreadContext& ctx, bool rt, uint64_t* mask);

/// Makes the system call that @p frame returns from run again: the program
/// counter goes back over the call instruction and the register the result
/// overwrote gets its old value @p saved (which the dispatcher kept).
void syscall_restart(TrapFrame& frame, uintptr_t saved);

/// The smallest alternate signal stack sigaltstack accepts: Linux's
/// MINSIGSTKSZ for this architecture (room for one signal frame).
size_t min_signal_stack();

/// The value in the register a system call returns in (eax, x0): what
/// sigreturn "returns" is the restored register, left as it is.
long syscall_return_value(const TrapFrame& frame);

} // namespace toll::arch
