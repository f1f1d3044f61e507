# The i386 kernel's first instructions. Reached either from a multiboot loader
# (EAX = 0x2BADB002, EBX = the multiboot information) or from Toll's own boot
# sector (EAX = 'TOLL', EBX = the command line). Runs at the physical load
# address with paging off; turns on a boot page directory that maps the first
# 16 MB both at 0 and at 0xC0000000, then continues at the kernel's high
# (linked) addresses and calls i386_boot().

#include "arch/i386/layout.h"

    .section .multiboot, "a"
    .balign 4
# Multiboot specification 0.6.96, 3.1.1: magic, flags, checksum.
multiboot_header:
    .long MULTIBOOT_HEADER_MAGIC
    .long MULTIBOOT_HEADER_FLAGS
    .long -(MULTIBOOT_HEADER_MAGIC + MULTIBOOT_HEADER_FLAGS)

    .section .boot.text, "ax"
    .code32
    .globl _start
_start:
    cli
    cld
    movl %eax, %esi                  # keep the loader's magic and pointer
    movl %ebx, %edi

    # Zero .bss (physical addresses: paging is still off). A multiboot loader
    # does this too, but the boot sector does not.
    movl $(__bss_start - KERNEL_BASE), %ebx
    movl $(__bss_end - KERNEL_BASE), %ecx
    subl %ebx, %ecx
    xorl %eax, %eax
    pushl %edi
    movl %ebx, %edi
    rep stosb
    popl %edi

    # Boot page directory: 4 MB pages (PSE) for the first 16 MB, identity and
    # at KERNEL_BASE. Intel SDM Vol. 3, 4.3: PDE with PS=1 maps 4 MB.
    movl $(boot_page_directory - KERNEL_BASE), %ebx
    movl $0x00000083, %eax           # present | writable | 4 MB page
    xorl %ecx, %ecx
1:  movl %eax, (%ebx, %ecx, 4)
    movl %eax, (KERNEL_BASE >> 22) * 4(%ebx, %ecx, 4)
    addl $0x400000, %eax
    incl %ecx
    cmpl $BOOT_MAPPED_MB / 4, %ecx
    jb 1b

    movl %cr4, %eax
    orl $CR4_PSE, %eax
    movl %eax, %cr4
    movl %ebx, %cr3
    movl %cr0, %eax
    orl $(CR0_PG | CR0_WP), %eax
    movl %eax, %cr0
    movl $higher_half, %eax
    jmp *%eax

    .text
higher_half:
    movl $boot_stack_top, %esp
    xorl %ebp, %ebp
    pushl %edi                       # i386_boot(magic, pointer)
    pushl %esi
    call i386_boot
2:  hlt
    jmp 2b

    .bss
    .balign 4096
    .globl boot_page_directory
boot_page_directory:
    .skip 4096
    .balign 16
    .globl boot_stack_bottom
boot_stack_bottom:
    .skip BOOT_STACK_SIZE
    .globl boot_stack_top
boot_stack_top:
