// The EL1 exception vector table. For now every exception is unexpected:
// each entry hands its number, ESR_EL1, ELR_EL1 and FAR_EL1 to
// arm64_unexpected_exception() (exceptions.cpp), which does not return.

// Arm ARM, "Exception vectors": the table holds 16 entries of 128 bytes (4 groups:
// current EL with SP_EL0, current EL with SP_ELx, lower EL AArch64, lower EL
// AArch32; each synchronous, IRQ, FIQ, SError), and VBAR_EL1 needs 2 KB alignment.
.macro vector index
    .balign 128
    mov     x0, #\index
    mrs     x1, esr_el1
    mrs     x2, elr_el1
    mrs     x3, far_el1
    b       arm64_unexpected_exception
.endm

    .text
    .balign 2048
    .globl arm64_exception_vectors
arm64_exception_vectors:
    .irp index, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    vector \index
    .endr
