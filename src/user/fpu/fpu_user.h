/* fpu_user.h: what the FPU tests and benchmarks share. On i386: the FXSAVE image
 * (Intel SDM Vol. 1, 10.5.1, table 10-2), user-mode FXSAVE and FXRSTOR, and
 * the initial state a fresh process must see. The programs are compiled
 * with -mno-sse -mno-mmx so that the compiler never touches the FPU behind
 * their back: every FPU instruction is one of these inline-assembly lines. */
#ifndef TOLL_FPU_USER_H
#define TOLL_FPU_USER_H

#include <stdint.h>
#include <string.h>

#if defined(__aarch64__)
/* arm64: the FP/SIMD registers V0-V31 (128 bits each), FPCR and FPSR (Arm
 * ARM, "The SIMD and floating-point registers"). The program is compiled
 * with -mgeneral-regs-only, so only these lines touch them; musl's string
 * routines may use V0-V7 and V16-V31 in passing, so the image the tests
 * compare is taken before any library call can. The offsets that
 * fpu_compare_registers reports are into this image. */
/* -mgeneral-regs-only also forbids FP/SIMD in inline assembly; allow it there. */
#define FPU_ASM_ENABLE ".arch_extension fp\n\t.arch_extension simd\n\t"

struct FxImage {
    uint8_t v[32][16];
    uint64_t fpcr, fpsr;
} __attribute__((aligned(16)));

/** Stores V0-V31, FPCR and FPSR into @p image. */
static inline void fpu_save(struct FxImage* image)
{
    uint64_t fpcr, fpsr;
    __asm__ volatile(FPU_ASM_ENABLE "stp q0, q1, [%0, #0]\n\t"
                                    "stp q2, q3, [%0, #32]\n\t"
                                    "stp q4, q5, [%0, #64]\n\t"
                                    "stp q6, q7, [%0, #96]\n\t"
                                    "stp q8, q9, [%0, #128]\n\t"
                                    "stp q10, q11, [%0, #160]\n\t"
                                    "stp q12, q13, [%0, #192]\n\t"
                                    "stp q14, q15, [%0, #224]\n\t"
                                    "stp q16, q17, [%0, #256]\n\t"
                                    "stp q18, q19, [%0, #288]\n\t"
                                    "stp q20, q21, [%0, #320]\n\t"
                                    "stp q22, q23, [%0, #352]\n\t"
                                    "stp q24, q25, [%0, #384]\n\t"
                                    "stp q26, q27, [%0, #416]\n\t"
                                    "stp q28, q29, [%0, #448]\n\t"
                                    "stp q30, q31, [%0, #480]"
                     :
                     : "r"(image->v)
                     : "memory");
    __asm__ volatile(FPU_ASM_ENABLE "mrs %0, fpcr\n\tmrs %1, fpsr" : "=r"(fpcr), "=r"(fpsr));
    image->fpcr = fpcr;
    image->fpsr = fpsr;
}

/** Loads V0-V31, FPCR and FPSR from @p image. */
static inline void fpu_load(const struct FxImage* image)
{
    __asm__ volatile(FPU_ASM_ENABLE "ldp q0, q1, [%0, #0]\n\t"
                                    "ldp q2, q3, [%0, #32]\n\t"
                                    "ldp q4, q5, [%0, #64]\n\t"
                                    "ldp q6, q7, [%0, #96]\n\t"
                                    "ldp q8, q9, [%0, #128]\n\t"
                                    "ldp q10, q11, [%0, #160]\n\t"
                                    "ldp q12, q13, [%0, #192]\n\t"
                                    "ldp q14, q15, [%0, #224]\n\t"
                                    "ldp q16, q17, [%0, #256]\n\t"
                                    "ldp q18, q19, [%0, #288]\n\t"
                                    "ldp q20, q21, [%0, #320]\n\t"
                                    "ldp q22, q23, [%0, #352]\n\t"
                                    "ldp q24, q25, [%0, #384]\n\t"
                                    "ldp q26, q27, [%0, #416]\n\t"
                                    "ldp q28, q29, [%0, #448]\n\t"
                                    "ldp q30, q31, [%0, #480]\n\t"
                                    "msr fpcr, %1\n\t"
                                    "msr fpsr, %2"
                     :
                     : "r"(image->v), "r"(image->fpcr), "r"(image->fpsr)
                     : "memory");
}

/** A state no fresh process has: every V register a distinct pattern, FPCR
 * rounding toward zero (RMode [23:22] = 0b11) and the flush-to-zero bit
 * [24], FPSR with cumulative flags set. @p seed varies the bytes. */
static inline void fpu_pattern(struct FxImage* image, uint8_t seed)
{
    memset(image, 0, sizeof *image);
    for (int r = 0; r < 32; ++r)
        for (int b = 0; b < 16; ++b)
            image->v[r][b] = (uint8_t)(seed ^ (0xA5 + 16 * r + b));
    image->fpcr = (3u << 22) | (1u << 24);
    image->fpsr = 0x1F;
}

/** The offset (into the image) of the first difference, or -1 if equal. */
static inline int fpu_compare_registers(const struct FxImage* a, const struct FxImage* b)
{
    for (int r = 0; r < 32; ++r)
        if (memcmp(a->v[r], b->v[r], 16) != 0)
            return 16 * r;
    if (a->fpcr != b->fpcr)
        return 512;
    if (a->fpsr != b->fpsr)
        return 520;
    return -1;
}

/** What a fresh program must find: every register zero. */
static inline void fpu_initial(struct FxImage* image)
{
    memset(image, 0, sizeof *image);
}

/** One FP/SIMD instruction: enough to need this process's registers. */
static inline void fpu_use_once(void)
{
    __asm__ volatile(FPU_ASM_ENABLE "fadd v0.4s, v0.4s, v1.4s" ::: "memory");
}

#else /* i386 */

/** The legacy FXSAVE image, 32-bit form. */
struct FxImage {
    uint16_t fcw, fsw;
    uint8_t ftw, reserved1;
    uint16_t fop;
    uint32_t fip;
    uint16_t fcs, reserved2;
    uint32_t fdp;
    uint16_t fds, reserved3;
    uint32_t mxcsr, mxcsr_mask;
    uint8_t st[8][16];  /* ST0-ST7 / MM0-MM7, 10 (MMX: 8) bytes used of each */
    uint8_t xmm[8][16]; /* XMM0-XMM7 */
    uint8_t rest[224];
} __attribute__((aligned(16)));

_Static_assert(sizeof(struct FxImage) == 512, "FXSAVE image is 512 bytes");

/* Intel SDM Vol. 1, 8.1.5 and 10.2.3: FNINIT's control word; MXCSR at reset. */
enum { FPU_FCW_INITIAL = 0x037F, FPU_MXCSR_INITIAL = 0x1F80 };

/** Stores every x87, MMX and SSE register into @p image. */
static inline void fpu_save(struct FxImage* image)
{
    __asm__ volatile("fxsave %0" : "=m"(*image));
}

/** Loads every x87, MMX and SSE register from @p image. */
static inline void fpu_load(const struct FxImage* image)
{
    __asm__ volatile("fxrstor %0" : : "m"(*image));
}

/**
 * Fills @p image with a state no fresh process has: x87 registers ST0-ST7
 * valid (also MM0-MM7, which alias them), XMM0-XMM7 and MXCSR (round toward
 * zero) and FCW (round toward zero) all different from the initial state.
 * @p seed varies the bytes.
 */
static inline void fpu_pattern(struct FxImage* image, uint8_t seed)
{
    memset(image, 0, sizeof *image);
    image->fcw = 0x0C7F;   /* all exceptions masked, round toward zero */
    image->mxcsr = 0x7F80; /* all SSE exceptions masked, round toward zero */
    image->ftw = 0xFF;     /* abridged tags: every register valid */
    for (int r = 0; r < 8; ++r) {
        for (int b = 0; b < 8; ++b)
            image->st[r][b] = (uint8_t)(seed + 16 * r + b + 1);
        image->st[r][7] |= 0x80;               /* a normal number: integer bit set */
        image->st[r][8] = (uint8_t)(0x3F + r); /* a modest exponent */
        image->st[r][9] = 0x40;
        for (int b = 0; b < 16; ++b)
            image->xmm[r][b] = (uint8_t)(seed ^ (0xA5 + 16 * r + b));
    }
}

/**
 * Compares the architectural registers of two images: FCW, FSW, the
 * abridged tags, MXCSR, the 80 bits of each ST register and every XMM
 * register. The pointers (FOP, FIP, FDP) are left to the leak test.
 * Returns the offset of the first difference, or -1 if they are equal.
 */
static inline int fpu_compare_registers(const struct FxImage* a, const struct FxImage* b)
{
    if (a->fcw != b->fcw)
        return 0;
    if (a->fsw != b->fsw)
        return 2;
    if (a->ftw != b->ftw)
        return 4;
    if (a->mxcsr != b->mxcsr)
        return 24;
    for (int r = 0; r < 8; ++r)
        if (memcmp(a->st[r], b->st[r], 10) != 0)
            return 32 + 16 * r;
    for (int r = 0; r < 8; ++r)
        if (memcmp(a->xmm[r], b->xmm[r], 16) != 0)
            return 160 + 16 * r;
    return -1;
}

/** The state a fresh process must find: FNINIT's, with the default MXCSR. */
static inline void fpu_initial(struct FxImage* image)
{
    memset(image, 0, sizeof *image);
    image->fcw = FPU_FCW_INITIAL;
    image->mxcsr = FPU_MXCSR_INITIAL;
}

/** One SSE instruction: enough to need this process's FPU registers. */
static inline void fpu_use_once(void)
{
    __asm__ volatile("addps %%xmm1, %%xmm0" ::: "memory");
}

#endif /* i386 */

#endif /* TOLL_FPU_USER_H */
