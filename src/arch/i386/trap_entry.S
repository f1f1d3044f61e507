# Trap entry and exit for every vector: one small stub per vector pushes a
# dummy error code where the CPU does not (Intel SDM Vol. 3, 6.13) and the
# vector number, then the common path saves the rest of the TrapFrame
# (include/machine/context.h), calls i386_trap(frame) and returns with iret.

#include "arch/i386/layout.h"

#define KERNEL_DS 0x10

# Vectors for which the CPU pushes an error code: 8, 10-14, 17, 21, 29, 30.
.macro stub vector
    .balign 16
    .if (\vector == 8) || (\vector >= 10 && \vector <= 14) || (\vector == 17) || (\vector == 21) || (\vector == 29) || (\vector == 30)
    .else
    pushl $0
    .endif
    pushl $\vector
    jmp trap_common
.endm

    .text
    .balign 16
    .globl trap_stubs
trap_stubs:
    .altmacro
    .set v, 0
    .rept 256
    stub %v
    .set v, v + 1
    .endr

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
    pushl %esp                 # i386_trap(TrapFrame*)
    call i386_trap
    addl $4, %esp
    .globl trap_return
trap_return:
    popl %gs
    popl %fs
    popl %es
    popl %ds
    popal
    addl $8, %esp              # vector and error code
    iret

# context_switch_stacks(uint32_t* save_esp, uint32_t new_esp): saves the
# callee-saved registers on the current kernel stack, stores its pointer,
# and resumes the thread whose stack is new_esp.
    .globl context_switch_stacks
context_switch_stacks:
    movl 4(%esp), %eax
    movl 8(%esp), %edx
    pushl %ebp
    pushl %ebx
    pushl %esi
    pushl %edi
    movl %esp, (%eax)
    movl %edx, %esp
    popl %edi
    popl %esi
    popl %ebx
    popl %ebp
    ret

# First instructions of a new kernel thread: context_init_kernel leaves the
# entry function in %ebx and its argument in %esi.
    .globl kernel_thread_start
kernel_thread_start:
    pushl %esi
    call *%ebx
    call kernel_thread_exit_from_entry
1:  hlt
    jmp 1b
