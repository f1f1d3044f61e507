// The EL1 exception vector table and the common trap entry and exit. Every
// exception builds a TrapFrame (machine/context.h) on the kernel stack,
// calls arm64_trap(frame, vector) in trap.cpp, and returns through
// arm64_trap_return, which restores the frame (possibly edited) and erets.

#include "arch/arm64/layout.h"

// Arm ARM, "Exception vectors": 16 entries of 128 bytes in four groups
// (current EL with SP_EL0, current EL with SP_ELx, lower EL AArch64, lower
// EL AArch32), each synchronous, IRQ, FIQ, SError; VBAR_EL1 is 2 KB aligned.
// An entry has room for 32 instructions: it saves x0 and x1 and jumps to the
// common code with the vector number in x0. A synchronous exception from EL0
// (index 8) goes to el0_sync instead, which sends system calls down a
// shorter path.
.macro vector index
    .balign 128
    sub     sp, sp, #TRAP_FRAME_SIZE
    stp     x0, x1, [sp, #0]
    .if \index == 8
    b       el0_sync
    .else
    mov     x0, #\index
    b       trap_common
    .endif
.endm

// Saves x2-x30, SP_EL0, ELR, SPSR, ESR and FAR into the frame at sp (x0 and
// x1 are already there). Leaves ESR_EL1 in x10.
.macro save_frame
    stp     x2, x3, [sp, #16]
    stp     x4, x5, [sp, #32]
    stp     x6, x7, [sp, #48]
    stp     x8, x9, [sp, #64]
    stp     x10, x11, [sp, #80]
    stp     x12, x13, [sp, #96]
    stp     x14, x15, [sp, #112]
    stp     x16, x17, [sp, #128]
    stp     x18, x19, [sp, #144]
    stp     x20, x21, [sp, #160]
    stp     x22, x23, [sp, #176]
    stp     x24, x25, [sp, #192]
    stp     x26, x27, [sp, #208]
    stp     x28, x29, [sp, #224]
    mrs     x10, sp_el0
    stp     x30, x10, [sp, #240]
    mrs     x10, elr_el1
    mrs     x11, spsr_el1
    stp     x10, x11, [sp, #TF_ELR]
    mrs     x10, esr_el1
    mrs     x11, far_el1
    stp     x10, x11, [sp, #TF_ESR]
.endm

    .text
    .balign 2048
    .globl arm64_exception_vectors
arm64_exception_vectors:
    .irp index, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    vector \index
    .endr

trap_common:
    save_frame
    mov     x1, x0                   // arm64_trap(frame, vector)
    mov     x0, sp
    mov     x29, xzr                 // a backtrace ends at the trap
    bl      arm64_trap
    b       arm64_trap_return

// Arm ARM, ESR_ELx: EC [31:26] = 0x15 is an SVC from AArch64.
el0_sync:
    save_frame
    mov     x0, sp
    mov     x29, xzr
    lsr     x10, x10, #26
    cmp     x10, #0x15
    b.ne    1f
    bl      arm64_syscall            // arm64_syscall(frame)
    b       arm64_trap_return
1:  mov     x1, #8                   // arm64_trap(frame, k_vector_el0_sync)
    bl      arm64_trap

    .globl arm64_trap_return
arm64_trap_return:
    ldp     x10, x11, [sp, #TF_ELR]
    msr     elr_el1, x10
    msr     spsr_el1, x11
    ldp     x30, x10, [sp, #240]
    msr     sp_el0, x10
    ldp     x0, x1, [sp, #0]
    ldp     x2, x3, [sp, #16]
    ldp     x4, x5, [sp, #32]
    ldp     x6, x7, [sp, #48]
    ldp     x8, x9, [sp, #64]
    ldp     x10, x11, [sp, #80]
    ldp     x12, x13, [sp, #96]
    ldp     x14, x15, [sp, #112]
    ldp     x16, x17, [sp, #128]
    ldp     x18, x19, [sp, #144]
    ldp     x20, x21, [sp, #160]
    ldp     x22, x23, [sp, #176]
    ldp     x24, x25, [sp, #192]
    ldp     x26, x27, [sp, #208]
    ldp     x28, x29, [sp, #224]
    add     sp, sp, #TRAP_FRAME_SIZE
    eret
