# Where another CPU starts: the boot CPU copies i386_ap_start .. _end to
# AP_START_PHYS and names that page in the STARTUP IPI, so the CPU begins in
# real mode at AP_START_PHYS >> 4 : 0. It loads a flat GDT of its own, enters
# protected mode, turns paging on with the control registers the boot CPU
# left in i386_ap_start_block (CR3 a directory that also maps the first 4 MB
# at 0, so that the instruction after the move to CR0 is still there), and
# jumps to the kernel's high addresses. Intel SDM Vol. 3, 9.9.1 (switching to
# protected mode) and 8.4.4.1 (the MP start-up).
#include "arch/i386/layout.h"

    .section .rodata
    .code16
    .balign 16
    .globl i386_ap_start, i386_ap_start_end
i386_ap_start:
    cli
    cld
    movw %cs, %ax
    movw %ax, %ds
    lgdtl ap_gdtr - i386_ap_start
    movl %cr0, %eax
    orl $CR0_PE, %eax
    movl %eax, %cr0
    ljmpl $0x08, $(AP_START_PHYS + ap_protected - i386_ap_start)

    .code32
ap_protected:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movl $(i386_ap_start_block - KERNEL_BASE), %ebx   # physical: no paging yet
    movl AP_CR4(%ebx), %eax
    movl %eax, %cr4
    movl AP_CR3(%ebx), %eax
    movl %eax, %cr3
    movl AP_CR0(%ebx), %eax
    movl %eax, %cr0
    movl $ap_high, %eax
    jmp *%eax

    # Flat 4 GB code (selector 0x08) and data (0x10): Intel SDM Vol. 3, 3.4.5.
    .balign 8
ap_gdt:
    .quad 0
    .quad 0x00CF9A000000FFFF
    .quad 0x00CF92000000FFFF
ap_gdtr:
    .word 3 * 8 - 1
    .long AP_START_PHYS + ap_gdt - i386_ap_start
i386_ap_start_end:

    .text
ap_high:
    movl i386_ap_start_block + AP_STACK, %esp
    xorl %ebp, %ebp
    pushl i386_ap_start_block + AP_CPU
    call i386_ap_main
1:  hlt
    jmp 1b
