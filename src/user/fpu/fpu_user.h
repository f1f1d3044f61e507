/* fpu_user.h: what the FPU tests and benchmarks share: the FXSAVE image
 * (Intel SDM Vol. 1, 10.5.1, table 10-2), user-mode FXSAVE and FXRSTOR, and
 * the initial state a fresh process must see. The programs are compiled
 * with -mno-sse -mno-mmx so that the compiler never touches the FPU behind
 * their back: every FPU instruction is one of these inline-assembly lines. */
#ifndef TOLL_FPU_USER_H
#define TOLL_FPU_USER_H

#include <stdint.h>
#include <string.h>

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

#endif /* TOLL_FPU_USER_H */
