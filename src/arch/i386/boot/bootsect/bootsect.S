# Toll's boot sector: the whole loader of the loaderless boot. It reads the
# command-line sector and the kernel from its own disk with BIOS calls, copies
# the kernel above 1 MB, and enters it in 32-bit protected mode.
#
# The disk (written by mkdisk.py): LBA 0 this sector, LBA 1 the command line
# (NUL-terminated; tools/run writes it on a private copy for each run), LBA 2
# onwards the kernel as a flat binary of its physical image from 1 MB up.
# mkdisk.py patches the kernel's size and entry into the header at the end.
#
# The kernel may be many megabytes (it carries its initial ramdisk), more than
# real mode can address. So the kernel is read in chunks into a low bounce
# buffer, and each chunk is copied to its place above 1 MB from "unreal mode":
# real mode with DS and ES keeping the 4 GB limits loaded in protected mode.
#
# Question for the reader: why is unreal mode set up again before every copy,
# not once? (Hint: what might a BIOS do inside INT 13h?)

#include "arch/i386/layout.h"

#define SECTOR_SIZE 512
#define BOOT_ADDR 0x7C00          /* the BIOS loads LBA 0 here and jumps to it */
#define CMDLINE_ADDR 0x7E00       /* the command line, handed to the kernel in EBX */
#define CMDLINE_LBA 1
#define KERNEL_LBA 2
#define BOUNCE_SEGMENT 0x1000     /* bounce buffer at physical 0x10000 */
#define CHUNK_SECTORS 64          /* 32 KB per read: under every BIOS's 127 */
#define DWORDS_PER_SECTOR_SHIFT 7 /* 512 bytes = 2^7 dwords */
#define HEADER_OFFSET 0x1F0       /* mkdisk.py knows this offset and the magic */
#define HEADER_MAGIC 0x31534254   /* "TBS1": Toll boot sector, layout 1 */

/* Selectors of the GDT below. */
#define CODE_SELECTOR 0x08
#define DATA_SELECTOR 0x10

/* PC/AT COM1 and 16550 registers, for the error messages (uart.cpp has the same). */
#define COM1 0x3F8
#define COM1_LINE_CONTROL (COM1 + 3)
#define COM1_LINE_STATUS (COM1 + 5)
#define LCR_DLAB 0x80
#define LCR_8N1 0x03
#define LSR_THR_EMPTY 0x20

/* IBM PC/AT: the system control port A (0x92), bit 1 gates A20, bit 0 resets. */
#define PORT_SYSTEM_CONTROL_A 0x92
#define SCA_A20 0x02
#define SCA_RESET 0x01

    .code16
    .text
    .globl start
start:
    cli
    xorw %ax, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movw $BOOT_ADDR, %sp
    ljmp $0, $1f                     # some BIOSes enter at 07C0:0000
1:  sti
    cld
    movb %dl, boot_drive             # the BIOS passes the boot drive in DL

    # Phoenix EDD 3.0, INT 13h AH=41h: are the LBA (extended) reads there?
    movb $0x41, %ah
    movw $0x55AA, %bx
    int $0x13
    movw $msg_no_edd, %si
    jc fail
    cmpw $0xAA55, %bx
    jne fail
    testb $1, %cl                    # CX bit 0: extended disk access
    jz fail

    # The command-line sector goes straight to its place (the DAP starts out
    # describing it); its last byte is forced to NUL.
    call read_sectors
    movb $0, CMDLINE_ADDR + SECTOR_SIZE - 1

    # Fast A20 through port 0x92, then proof: write above 1 MB and see that
    # the same offset below 1 MB did not change.
    inb $PORT_SYSTEM_CONTROL_A, %al
    orb $SCA_A20, %al
    andb $~SCA_RESET, %al
    outb %al, $PORT_SYSTEM_CONTROL_A
    call unreal
    movl $BOOT_ADDR, %esi
    movl $(1 << 20) + BOOT_ADDR, %edi  # BOOT_ADDR itself if A20 is masked
    movl (%esi), %eax
    notl %eax
    movl %eax, (%edi)
    cmpl %eax, (%esi)
    sti
    movw $msg_a20, %si
    je fail

    # The kernel: CHUNK_SECTORS at a time into the bounce buffer, each chunk
    # copied to KERNEL_LOAD_PHYS onwards.
    movw $0, dap_offset
    movw $BOUNCE_SEGMENT, dap_segment
    movl $KERNEL_LBA, dap_lba
    movl $KERNEL_LOAD_PHYS, %edi
    movl kernel_sectors, %ebp        # sectors still to read
load_chunk:
    testl %ebp, %ebp
    jz enter_kernel
    movl $CHUNK_SECTORS, %ecx
    cmpl %ecx, %ebp
    jae 1f
    movl %ebp, %ecx
1:  movw %cx, dap_count
    call read_sectors
    addl %ecx, dap_lba
    subl %ecx, %ebp
    shll $DWORDS_PER_SECTOR_SHIFT, %ecx
    call unreal                      # INT 13h may have reset the segment limits
    movl $(BOUNCE_SEGMENT << 4), %esi
    rep movsl (%esi), %es:(%edi)     # 32-bit addressing: 4 GB limits
    sti
    jmp load_chunk

    # Intel SDM Vol. 3, 9.9.1: switching to protected mode. The kernel wants
    # flat 4 GB segments, paging and interrupts off.
enter_kernel:
    cli
    lgdt gdt_pointer
    movl %cr0, %eax
    orb $CR0_PE, %al
    movl %eax, %cr0
    ljmp $CODE_SELECTOR, $protected_mode

    .code32
protected_mode:
    movw $DATA_SELECTOR, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %fs
    movw %ax, %gs
    movw %ax, %ss
    movl $BOOT_ADDR, %esp
    movl $TOLL_BOOTSECT_MAGIC, %eax
    movl $CMDLINE_ADDR, %ebx
    jmp *kernel_entry
    .code16

# read_sectors: INT 13h AH=42h with the DAP below. Keeps every register;
# on failure it does not return.
read_sectors:
    pushal
    movb $0x42, %ah
    movb boot_drive, %dl
    movw $dap, %si
    int $0x13
    movw $msg_disk, %si
    jc fail
    popal
    ret

# unreal: DS and ES get the flat data segment's 4 GB limit, then real mode
# again with base 0. Intel SDM Vol. 3, 9.9.2 says the limits outlive the
# return to real mode. Returns with interrupts off (a BIOS interrupt handler
# could reload DS or ES): the caller turns them back on. Clobbers EAX, BX.
unreal:
    cli
    lgdt gdt_pointer
    movl %cr0, %eax
    orb $CR0_PE, %al
    movl %eax, %cr0
    movw $DATA_SELECTOR, %bx
    movw %bx, %ds
    movw %bx, %es
    andb $~CR0_PE, %al
    movl %eax, %cr0
    xorw %bx, %bx
    movw %bx, %ds
    movw %bx, %es
    ret

# fail: prints "PANIC boot sector: " and the message at SI on the screen (BIOS
# teletype) and on COM1 (so that tools/run reports it), then halts.
fail:
    movw $COM1_LINE_CONTROL, %dx     # COM1: 115200 8N1, as the kernel sets it
    movb $LCR_DLAB, %al
    outb %al, %dx
    movw $COM1, %dx
    movb $1, %al
    outb %al, %dx
    movw $COM1_LINE_CONTROL, %dx
    movb $LCR_8N1, %al
    outb %al, %dx
    pushw %si
    movw $msg_panic, %si
    call print
    popw %si
    call print
halt:
    cli
    hlt
    jmp halt

print:
    lodsb
    testb %al, %al
    jz 2f
    movb $0x0E, %ah                  # INT 10h AH=0Eh: teletype output
    movw $0x0007, %bx
    int $0x10
    movw $COM1_LINE_STATUS, %dx
1:  inb %dx, %al
    testb $LSR_THR_EMPTY, %al
    jz 1b
    movb -1(%si), %al
    movw $COM1, %dx
    outb %al, %dx
    jmp print
2:  ret

msg_panic:  .asciz "PANIC boot sector: "
msg_no_edd: .asciz "no INT 13h extensions\r\n"
msg_disk:   .asciz "disk read error\r\n"
msg_a20:    .asciz "cannot enable A20\r\n"

boot_drive: .byte 0

# Phoenix EDD 3.0: the disk address packet of INT 13h AH=42h.
dap:
    .byte 16, 0                      # size of the packet, reserved
dap_count:   .word 1                 # sectors to read
dap_offset:  .word CMDLINE_ADDR      # destination segment:offset
dap_segment: .word 0
dap_lba:     .long CMDLINE_LBA, 0    # first sector, 64 bits

# Intel SDM Vol. 3, 3.4.5: flat 4 GB code and data descriptors. The null
# descriptor's slot holds the pointer that LGDT reads.
    .balign 8
gdt:
gdt_pointer:
    .word gdt_end - gdt - 1
    .long gdt
    .word 0
    .quad 0x00CF9A000000FFFF         # 0x08: code, base 0, limit 4 GB, 32-bit
    .quad 0x00CF92000000FFFF         # 0x10: data, base 0, limit 4 GB
gdt_end:

# The header that mkdisk.py fills in.
    .org HEADER_OFFSET
    .long HEADER_MAGIC
kernel_sectors: .long 0              # sectors of kernel from KERNEL_LBA on
kernel_entry:   .long 0              # physical entry point (ELF e_entry)
kernel_pages:   .word 0              # 4 KB pages the kernel spans in memory,
                                     # .bss included (for tools/run --add)
    .byte 0x55, 0xAA                 # the BIOS boots only sectors ending so
