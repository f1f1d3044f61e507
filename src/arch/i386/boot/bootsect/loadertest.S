# A stand-in kernel that tests the boot sector alone (tests/system/disk.cmake):
# it checks what bootsect.S promises the kernel and reports in the serial
# protocol (book/appendix/interfaces.rst), then powers off as the real
# kernel does.
#
# It carries a payload of several megabytes in which every dword holds its own
# offset, so a chunk copied to the wrong place, dropped or cut short is caught.
# Command line "triple-fault ..." makes it triple-fault instead (tools/run must
# report a reset).

#include "arch/i386/layout.h"

#define PAYLOAD_DWORDS ((4 << 20) / 4 + 387) /* 4 MB and a partial chunk */
#define LOW_MEMORY_END 0xA0000                /* the command line lives below this */
#define EFLAGS_IF 0x200

/* PC/AT COM1 and its 16550 registers (uart.cpp programs it the same way). */
#define COM1 0x3F8
#define COM1_LINE_CONTROL (COM1 + 3)
#define COM1_LINE_STATUS (COM1 + 5)
#define LSR_THR_EMPTY 0x20
#define LSR_TRANSMITTER_IDLE 0x40
/* Power off: QEMU's isa-debug-exit (as tools/run configures it) and Bochs. */
#define QEMU_DEBUG_EXIT 0xF4
#define BOCHS_SHUTDOWN 0x8900

    .code32
    .text
    .globl _start
_start:
    movl %eax, %esi                  # the magic
    movl %ebx, %edi                  # the command line
    pushfl
    popl %ebp                        # EFLAGS as the boot sector left them
    movl $stack_top, %esp
    call uart_init

    pushl $str_triple
    call cmdline_starts_with
    testl %eax, %eax
    jnz triple_fault

    # bootsect.magic: EAX = 'TOLL'.
    xorl %eax, %eax
    cmpl $TOLL_BOOTSECT_MAGIC, %esi
    setne %al
    movl $name_magic, %ebx
    call report

    # bootsect.cmdline: EBX points below 640 KB at "loader-test ... end".
    pushl $str_loader_test
    call cmdline_starts_with
    testl %eax, %eax
    jz 1f
    cmpl $LOW_MEMORY_END, %edi
    jae 1f
    movl %edi, %ecx                  # find the NUL
2:  cmpb $0, (%ecx)
    je 3f
    incl %ecx
    jmp 2b
3:  cmpl $0x646E6520, -4(%ecx)       # the last four bytes are " end"
    jne 1f
    xorl %eax, %eax
    jmp 4f
1:  movl $1, %eax
4:  movl $name_cmdline, %ebx
    call report

    # bootsect.protected_mode: CR0.PE on, CR0.PG off, interrupts off, and
    # code and data segments with 4 GB limits (Intel SDM Vol. 2, LSL).
    xorl %eax, %eax
    movl %cr0, %ecx
    andl $(CR0_PE | CR0_PG), %ecx
    cmpl $CR0_PE, %ecx
    setne %al
    testl $EFLAGS_IF, %ebp
    setnz %ah
    movw %cs, %dx
    lsll %edx, %ecx
    cmpl $0xFFFFFFFF, %ecx
    jne 1f
    movw %ds, %dx
    lsll %edx, %ecx
    cmpl $0xFFFFFFFF, %ecx
    je 2f
1:  orb $1, %al
2:  movl $name_protected_mode, %ebx
    call report

    # bootsect.large_kernel: the payload arrived whole and in place.
    xorl %eax, %eax
    movl $payload, %ecx
1:  movl %ecx, %edx
    subl $payload, %edx
    cmpl %edx, (%ecx)
    jne 2f
    addl $4, %ecx
    cmpl $payload_end, %ecx
    jb 1b
    jmp 3f
2:  incl %eax
3:  movl $name_large_kernel, %ebx
    call report

    # DONE <passed> passed, <failed> failed (single digits suffice here).
    movl $str_done, %ebx
    call puts
    movb passed, %al
    addb $'0', %al
    call putc
    movl $str_passed, %ebx
    call puts
    movb failed, %al
    addb $'0', %al
    call putc
    movl $str_failed, %ebx
    call puts
    call poweroff

# An IDT with limit 0: the next exception cannot be delivered, nor the #GP
# and #DF that follow (Intel SDM Vol. 3, 6.15, "Interrupt 8").
triple_fault:
    lidt empty_idt
    int3
    jmp triple_fault

# cmdline_starts_with(prefix): EAX = 1 if the command line (EDI) starts with
# the NUL-terminated prefix, else 0. Pops its argument.
cmdline_starts_with:
    pushl %esi
    pushl %edi
    movl 12(%esp), %esi
1:  movb (%esi), %al
    testb %al, %al
    jz 2f
    cmpb %al, (%edi)
    jne 3f
    incl %esi
    incl %edi
    jmp 1b
2:  movl $1, %eax
    jmp 4f
3:  xorl %eax, %eax
4:  popl %edi
    popl %esi
    ret $4

# report: "TEST <name at EBX> PASS" if EAX = 0, else FAIL; counts both.
report:
    pushl %eax
    pushl %ebx
    movl $str_test, %ebx
    call puts
    popl %ebx
    call puts
    popl %eax
    testl %eax, %eax
    jnz 1f
    incb passed
    movl $str_pass, %ebx
    jmp puts
1:  incb failed
    movl $str_fail, %ebx
    jmp puts

uart_init:
    movw $COM1_LINE_CONTROL, %dx
    movb $0x80, %al                  # DLAB
    outb %al, %dx
    movw $COM1, %dx
    movb $1, %al                     # divisor 1: 115200 baud
    outb %al, %dx
    incw %dx
    xorb %al, %al
    outb %al, %dx
    movw $COM1_LINE_CONTROL, %dx
    movb $0x03, %al                  # 8N1
    outb %al, %dx
    ret

# puts: the NUL-terminated string at EBX.
puts:
    movb (%ebx), %al
    testb %al, %al
    jz 1f
    call putc
    incl %ebx
    jmp puts
1:  ret

putc:
    pushl %eax
    movw $COM1_LINE_STATUS, %dx
1:  inb %dx, %al
    testb $LSR_THR_EMPTY, %al
    jz 1b
    popl %eax
    movw $COM1, %dx
    outb %al, %dx
    ret

poweroff:
    movw $COM1_LINE_STATUS, %dx      # let the last byte leave the UART
1:  inb %dx, %al
    testb $LSR_TRANSMITTER_IDLE, %al
    jz 1b
    movb $0, %al
    outb %al, $QEMU_DEBUG_EXIT
    movw $BOCHS_SHUTDOWN, %dx
    movl $str_shutdown, %ebx
2:  movb (%ebx), %al
    testb %al, %al
    jz 3f
    outb %al, %dx
    incl %ebx
    jmp 2b
3:  cli
    hlt
    jmp 3b

    .data
passed: .byte 0
failed: .byte 0
    .balign 4
empty_idt:
    .word 0
    .long 0
str_triple:       .asciz "triple-fault"
str_loader_test:  .asciz "loader-test"
str_test:         .asciz "TEST "
str_pass:         .asciz " PASS\r\n"
str_fail:         .asciz " FAIL\r\n"
str_done:         .asciz "DONE "
str_passed:       .asciz " passed, "
str_failed:       .asciz " failed\r\n"
str_shutdown:     .asciz "Shutdown"
name_magic:          .asciz "bootsect.magic"
name_cmdline:        .asciz "bootsect.cmdline"
name_protected_mode: .asciz "bootsect.protected_mode"
name_large_kernel:   .asciz "bootsect.large_kernel"

    .balign 4
payload:
    .rept PAYLOAD_DWORDS
    .long . - payload
    .endr
payload_end:

    .bss
    .balign 16
    .skip 4096
stack_top:
