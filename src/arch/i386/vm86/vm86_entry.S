# The vm86 monitor's ways in and out of virtual-8086 mode. vm86_enter builds
# nothing itself: vm86.cpp lays a Vm86Frame (emulate.h) at the top of the
# monitor's stack, and vm86_enter pops it into the CPU with iret. While a call
# runs, the monitor's own IDT sends every trap to the stubs below, which push
# the same frame back; vm86_trap() decides to resume (iret again) or to end the
# call (return from vm86_enter on the kernel stack it left).

#include "arch/i386/asm_offsets.h"
#include "arch/i386/trap_stub.h"


    .text
    .balign 16
    .globl vm86_trap_stubs
vm86_trap_stubs:
    trap_stub_table vm86_trap_common

# The CPU left vm86 mode through the monitor's TSS: SS:ESP is the top of the
# monitor stack, DS, ES, FS and GS are null (Intel SDM Vol. 3, 20.3.1).
vm86_trap_common:
    pushal
    movl $KERNEL_DS, %eax
    movl %eax, %ds
    movl %eax, %es
    cld
    pushl %esp                 # vm86_trap(Vm86Frame*)
    call vm86_trap
    addl $4, %esp
    testl %eax, %eax
    jnz vm86_leave
    popal
    addl $8, %esp              # vector and error code
    iret                       # EFLAGS.VM in the frame: back to vm86 mode

# The call is over: back to the kernel stack vm86_enter saved.
vm86_leave:
    movl vm86_kernel_esp, %esp
    popl %edi
    popl %esi
    popl %ebx
    popl %ebp
    ret

# void vm86_enter(Vm86Frame* frame): enters vm86 mode with the registers of
# frame (which must sit at the top of the monitor stack, where the TSS's esp0
# points) and returns when vm86_trap() ends the call.
    .globl vm86_enter
vm86_enter:
    movl 4(%esp), %eax
    pushl %ebp
    pushl %ebx
    pushl %esi
    pushl %edi
    movl %esp, vm86_kernel_esp
    movl %eax, %esp
    popal
    addl $8, %esp
    iret

# int vm86_catch(void (*body)(void*), void* arg): runs body(arg); returns 0
# when it returns, 1 when it calls vm86_throw() instead. The ktest that proves
# a PANIC fires uses it from its panic hook. Not reentrant.
    .globl vm86_catch
vm86_catch:
    movl 4(%esp), %eax
    movl 8(%esp), %edx
    pushl %ebp
    pushl %ebx
    pushl %esi
    pushl %edi
    movl %esp, vm86_catch_esp
    pushl %edx
    call *%eax
    addl $4, %esp
    xorl %eax, %eax
    jmp 1f
    .globl vm86_throw
vm86_throw:
    movl vm86_catch_esp, %esp
    movl $1, %eax
1:  popl %edi
    popl %esi
    popl %ebx
    popl %ebp
    ret

    .bss
    .balign 4
    .globl vm86_kernel_esp
vm86_kernel_esp:
    .long 0
vm86_catch_esp:
    .long 0
