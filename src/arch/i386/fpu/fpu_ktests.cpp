// In-kernel tests and measurements of the FPU module: the initial image, the
// boot configuration, and the path length of FXSAVE + FXRSTOR and of each
// restore path (METRIC records; exact in deterministic mode).
#include "arch/i386/cpu.h"
#include "arch/i386/fpu/fpu.h"
#include "arch/i386/fpu/fpu_internal.h"
#include "arch/i386/layout.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/ktest.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll::i386::fpu {
namespace {

constexpr unsigned k_bench_rounds = 1000;

// Lends the FPU to the running ktest: puts any owner's registers aside,
// clears CR0.TS, and sets it again at the end (the kernel never keeps the FPU).
class [[nodiscard]] KernelFpuScope {
  public:
    KernelFpuScope()
    {
        release_owner();
        clts();
    }
    ~KernelFpuScope() { set_ts(); }
    KernelFpuScope(const KernelFpuScope&) = delete;
    KernelFpuScope& operator=(const KernelFpuScope&) = delete;
};

alignas(k_fxsave_align) uint8_t g_image[k_fxsave_size];
alignas(k_fxsave_align) uint8_t g_check[k_fxsave_size];

uint16_t read16(const uint8_t* image, unsigned offset)
{
    uint16_t v;
    memcpy(&v, image + offset, sizeof v);
    return v;
}

uint32_t read32(const uint8_t* image, unsigned offset)
{
    uint32_t v;
    memcpy(&v, image + offset, sizeof v);
    return v;
}

// Instructions (deterministic mode) per call of @p restore, averaged.
uint64_t measure_restore(RestoreFn restore)
{
    make_initial_image(g_image);
    restore(g_image); // warm up
    uint64_t start = arch::cycle_counter();
    for (unsigned i = 0; i < k_bench_rounds; ++i)
        restore(g_image);
    return (arch::cycle_counter() - start) / k_bench_rounds;
}

} // namespace

KTEST("fpu.initial_state_loads")
{
    KernelFpuScope scope;
    make_initial_image(g_image);
    fxrstor(g_image);
    memset(g_check, 0xAA, sizeof g_check);
    fxsave(g_check);
    KEXPECT_EQ(read16(g_check, k_fx_fcw), k_fcw_initial);
    KEXPECT_EQ(read16(g_check, k_fx_fsw), 0u);
    KEXPECT_EQ(g_check[k_fx_ftw], 0u);
    KEXPECT_EQ(read32(g_check, k_fx_mxcsr), k_mxcsr_initial);
    // ST0-ST7 use 10 bytes of each 16-byte slot (the rest is reserved);
    // XMM0-XMM7 all 16.
    constexpr unsigned k_slot = 16, k_st_bytes = 10, k_registers = 8;
    for (unsigned r = 0; r < k_registers; ++r)
        for (unsigned b = 0; b < k_slot; ++b) {
            unsigned st = k_fx_st0 + r * k_slot + b, xmm = k_fx_xmm0 + r * k_slot + b;
            if (b < k_st_bytes && g_check[st] != 0)
                KEXPECT_EQ(st, 0u); // names the offset of a stray byte
            if (g_check[xmm] != 0)
                KEXPECT_EQ(xmm, 0u);
        }
}

KTEST("fpu.sse_enabled_and_ts_set")
{
    KEXPECT(read_cr4() & CR4_OSFXSR);
    KEXPECT(read_cr4() & CR4_OSXMMEXCPT);
    KEXPECT(read_cr0() & CR0_MP);
    KEXPECT(read_cr0() & CR0_NE);
    KEXPECT(!(read_cr0() & CR0_EM));
    // Between threads the kernel holds no FPU state: TS is set.
    KEXPECT(owner() == nullptr);
    KEXPECT(read_cr0() & CR0_TS);
}

KTEST("fpu.restore_paths_count_cleaning")
{
    KernelFpuScope scope;
    uint64_t cleans = g_clean_calls.value;
    make_initial_image(g_image);
    restore_always(g_image); // clean, then FXRSTOR of a state with zero pointers
    KEXPECT_EQ(g_clean_calls.value, cleans + 1);
    uint64_t restores = g_restores.value;
    restore_plain(g_image);
    KEXPECT_EQ(g_restores.value, restores + 1);
    KEXPECT_EQ(g_clean_calls.value, cleans + 1);
}

KTEST("fpu.bench.save_restore")
{
    // Intel SDM Vol. 1, 10.5.1, Table 10-2: MXCSR is the doubleword at byte
    // 24 of the FXSAVE image. Round toward zero (bits 13-14) with every
    // exception masked is a state no FPU starts in, so finding it after the
    // loop proves that FXRSTOR loaded the image and FXSAVE stored it back.
    constexpr unsigned k_mxcsr_offset = 24;
    constexpr uint32_t k_mxcsr_marked = 0x1F80 | 0x6000;
    KernelFpuScope scope;
    make_initial_image(g_image);
    memcpy(g_image + k_mxcsr_offset, &k_mxcsr_marked, sizeof k_mxcsr_marked);
    fxrstor(g_image);
    memset(g_image + k_mxcsr_offset, 0, sizeof k_mxcsr_marked);
    uint64_t start = arch::cycle_counter();
    for (unsigned i = 0; i < k_bench_rounds; ++i) {
        fxsave(g_image);
        fxrstor(g_image);
    }
    uint64_t per_round = (arch::cycle_counter() - start) / k_bench_rounds;
    ktest::metric("fpu.save_restore", per_round, "instr");
    uint32_t mxcsr;
    memcpy(&mxcsr, g_image + k_mxcsr_offset, sizeof mxcsr);
    KEXPECT_EQ(mxcsr, k_mxcsr_marked);
    KEXPECT(per_round >= 2); // at least the two instructions themselves
}

KTEST("fpu.bench.restore_paths")
{
    KernelFpuScope scope;
    // restore_flag's cost depends on the bug flag, restore_patched's on
    // whether the boot patched it: the metric names say which was measured.
    char flag_name[48], patched_name[48];
    lib::snformat(flag_name, sizeof flag_name, "fpu.restore.flag.bug%d", g_config.bug ? 1 : 0);
    bool patched_out =
        (g_config.clean == Clean::patched || g_config.clean == Clean::nops) && !g_config.bug;
    lib::snformat(patched_name, sizeof patched_name, "fpu.restore.patched.%s",
                  patched_out ? clean_name(g_config.clean) : "unpatched");
    // Each path runs its one FXRSTOR, and the cleaning sequence exactly when
    // its strategy says: always, on the bug flag, unless patched out, never.
    struct Path {
        const char* name;
        RestoreFn fn;
        bool cleans;
    };
    const Path paths[] = {{"fpu.restore.always", restore_always, true},
                          {flag_name, restore_flag, g_config.bug},
                          {patched_name, restore_patched, !patched_out},
                          {"fpu.restore.plain", restore_plain, false}};
    constexpr uint64_t k_calls = k_bench_rounds + 1; // measure_restore's warm-up too
    for (const Path& p : paths) {
        uint64_t restores = g_restores.value, cleans = g_clean_calls.value;
        ktest::metric(p.name, measure_restore(p.fn), "instr");
        KEXPECT_EQ(g_restores.value - restores, k_calls);
        KEXPECT_EQ(g_clean_calls.value - cleans, p.cleans ? k_calls : 0);
    }
    // The costs are exact in deterministic mode only, and with a real clock
    // too noisy to compare here: tests/system/fpu.cmake checks, counting
    // instructions, that restore_always costs more than restore_plain by
    // the cleaning sequence (fpu.clean_sequence).
    uint64_t plain = measure_restore(restore_plain), always = measure_restore(restore_always);
    ktest::metric("fpu.clean_sequence", always > plain ? always - plain : 0, "instr");
}

KTEST("fpu.bench.lazy_round_trip")
{
    // The kernel's side of one lazy switch of an FPU-using thread, without
    // the trap entry and exit: the save at the switch away (FXSAVE, set TS),
    // then the #NM handler's work (clear TS, restore through the configured
    // path). The running kernel thread stands in for the user thread.
    release_owner();
    uint64_t start = arch::cycle_counter();
    for (unsigned i = 0; i < k_bench_rounds; ++i) {
        take_ownership(g_restore);
        release_owner();
    }
    ktest::metric("fpu.lazy_round_trip", (arch::cycle_counter() - start) / k_bench_rounds, "instr");
    KEXPECT(owner() == nullptr);
    KEXPECT(read_cr0() & CR0_TS);
}

} // namespace toll::i386::fpu
