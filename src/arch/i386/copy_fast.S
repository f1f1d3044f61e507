# The 4/4 split's fast user copy, in the trampoline: linked at
# TRAMPOLINE_BASE like trap_entry.S, because it runs with the user's CR3
# loaded, where only the trampoline is mapped. uaccess.cpp decides when to
# use it (short copies through the trampoline's copy buffer); a page fault on
# the copy is sent back here by trap_entry.S (fast_copy_access or
# fast_copy_access_bytes -> fast_copy_fault) without entering the kernel.
# The copy moves 32-bit words (rep movsl), then the last 0-3 bytes (rep
# movsb): a quarter of the repetitions of a byte copy, and QEMU's
# deterministic mode counts each repetition as an instruction.

#include "arch/i386/asm_offsets.h"
#include "arch/i386/layout.h"

/* A variable of this CPU's block as an offset from the top of its
   trampoline stack, where %esp is during the copy. */
#define VAR(tv) ((tv) - TC_STACK_TOP)

    .section .trampoline.text, "ax"
# bool i386_fast_copy(void* to, const void* from, size_t length)
# The 4/4 fast path: one side of the copy is this CPU's copy buffer, mapped
# in both spaces. Runs on this CPU's
# trampoline stack (the thread's kernel stack is not mapped under the user's
# CR3), found through the kernel's per-CPU segment before the switch; loads
# the user's CR3, copies, and loads the kernel's back. A page fault on the
# copy comes back through fast_copy_fault and the routine returns false.
    .globl i386_fast_copy
i386_fast_copy:
    pushl %esi
    pushl %edi
    movl 12(%esp), %edi
    movl 16(%esp), %esi
    movl 20(%esp), %ecx
    movl %fs:CPU_PORT_WORD, %eax
    addl $TC_STACK_TOP - TC_EXIT_SP, %eax # the top of this CPU's trampoline stack
    movl %esp, VAR(TV_SAVED_ESP)(%eax)
    movl %eax, %esp
# LAB 4x4 BEGIN: load the user's CR3 (VAR(TV_USER_CR3) from %esp), copy %ecx bytes from %esi to %edi, four at a time with the instruction labelled fast_copy_access and the remaining 0-3 with the one labelled fast_copy_access_bytes, reload the kernel's CR3 (VAR(TV_KERNEL_CR3))
    movl %ecx, %edx
    shrl $2, %ecx                       # whole words
    andl $3, %edx                       # and the bytes after them
    movl VAR(TV_USER_CR3)(%esp), %eax
    movl %eax, %cr3
    .globl fast_copy_access
fast_copy_access:
    rep movsl
    movl %edx, %ecx
    .globl fast_copy_access_bytes
fast_copy_access_bytes:
    rep movsb
    movl VAR(TV_KERNEL_CR3)(%esp), %eax
    movl %eax, %cr3
# LAB 4x4 STUB
#     .globl fast_copy_access
# fast_copy_access:
#     .globl fast_copy_access_bytes
# fast_copy_access_bytes:
# LAB 4x4 END
    movl VAR(TV_SAVED_ESP)(%esp), %esp
    movl $1, %eax
    popl %edi
    popl %esi
    ret
    .globl fast_copy_fault
fast_copy_fault:
    # %esp is back at the top of this CPU's trampoline stack (the fault's
    # iret restored it).
    movl VAR(TV_KERNEL_CR3)(%esp), %eax
    movl %eax, %cr3
    movl VAR(TV_SAVED_ESP)(%esp), %esp
    xorl %eax, %eax
    popl %edi
    popl %esi
    ret
