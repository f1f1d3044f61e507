// Threads: what a port implements so that the core can create, copy, switch
// and restart threads. The port also defines the types, in its
// include/machine/context.h (TrapFrame: the registers a trap saved;
// ThreadContext: a thread that is not running). The core reads a TrapFrame
// only through its accessors (pc(), from_user()) and never looks inside a
// ThreadContext; what the core itself keeps per thread (the user frame's
// address, the exit work, the kernel stack) is in proc::Thread.
#pragma once
#include "kernel/kern/errno.h"
#include "machine/context.h"
#include <stdint.h>

namespace toll::arch {

/// Prepares @p ctx so that the first context_switch() to it calls
/// entry(arg) on the kernel stack that ends at @p stack_top.
void context_init_kernel(ThreadContext& ctx, uintptr_t stack_top, void (*entry)(void*), void* arg);

/// Prepares @p ctx to enter user mode at @p pc with stack pointer @p sp.
/// The thread starts in the kernel and returns to user mode through the
/// common trap exit. Returns its user frame, at the top of the kernel stack
/// that ends at @p stack_top.
TrapFrame* context_init_user(ThreadContext& ctx, uintptr_t stack_top, uintptr_t pc, uintptr_t sp);

/// Resets the running thread's user frame @p frame for a new program
/// (execve): entry @p pc, stack @p sp, no TLS segment, clean registers.
void frame_reset_user(ThreadContext& ctx, TrapFrame& frame, uintptr_t pc, uintptr_t sp);

/// The ELF e_machine and class (1: 32-bit, 2: 64-bit) of this architecture's programs.
unsigned elf_machine();
unsigned elf_class();

/// Prepares @p child as a copy of the user thread @p parent_frame, returning
/// 0 from its system call (fork). Returns the child's user frame, as
/// context_init_user does.
TrapFrame* context_init_fork(ThreadContext& child, uintptr_t stack_top,
                             const TrapFrame& parent_frame);

/// Points the user stack of the new thread's frame @p frame at @p sp
/// (clone with a stack of its own).
void frame_set_user_sp(TrapFrame& frame, uintptr_t sp);

/// Gives the new thread @p child the user TLS that clone's CLONE_SETTLS
/// argument @p tls names: on i386 a struct user_desc in the caller's memory,
/// read as set_thread_area reads it (k_efault, k_einval for one it refuses);
/// on arm64 the value of TPIDR_EL0 itself (always k_ok).
Errno clone_tls(ThreadContext& child, uintptr_t tls);

/// Saves the running thread in @p from and resumes @p to: its kernel stack,
/// where a trap from its user mode will land (i386: TSS.esp0, or the
/// trampoline's kstack_top under the isolated layouts: the top of @p to's
/// kernel stack, which the core keeps in its thread and the port reads
/// through proc::thread_of(@p to)), its user TLS (i386: the TLS segment;
/// arm64: TPIDR_EL0) and its FPU state (lazily or eagerly).
/// It does not change the address space: the scheduler calls pmap_activate.
void context_switch(ThreadContext& from, ThreadContext& to);

} // namespace toll::arch
