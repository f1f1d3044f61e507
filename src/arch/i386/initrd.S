# The initial ramdisk (a cpio archive built by tools/mkinitrd), linked into
# the kernel image so that every boot path carries it.
    .section .rodata
    .balign 16
    .globl toll_initrd_start
toll_initrd_start:
    .incbin TOLL_INITRD_PATH
    .globl toll_initrd_end
toll_initrd_end:
    .byte 0
