// The initial ramdisk (a cpio archive of the arm64 user programs, built by
// tools/mkinitrd), linked into the kernel image.
    .section .rodata
    .balign 16
    .globl toll_initrd_start
toll_initrd_start:
    .incbin TOLL_INITRD_PATH
    .globl toll_initrd_end
toll_initrd_end:
    .byte 0
