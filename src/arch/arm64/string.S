// memset and memcpy for the arm64 kernel, replacing the weak C loops of
// src/lib/string.cpp: 64 bytes per iteration in pairs of registers (STP,
// LDP with post-index), and DC ZVA for long zeroing, which zeroes a whole
// block (DCZID_EL0.BS; 64 bytes on QEMU's max CPU) per instruction. Each
// instruction counts once in QEMU's deterministic mode: a page zeroed costs
// about 180 instructions, a page copied 640, against 770 and 1,300 for C.
// Integer registers only: the kernel never touches the FP/SIMD registers,
// which may hold a user program's values (lazy switching).

    .text
    .balign 4
// void* memset(void* dst, int value, size_t n): x0 is returned untouched.
    .globl memset
    .type memset, %function
memset:
    mov     x8, x0
    and     x1, x1, #0xff
    orr     x1, x1, x1, lsl #8
    orr     x1, x1, x1, lsl #16
    orr     x1, x1, x1, lsl #32
    cbnz    x1, 2f
    // Zero: DC ZVA while the cursor is block-aligned and four blocks remain.
    // Arm ARM, DCZID_EL0: DZP (bit 4) prohibits it; BS (bits 3:0) is log2 of
    // the block size in words.
    mrs     x9, dczid_el0
    tbnz    x9, #4, 2f
    and     x9, x9, #0xf
    mov     x10, #4
    lsl     x10, x10, x9            // the block, in bytes
    sub     x11, x10, #1
    tst     x8, x11
    b.ne    2f                      // not aligned: the stores do it
    lsl     x11, x10, #2            // four blocks
    cmp     x2, x11
    b.lo    2f
1:  dc      zva, x8
    add     x8, x8, x10
    dc      zva, x8
    add     x8, x8, x10
    dc      zva, x8
    add     x8, x8, x10
    dc      zva, x8
    add     x8, x8, x10
    sub     x2, x2, x11
    cmp     x2, x11
    b.hs    1b
2:  subs    x2, x2, #64
    b.lo    4f
3:  stp     x1, x1, [x8], #16
    stp     x1, x1, [x8], #16
    stp     x1, x1, [x8], #16
    stp     x1, x1, [x8], #16
    subs    x2, x2, #64
    b.hs    3b
4:  adds    x2, x2, #64             // the 0-63 bytes left
    b.eq    6f
5:  strb    w1, [x8], #1
    subs    x2, x2, #1
    b.ne    5b
6:  ret
    .size memset, . - memset

// void* memcpy(void* dst, const void* src, size_t n)
    .globl memcpy
    .type memcpy, %function
memcpy:
    mov     x8, x0
    subs    x2, x2, #64
    b.lo    2f
1:  ldp     x4, x5, [x1], #16
    ldp     x6, x7, [x1], #16
    ldp     x9, x10, [x1], #16
    ldp     x11, x12, [x1], #16
    stp     x4, x5, [x8], #16
    stp     x6, x7, [x8], #16
    stp     x9, x10, [x8], #16
    stp     x11, x12, [x8], #16
    subs    x2, x2, #64
    b.hs    1b
2:  adds    x2, x2, #64
    b.eq    4f
3:  ldrb    w4, [x1], #1
    strb    w4, [x8], #1
    subs    x2, x2, #1
    b.ne    3b
4:  ret
    .size memcpy, . - memcpy
