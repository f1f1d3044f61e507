// Switching kernel stacks: the heart of a context switch. What a C++ caller
// expects to survive a call (AAPCS64: x19-x29, the frame pointer, and the
// link register x30) is pushed on the old stack, the stack pointer is saved,
// and the new thread's registers are popped from its stack.

// A switch frame, 96 bytes from low to high: x19, x20, ..., x28, x29, x30.
    .text
    .balign 4
    // void arm64_switch_stacks(uint64_t* save_sp, uint64_t new_sp)
    .globl arm64_switch_stacks
arm64_switch_stacks:
    sub     sp, sp, #96
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]
    mov     x9, sp
    str     x9, [x0]
    mov     sp, x1
    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    add     sp, sp, #96
    ret

    // The first "return" of a new kernel thread: the switch frame left the
    // entry function in x19 and its argument in x20; x21 holds what to call
    // if the entry function returns. The scheduler finishes the switch that
    // brought us here first (sched_switch_tail keeps x19-x21).
    .globl arm64_kernel_thread_start
arm64_kernel_thread_start:
    bl      sched_switch_tail
    mov     x0, x20
    blr     x19
    blr     x21
1:  wfe
    b       1b

    // The first "return" of a new user thread (fork, spawn): finish the
    // switch, then leave through the trap exit with the frame at sp.
    .globl arm64_new_user_thread_start
arm64_new_user_thread_start:
    bl      sched_switch_tail
    b       arm64_trap_return

    // The FP/SIMD registers (machine/context.h, FpState: q0-q31, FPCR, FPSR).
    .arch_extension fp
    .arch_extension simd
    // void arm64_fp_save(FpState* to)
    .globl arm64_fp_save
arm64_fp_save:
    stp     q0, q1, [x0, #0]
    stp     q2, q3, [x0, #32]
    stp     q4, q5, [x0, #64]
    stp     q6, q7, [x0, #96]
    stp     q8, q9, [x0, #128]
    stp     q10, q11, [x0, #160]
    stp     q12, q13, [x0, #192]
    stp     q14, q15, [x0, #224]
    stp     q16, q17, [x0, #256]
    stp     q18, q19, [x0, #288]
    stp     q20, q21, [x0, #320]
    stp     q22, q23, [x0, #352]
    stp     q24, q25, [x0, #384]
    stp     q26, q27, [x0, #416]
    stp     q28, q29, [x0, #448]
    stp     q30, q31, [x0, #480]
    mrs     x9, fpcr
    mrs     x10, fpsr
    add     x0, x0, #512
    stp     x9, x10, [x0]
    ret

    // void arm64_fp_restore(const FpState* from)
    .globl arm64_fp_restore
arm64_fp_restore:
    ldp     q0, q1, [x0, #0]
    ldp     q2, q3, [x0, #32]
    ldp     q4, q5, [x0, #64]
    ldp     q6, q7, [x0, #96]
    ldp     q8, q9, [x0, #128]
    ldp     q10, q11, [x0, #160]
    ldp     q12, q13, [x0, #192]
    ldp     q14, q15, [x0, #224]
    ldp     q16, q17, [x0, #256]
    ldp     q18, q19, [x0, #288]
    ldp     q20, q21, [x0, #320]
    ldp     q22, q23, [x0, #352]
    ldp     q24, q25, [x0, #384]
    ldp     q26, q27, [x0, #416]
    ldp     q28, q29, [x0, #448]
    ldp     q30, q31, [x0, #480]
    add     x0, x0, #512
    ldp     x9, x10, [x0]
    msr     fpcr, x9
    msr     fpsr, x10
    ret
