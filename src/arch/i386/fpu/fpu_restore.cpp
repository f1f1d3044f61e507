// The restore paths, one per cleaning strategy: the cleaning sequence against
// the FXSAVE pointer leak (FreeBSD-SA-06:14, CVE-2006-1056), the boot-time
// patching of it, and fpu.leak=simulate, which restores as an AMD K7/K8 does.
#include "arch/i386/cpu.h"
#include "arch/i386/fpu/fpu_internal.h"
#include "arch/i386/layout.h"
#include "lib/string.h"

// The bounds of the cleaning sequence inside restore_patched (defined by its
// inline assembly), which patch_cleaning() overwrites.
extern "C" uint8_t fpu_clean_site_begin[], fpu_clean_site_end[];

namespace toll::i386::fpu {

const uint32_t g_clean_dummy = 0;

namespace {

// The opcodes patch_cleaning() writes: a short jump (EB rel8) and NOP (90).
constexpr uint8_t k_opcode_jmp_short = 0xEB, k_opcode_nop = 0x90;
constexpr unsigned k_jmp_short_size = 2;

// The cleaning sequence, run before FXRSTOR. On an AMD K7/K8, FXRSTOR does
// not load FOP, FIP and FDP unless FSW.ES is set, so the incoming thread
// would see the last x87 instruction and data addresses of the previous
// owner. A load from a kernel address first puts kernel-chosen values there.
// (AMD, "FXSAVE/FXRSTOR behavior" in the SA-06:14 advisory; Intel SDM Vol. 1,
// 8.1.8 for the pointers themselves.) Operands: %[dummy], the load's source;
// it clobbers eax and the x87 registers, which FXRSTOR then replaces.
// LAB fpu BEGIN: if an x87 exception is pending (FSW.ES) clear it, free ST(7), then make one x87 load from %[dummy]
#define TOLL_FPU_CLEAN_SEQUENCE                                                                    \
    "fnstsw %%ax\n\t"                                                                              \
    "testb $0x80, %%al\n\t" /* FSW.ES: an unmasked exception is pending */                         \
    "jz 1f\n\t"                                                                                    \
    "fnclex\n\t"           /* else the load below would raise #MF */                               \
    "1: ffree %%st(7)\n\t" /* the load pushes: make sure ST(7) is free */                          \
    "fildl %[dummy]\n\t"   /* FOP, FIP, FDP now name this kernel instruction and datum */
// LAB fpu STUB
// #define TOLL_FPU_CLEAN_SEQUENCE ""
// LAB fpu END

// Counts one run of the cleaning sequence; inside the asm so that a patched-
// out sequence does not count.
#define TOLL_FPU_COUNT_CLEAN "addl $1, %[count_lo]\n\tadcl $0, %[count_hi]\n\t"

uint32_t* clean_count_half(unsigned half)
{
    return reinterpret_cast<uint32_t*>(&g_clean_calls.value) + half;
}

// The cleaning sequence, always inlined where it is needed.
[[gnu::always_inline]] inline void clean()
{
    asm volatile(TOLL_FPU_COUNT_CLEAN TOLL_FPU_CLEAN_SEQUENCE
                 : [count_lo] "+m"(*clean_count_half(0)), [count_hi] "+m"(*clean_count_half(1))
                 : [dummy] "m"(g_clean_dummy)
                 : "eax", "cc", "memory");
}

// fpu.leak=simulate: copies the live FOP/FIP/FCS/FDP/FDS into the incoming
// image, so that FXRSTOR leaves them as an AMD K7/K8 FXRSTOR does (neither
// QEMU nor Bochs has the quirk). Like the real thing, it does nothing when
// the image has an exception pending (FSW.ES): then AMD parts do load them.
void simulate_amd_restore(uint8_t* image)
{
    alignas(k_fxsave_align) static uint8_t live[k_fxsave_size];
    uint16_t fsw;
    memcpy(&fsw, image + k_fx_fsw, sizeof fsw);
    if (fsw & k_fsw_es)
        return;
    fxsave(live);
    memcpy(image + k_fx_pointers_begin, live + k_fx_pointers_begin,
           k_fx_pointers_end - k_fx_pointers_begin);
}

// The end of every restore path.
[[gnu::always_inline]] inline void finish_restore(uint8_t* image)
{
    if (g_config.leak_simulate)
        simulate_amd_restore(image);
    fxrstor(image);
    g_restores.add();
}

} // namespace

// fpu.clean=always: the sequence runs on every restore, bug or not.
void restore_always(uint8_t* image)
{
    clean();
    finish_restore(image);
}

// fpu.clean=flag: one test of the CPU-bug flag on every restore.
void restore_flag(uint8_t* image)
{
    if (g_config.bug)
        clean();
    finish_restore(image);
}

// fpu.clean=patched and nops: the sequence between two global labels, which
// patch_cleaning() rewrites at boot on a CPU without the bug. There must be
// exactly one copy of this code, hence noinline.
[[gnu::noinline]] void restore_patched(uint8_t* image)
{
    asm volatile(".globl fpu_clean_site_begin\n"
                 "fpu_clean_site_begin:\n\t" TOLL_FPU_COUNT_CLEAN TOLL_FPU_CLEAN_SEQUENCE
                 ".globl fpu_clean_site_end\n"
                 "fpu_clean_site_end:"
                 : [count_lo] "+m"(*clean_count_half(0)), [count_hi] "+m"(*clean_count_half(1))
                 : [dummy] "m"(g_clean_dummy)
                 : "eax", "cc", "memory");
    finish_restore(image);
}

// fpu.clean=off, and fpu.clean=idt on a CPU without the bug: no cleaning.
void restore_plain(uint8_t* image)
{
    finish_restore(image);
}

unsigned patch_cleaning(Clean how)
{
    unsigned length = static_cast<unsigned>(fpu_clean_site_end - fpu_clean_site_begin);
    if (length < k_jmp_short_size)
        return 0;
    volatile uint8_t* site = fpu_clean_site_begin;
    // Intel SDM Vol. 3, 2.5: with CR0.WP set the kernel cannot write
    // read-only pages; kernel text may be one.
    uint32_t cr0 = read_cr0();
    write_cr0(cr0 & ~CR0_WP);
    unsigned written;
    if (how == Clean::nops) {
        for (unsigned i = 0; i < length; ++i)
            site[i] = k_opcode_nop;
        written = length;
    } else {
        site[0] = k_opcode_jmp_short;
        site[1] = static_cast<uint8_t>(length - k_jmp_short_size);
        written = k_jmp_short_size;
    }
    write_cr0(cr0);
    // Intel SDM Vol. 3, 8.1.3: after modifying code, execute a serializing
    // instruction before running it.
    uint32_t a = 0, b, c = 0, d;
    asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) : : "memory");
    return written;
}

} // namespace toll::i386::fpu
