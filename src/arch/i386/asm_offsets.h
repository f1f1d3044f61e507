/* Structure offsets and constants that the i386 assembly files use, in the
   spirit of FreeBSD's genassym: written once here as plain #defines (the
   assembler reads them), and checked at compile time against the C++
   definitions they copy by the static_asserts below, which every C++ file
   including this header compiles. A TrapFrame that changes shape therefore
   fails the build instead of corrupting the stack. */
#pragma once

/* Offsets in toll::arch::TrapFrame (include/machine/context.h). */
#define TF_EAX 44
#define TF_VECTOR 48
#define TF_EIP 56
#define TF_CS 60
#define TF_EFLAGS 64
#define TF_SIZE 76      /* a trap from user mode: up to user_ss */
#define TF_VM86_SIZE 92 /* from vm86 mode the CPU also pushes es, ds, fs, gs */

/* The kernel's data segment selector (cpu.h, k_kernel_ds). */
#define KERNEL_DS 0x10
/* The per-CPU segment's selector (cpu.h, k_percpu_sel): %fs in the kernel. */
#define PERCPU_SEL 0x40
/* EFLAGS.VM (Intel SDM Vol. 3, 2.3; vm86/emulate.h, k_vm86_flag_vm). */
#define EFLAGS_VM 0x20000
/* offsetof(toll::Cpu, port_word) (kernel/kern/cpu.h), read as %fs:CPU_PORT_WORD. */
#define CPU_PORT_WORD 8
/* offsetof(toll::Counter, value) (kernel/kern/counters.h). */
#define COUNTER_VALUE 8
/* Trap vectors (trap.h): the page fault (Intel SDM Vol. 3, 6.15) and the
   system-call gate, int $0x80. */
#define VEC_PAGE_FAULT 14
#define VEC_SYSCALL 0x80

#ifndef __ASSEMBLER__
#include "arch/i386/cpu.h"
#include "arch/i386/layout.h"
#include "arch/i386/trap.h"
#include "arch/i386/vm86/emulate.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "machine/context.h"
#include <stddef.h>

static_assert(offsetof(toll::arch::TrapFrame, eax) == TF_EAX);
static_assert(offsetof(toll::arch::TrapFrame, vector) == TF_VECTOR);
static_assert(offsetof(toll::arch::TrapFrame, eip) == TF_EIP);
static_assert(offsetof(toll::arch::TrapFrame, cs) == TF_CS);
static_assert(offsetof(toll::arch::TrapFrame, eflags) == TF_EFLAGS);
static_assert(sizeof(toll::arch::TrapFrame) == TF_SIZE);
static_assert(TF_VM86_SIZE == TF_SIZE + 4 * sizeof(uint32_t));
static_assert(toll::i386::k_kernel_ds == KERNEL_DS);
static_assert(toll::i386::k_percpu_sel == PERCPU_SEL);
static_assert(toll::i386::k_vm86_flag_vm == EFLAGS_VM);
static_assert(offsetof(toll::Counter, value) == COUNTER_VALUE);
static_assert(offsetof(toll::Cpu, port_word) == CPU_PORT_WORD);
static_assert(TRAMPOLINE_CPUS == toll::k_max_cpus);
static_assert(toll::i386::k_vec_page_fault == VEC_PAGE_FAULT);
static_assert(toll::i386::k_vec_syscall == VEC_SYSCALL);
#endif
