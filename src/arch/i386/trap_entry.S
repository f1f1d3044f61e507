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
# on the trampoline stack with the user's CR3 loaded: the entry loads the
# kernel's CR3 and moves the frame to the thread's kernel stack; the exit
# moves it back and loads the user's CR3. Under 3/1 the CPU already switched
# to the thread's kernel stack (TSS.esp0) and nothing else happens.
#
# The trampoline's other code, the 4/4 fast copy, is in copy_fast.S; the
# offsets used below are checked against TrapFrame in asm_offsets.h.

#include "arch/i386/asm_offsets.h"
#include "arch/i386/layout.h"
#include "arch/i386/trap_stub.h"

# Adds one to a 64-bit kernel counter (only while the kernel's CR3 is loaded).
.macro count counter
    addl $1, \counter + COUNTER_VALUE
    adcl $0, \counter + COUNTER_VALUE + 4
.endm


    .section .trampoline.text, "ax"
    .balign 16
    .globl trap_stubs
trap_stubs:
    trap_stub_table trap_common

trap_common:
    pushal
    pushl %ds
    pushl %es
    pushl %fs
    pushl %gs
    movl $KERNEL_DS, %eax
    movl %eax, %ds
    movl %eax, %es
    # The kernel never uses fs or gs; a null selector there means no stale
    # user TLS selector can outlive its GDT entry across a thread switch.
    xorl %eax, %eax
    movl %eax, %fs
    movl %eax, %gs
    cld
    # 3/1 has no trampoline work to do on any trap: test that first.
    cmpl $LAYOUT_3_1, trampoline_vars + TV_LAYOUT
    je call_kernel
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jnz from_user
    testl $3, TF_CS(%esp)
    jnz from_user
    # From the kernel. A page fault in the trampoline's fast copy happens with
    # the user's CR3 loaded, where the kernel's code is not mapped: leave
    # through the copy's fault exit without calling into the kernel.
    cmpl $14, TF_VECTOR(%esp)
    jne 1f
    cmpl $fast_copy_access, TF_EIP(%esp)
    jne 1f
    movl $fast_copy_fault, TF_EIP(%esp)
    jmp restore_registers
1:  # Any other trap in the kernel while the user's CR3 is loaded (an NMI,
    # debug trap or machine check in the fast copy, a fault restoring user
    # segments on the way out) runs the kernel on its own CR3 and puts the
    # interrupted one back before returning.
    movl %cr3, %eax
    cmpl trampoline_vars + TV_KERNEL_CR3, %eax
    je call_kernel
    movl %eax, %ebx                     # callee-saved across i386_trap
    movl trampoline_vars + TV_KERNEL_CR3, %eax
    movl %eax, %cr3
    pushl %esp
    call i386_trap
    addl $4, %esp
    movl %ebx, %cr3
    jmp restore_registers

from_user:
# LAB 4x4 BEGIN: on entry from user mode, load the kernel's CR3 (count it in i386_cr3_loads and i386_tlb_full_flushes) and move the trap frame (TF_SIZE bytes, TF_VM86_SIZE from vm86 mode) from the trampoline stack to the top of the thread's kernel stack (trampoline_vars + TV_KSTACK_TOP), then continue there
    movl trampoline_vars + TV_KERNEL_CR3, %eax
    movl %eax, %cr3
    count i386_cr3_loads
    count i386_tlb_full_flushes
    movl $TF_SIZE, %ecx
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jz 1f
    movl $TF_VM86_SIZE, %ecx
1:  movl trampoline_vars + TV_KSTACK_TOP, %edi
    subl %ecx, %edi
    movl %edi, %edx                     # the frame's new home
    movl %esp, %esi
    shrl $2, %ecx
    rep movsl
    movl %edx, %esp
# LAB 4x4 END

call_kernel:
    pushl %esp                          # i386_trap(TrapFrame*)
    call i386_trap
    addl $4, %esp
    .globl trap_return
trap_return:
    cmpl $LAYOUT_3_1, trampoline_vars + TV_LAYOUT
    je restore_registers
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jnz to_user
    testl $3, TF_CS(%esp)
    jz restore_registers
to_user:
# LAB 4x4 BEGIN: on the way back to user mode, move the frame to the top of the trampoline stack (trampoline_stack_top), count the CR3 load, then load the user's CR3 (trampoline_vars + TV_USER_CR3)
    movl $TF_SIZE, %ecx
    testl $EFLAGS_VM, TF_EFLAGS(%esp)
    jz 1f
    movl $TF_VM86_SIZE, %ecx
1:  movl $trampoline_stack_top, %edi
    subl %ecx, %edi
    movl %edi, %edx
    movl %esp, %esi
    shrl $2, %ecx
    rep movsl
    movl %edx, %esp
    count i386_cr3_loads
    count i386_tlb_full_flushes
    movl trampoline_vars + TV_USER_CR3, %eax
    movl %eax, %cr3
# LAB 4x4 END

restore_registers:
    popl %gs
    popl %fs
    popl %es
    popl %ds
    popal
    addl $8, %esp              # vector and error code
    iret

# The trampoline's data: its variables, stack and copy buffer (the GDT, IDT
# and TSSs are placed here by gdt.cpp and trap.cpp).
    .section .trampoline.data, "aw"
    .balign 64
    .globl trampoline_vars
trampoline_vars:
    .skip 64
    .balign 16
    .globl trampoline_stack_bottom
trampoline_stack_bottom:
    .skip TRAMPOLINE_STACK_SIZE
    .globl trampoline_stack_top
trampoline_stack_top:
    .globl trampoline_copy_buffer
trampoline_copy_buffer:
    .skip TRAMPOLINE_COPY_BUFFER
