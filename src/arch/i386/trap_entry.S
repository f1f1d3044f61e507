# Trap entry and exit for every vector, in the trampoline: this code is linked
# at TRAMPOLINE_BASE and mapped in the kernel's page directory and in every
# user one, so the CPU can run it whichever CR3 is loaded.
#
# One small stub per vector pushes a dummy error code where the CPU does not
# (Intel SDM Vol. 3, 6.13) and the vector number; trap_common saves the rest
# of the TrapFrame (include/machine/context.h), calls i386_trap(frame), and
# trap_return goes back with iret.
#
# Under the isolated layouts (3/1-pti and 4/4) a trap from user mode arrives
# on the CPU's trampoline stack with the user's CR3 loaded: the entry loads the
# kernel's CR3 and moves the frame to the thread's kernel stack; the exit
# moves it back and loads the user's CR3. Under 3/1 the CPU already switched
# to the thread's kernel stack (TSS.esp0) and nothing else happens.
#
# Each CPU has its own trampoline block (trampoline.h TrampolineCpu): its
# variables, stack and copy buffer. The code finds its own without a global:
# on entry from user mode %esp is at a fixed place in the block (TSS.esp0
# points there), so the variables are at fixed offsets from %esp; on the
# way out the kernel's per-CPU segment is still loaded, and %fs:CPU_PORT_WORD
# says where this CPU's exit frame goes.
#
# The isolated layouts have their own stub table (isolated_trap_stubs), whose
# common case, a trap from 32-bit user mode, is kept short: only the seven
# words the CPU and the stub pushed move to the kernel stack, and only the
# five that iret needs move back (isolated_common, isolated_return). The
# other cases, vm86 mode and traps taken in kernel mode, go the general way
# (trap_common, which copies the whole frame).
#
# The trampoline's other code, the 4/4 fast copy, is in copy_fast.S; the
# offsets used below are checked against TrapFrame in asm_offsets.h.

#include "arch/i386/asm_offsets.h"
#include "arch/i386/layout.h"
#include "arch/i386/trap_stub.h"

# Adds one to a 64-bit kernel counter (only while the kernel's CR3 is loaded).
# Through %ss, which in kernel mode always holds the kernel's flat data
# segment: the counter may be bumped while %ds still holds the user's.
# Each half's add is locked, so that another CPU's add between them is not
# lost; the pair is not one atomic step, but each CPU's carry goes into the
# high half with its own ADC, so the sum comes out whole (a reader between
# the two may see the low half's wrap without its carry, once in 2^32).
.macro count counter
    lock addl $1, %ss:\counter + COUNTER_VALUE
    lock adcl $0, %ss:\counter + COUNTER_VALUE + 4
.endm

# Saves the registers below the hardware frame and loads the kernel's data
# segments: the TrapFrame is complete at %esp afterwards.
.macro save_registers
    pushal
    pushl %ds
    pushl %es
    pushl %fs
    pushl %gs
    movl $KERNEL_DS, %eax
    movl %eax, %ds
    movl %eax, %es
    # %fs is the kernel's per-CPU segment (machine/cpu_local.h); the kernel
    # never uses gs, and a null selector there means no stale user TLS
    # selector can outlive its GDT entry across a thread switch.
    movl $PERCPU_SEL, %eax
    movl %eax, %fs
    xorl %eax, %eax
    movl %eax, %gs
    cld
.endm

/* The words the CPU and the stub push for a trap from 32-bit user mode:
   vector, error code, eip, cs, eflags, esp, ss. */
#define HW_FRAME (TF_SIZE - TF_VECTOR)
/* A variable of the CPU's block as an offset from %esp on entry from 32-bit
   user mode, when %esp is @p depth bytes below the top of its trampoline
   stack (HW_FRAME after a trap's stub, 20 at the system-call gate), and
   from %esp at the exit's iret (TC_EXIT_SP). */
#define GATE_FRAME 20
#define ENTRY_VAR(depth, tv) ((depth) - TC_STACK_TOP + (tv))
#define EXIT_VAR(tv) ((tv) - TC_EXIT_SP)


    .section .trampoline.text, "ax"
    .balign 16
    .globl trap_stubs
trap_stubs:
    trap_stub_table trap_common

    .globl isolated_trap_stubs
isolated_trap_stubs:
    trap_stub_table isolated_common

# The isolated layouts' entry. From 32-bit user mode the CPU switched to its
# trampoline stack (TSS.esp0) and pushed ss, esp, eflags, cs and eip, and the
# stub the error code and vector: HW_FRAME bytes, exactly at the top of that
# stack, so nothing else puts %esp there. Load the kernel's CR3, then push
# those words from their places above %esp onto the thread's kernel stack,
# and save the registers there directly. The user's %eax waits just below
# the frame on the trampoline stack (-4(%esp), "scratch") while %eax carries
# the CR3 and then the old %esp.
#
# Both entries (a trap, and the system-call gate) start the same way: the
# macro below, written once, moves the CPU's five words (@p depth: how many
# bytes the CPU and the stub pushed); each entry then pushes its own error
# code and vector, a trap's read through %eax.
.macro isolated_enter depth
# LAB 4x4 BEGIN: on entry from user mode (32-bit), with every memory operand through %ss (the user's %ds is still loaded), keep the user's %eax in the scratch word below %esp, load the kernel's CR3 (ENTRY_VAR(\depth, TV_KERNEL_CR3) from %esp), keep %esp in %eax, switch to the top of the thread's kernel stack (ENTRY_VAR(\depth, TV_KSTACK_TOP)) and push there the five words the CPU pushed, in the same order
    movl %eax, %ss:-4(%esp)
    movl %ss:ENTRY_VAR(\depth, TV_KERNEL_CR3)(%esp), %eax
    movl %eax, %cr3
    movl %esp, %eax
    movl %ss:ENTRY_VAR(\depth, TV_KSTACK_TOP)(%eax), %esp
    pushl %ss:\depth - 4(%eax)          # ss
    pushl %ss:\depth - 8(%eax)          # esp
    pushl %ss:\depth - 12(%eax)         # eflags
    pushl %ss:\depth - 16(%eax)         # cs
    pushl %ss:\depth - 20(%eax)         # eip
# LAB 4x4 END
.endm
#
# Until save_registers loads the kernel's data segments, %ds is the user's
# (possibly a null or short TLS selector), so every memory operand here goes
# through %ss, which the CPU loaded from TSS.ss0; the same holds on the way
# out once the user's %ds is back.
#
# A trap arrives here from any mode: only one at the top of some CPU's
# trampoline stack less HW_FRAME (that is, %esp - (trampoline_cpus +
# TC_STACK_TOP - HW_FRAME) is a multiple of TRAMPOLINE_CPU_SIZE below
# TRAMPOLINE_CPUS blocks, one test of the bits that must be 0) is from 32-bit
# user mode; the others go the general way.
isolated_common:
    movl %eax, %ss:-4(%esp)
    movl %esp, %eax
    subl $trampoline_cpus + TC_STACK_TOP - HW_FRAME, %eax
    testl $~(TRAMPOLINE_CPU_SIZE * TRAMPOLINE_CPUS - TRAMPOLINE_CPU_SIZE), %eax
    movl %ss:-4(%esp), %eax
    jnz trap_common
    isolated_enter HW_FRAME
    pushl %ss:4(%eax)                   # error code
    pushl %ss:0(%eax)                   # vector
    jmp isolated_saved

# The isolated layouts' system-call gate (int $0x80, DPL 3): only 32-bit user
# mode reaches it (the kernel never executes int $0x80, and in vm86 mode
# INT n at IOPL 0 raises #GP instead), so the CPU's five words are at the
# top of the trampoline stack and no test is needed; the error code and
# vector, which no stub pushed, go on the kernel stack directly.
    .globl isolated_syscall_entry
isolated_syscall_entry:
    isolated_enter GATE_FRAME
    pushl $0                            # error code
    pushl $VEC_SYSCALL                  # vector
isolated_saved:
# LAB 4x4 BEGIN: get the user's %eax back from the scratch word (4 below the address %eax holds) and count the CR3 load in i386_cr3_loads (cpu.tlb.full_flushes follows it)
    movl %ss:-4(%eax), %eax
    count i386_cr3_loads
# LAB 4x4 END
    save_registers
    pushl %esp                          # i386_trap(TrapFrame*)
    call i386_trap
    addl $4, %esp
isolated_return:
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jnz to_user_general
    testl $3, TF_CS(%esp)
    jz restore_registers
# LAB 4x4 BEGIN: on the way back to user mode (32-bit), count the CR3 load, put the user's %eax and then what iret pops (eip, cs, eflags, esp, ss: TF_EIP and up) at this CPU's exit frame (%fs:CPU_PORT_WORD; %es is the kernel's), leave that address in the vector's slot, restore the registers, pop it into %esp, load the user's CR3 (EXIT_VAR(TV_USER_CR3) from %esp), pop %eax and iret
    count i386_cr3_loads
    movl %fs:CPU_PORT_WORD, %edi        # this CPU's exit frame
    movl %edi, TF_VECTOR(%esp)          # for popl %esp below
    movl TF_EAX(%esp), %eax
    stosl                               # the user's eax
    leal TF_EIP(%esp), %esi
    movsl                               # eip
    movsl                               # cs
    movsl                               # eflags
    movsl                               # esp
    movsl                               # ss
    popl %gs
    popl %fs
    popl %es
    popl %ds
    popal
    popl %esp                           # the exit frame
    movl %ss:EXIT_VAR(TV_USER_CR3)(%esp), %eax
    movl %eax, %cr3
    popl %eax
    iret
# LAB 4x4 END

trap_common:
    save_registers
    # 3/1 has no trampoline work to do on any trap: test that first.
    cmpl $LAYOUT_3_1, trampoline_layout
    je call_kernel
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jnz from_user
    testl $3, TF_CS(%esp)
    jnz from_user
    # From the kernel. A page fault in the trampoline's fast copy happens with
    # the user's CR3 loaded, where the kernel's code is not mapped: leave
    # through the copy's fault exit without calling into the kernel.
    cmpl $VEC_PAGE_FAULT, TF_VECTOR(%esp)
    jne 1f
    cmpl $fast_copy_access, TF_EIP(%esp)
    je 2f
    cmpl $fast_copy_access_bytes, TF_EIP(%esp)
    jne 1f
2:  movl $fast_copy_fault, TF_EIP(%esp)
    jmp restore_registers
1:  # Any other trap in the kernel while the user's CR3 is loaded (an NMI,
    # debug trap or machine check in the fast copy, a fault restoring user
    # segments on the way out) runs the kernel on its own CR3 and puts the
    # interrupted one back before returning. The user's CR3 is loaded only
    # while %esp is on this CPU's trampoline stack (a kernel stack is not
    # mapped there); a trap on a kernel stack has the kernel's already.
    movl %esp, %ebx
    subl $trampoline_cpus, %ebx
    cmpl $TRAMPOLINE_CPU_SIZE * TRAMPOLINE_CPUS, %ebx
    jae call_kernel
    andl $~(TRAMPOLINE_CPU_SIZE - 1), %ebx
    addl $trampoline_cpus, %ebx         # this CPU's block
    movl %cr3, %eax
    cmpl TV_KERNEL_CR3(%ebx), %eax
    je call_kernel
    movl %eax, %esi                     # callee-saved across i386_trap
    movl TV_KERNEL_CR3(%ebx), %eax
    movl %eax, %cr3
    pushl %esp
    call i386_trap
    addl $4, %esp
    movl %esi, %cr3
    jmp restore_registers

from_user:
    # From user mode the general way (vm86 mode; 32-bit user mode takes
    # isolated_common's): move the whole frame, registers saved, from this
    # CPU's trampoline stack (its block found by masking %esp) to the
    # kernel stack.
    movl %esp, %ebx
    andl $~(TRAMPOLINE_CPU_SIZE - 1), %ebx
    movl TV_KERNEL_CR3(%ebx), %eax
    movl %eax, %cr3
    count i386_cr3_loads
    movl $TF_SIZE, %ecx
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jz 1f
    movl $TF_VM86_SIZE, %ecx
1:  movl TV_KSTACK_TOP(%ebx), %edi
    subl %ecx, %edi
    movl %edi, %edx                     # the frame's new home
    movl %esp, %esi
    shrl $2, %ecx
    rep movsl
    movl %edx, %esp
    call i386_walks_harvest             # vm.walks=count: the entry's CR3 load

call_kernel:
    pushl %esp                          # i386_trap(TrapFrame*)
    call i386_trap
    addl $4, %esp
    .globl trap_return
trap_return:
    cmpl $LAYOUT_3_1, trampoline_layout
    je restore_registers
    # Under vm.walks=count every return to user mode goes the general way,
    # which counts the walks before the CR3 load.
    cmpb $0, i386_walks_counting
    je isolated_return
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jnz to_user_general
    testl $3, TF_CS(%esp)
    jnz to_user_general
    jmp restore_registers

to_user_general:
    # Back to user mode the general way (vm86 mode, and every return under
    # vm.walks=count): move the whole frame to this CPU's trampoline stack.
    call i386_walks_harvest             # vm.walks=count: the exit's CR3 load
    movl %fs:CPU_PORT_WORD, %ebx
    addl $TC_STACK_TOP - TC_EXIT_SP, %ebx # the top of this CPU's trampoline stack
    movl $TF_SIZE, %ecx
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jz 1f
    movl $TF_VM86_SIZE, %ecx
1:  movl %ebx, %edi
    subl %ecx, %edi
    movl %edi, %edx
    movl %esp, %esi
    shrl $2, %ecx
    rep movsl
    movl %edx, %esp
    count i386_cr3_loads
    movl TV_USER_CR3 - TC_STACK_TOP(%ebx), %eax
    movl %eax, %cr3

restore_registers:
    popl %gs
    popl %fs
    popl %es
    popl %ds
    popal
    addl $8, %esp              # vector and error code
    iret

# The trampoline's data: the layout and every CPU's block (the GDT, IDT and
# TSSs are placed here by gdt.cpp and trap.cpp).
    .section .trampoline.data, "aw"
    .balign 4
    .globl trampoline_layout
trampoline_layout:
    .long 0
    .balign TRAMPOLINE_CPU_SIZE
    .globl trampoline_cpus
trampoline_cpus:
    .skip TRAMPOLINE_CPU_SIZE * TRAMPOLINE_CPUS
