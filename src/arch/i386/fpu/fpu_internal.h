// What the files of the FPU module share: the FXSAVE image layout, the
// cleaning strategies, the restore paths and the counters.
#pragma once
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "machine/context.h"
#include <stdint.h>

namespace toll::i386::fpu {

// Intel SDM Vol. 1, 10.5.1, table 10-2: the legacy FXSAVE area (32-bit form).
constexpr unsigned k_fxsave_size = 512;
constexpr unsigned k_fxsave_align = 16;
constexpr unsigned k_fx_fcw = 0, k_fx_fsw = 2, k_fx_ftw = 4, k_fx_fop = 6, k_fx_fip = 8,
                   k_fx_fcs = 12, k_fx_fdp = 16, k_fx_fds = 20, k_fx_mxcsr = 24,
                   k_fx_mxcsr_mask = 28, k_fx_st0 = 32, k_fx_xmm0 = 160;
/// The bytes FOP, FIP, FCS, FDP and FDS occupy: what an AMD K7/K8 FXRSTOR
/// leaves alone unless an exception is pending.
constexpr unsigned k_fx_pointers_begin = k_fx_fop, k_fx_pointers_end = k_fx_fds + 4;

// Intel SDM Vol. 1, 8.1.8 and 10.2.3: the state FNINIT (and a fresh process)
// starts from: all exceptions masked, 64-bit precision, round to nearest;
// MXCSR likewise masks every SSE exception.
constexpr uint16_t k_fcw_initial = 0x037F;
constexpr uint32_t k_mxcsr_initial = 0x1F80;
/// Intel SDM Vol. 1, 8.1.3: FSW bit 7, ES, an unmasked exception is pending.
constexpr uint16_t k_fsw_es = 1u << 7;

/// How the kernel defends against the FXSAVE pointer leak (fpu.clean=).
enum class Clean : uint8_t {
    always,  ///< run the cleaning sequence before every restore
    flag,    ///< test the CPU-bug flag before every restore
    patched, ///< at boot, overwrite the sequence with a jump over it (CPUs without the bug)
    nops,    ///< at boot, overwrite the sequence with no-ops (CPUs without the bug)
    idt,     ///< at boot, point the #NM gate at a handler without the sequence
    off,     ///< never clean: unsafe on AMD K7/K8
};

/// How the FPU follows the running thread (fpu.switch=).
enum class Switch : uint8_t { lazy, eager };

/// The boot-time configuration (fpu.cpp fills it in init()).
struct Config {
    Switch mode = Switch::lazy;
    Clean clean = Clean::always;
    bool bug = false;           ///< the CPU has the FXSAVE leak (X86_BUG_FXSAVE_LEAK)
    bool leak_simulate = false; ///< fpu.leak=simulate: restore like an AMD K7/K8
};
extern Config g_config;

/// The names of fpu.clean= values, indexed by Clean.
const char* clean_name(Clean c);

/// The 16-byte-aligned FXSAVE image inside a thread's slot.
inline uint8_t* area(arch::ThreadContext& ctx)
{
    auto p = reinterpret_cast<uintptr_t>(ctx.fpu.raw);
    return reinterpret_cast<uint8_t*>((p + k_fxsave_align - 1) & ~uintptr_t(k_fxsave_align - 1));
}

/// Writes the initial state (FNINIT's, plus the default MXCSR) into @p image.
void make_initial_image(uint8_t* image);

/// Stores the live FPU registers into @p image. CR0.TS must be clear.
inline void fxsave(uint8_t* image)
{
    asm volatile("fxsave %0" : "=m"(*reinterpret_cast<uint8_t(*)[k_fxsave_size]>(image)));
}

/// Loads the FPU registers from @p image. CR0.TS must be clear.
inline void fxrstor(const uint8_t* image)
{
    asm volatile("fxrstor %0" : : "m"(*reinterpret_cast<const uint8_t(*)[k_fxsave_size]>(image)));
}

/// Clears CR0.TS: FPU instructions run instead of raising #NM.
inline void clts()
{
    asm volatile("clts" ::: "memory");
}

/// Sets CR0.TS (if it is not set): the next FPU instruction raises #NM.
void set_ts();

/// A restore path: (maybe) clean, (maybe) simulate the AMD restore, FXRSTOR
/// @p image. CR0.TS must be clear. One per strategy (fpu_restore.cpp).
using RestoreFn = void (*)(uint8_t* image);
void restore_always(uint8_t* image);
void restore_flag(uint8_t* image);
void restore_patched(uint8_t* image);
void restore_plain(uint8_t* image);

/// The restore path the configuration selects, for the eager switch and the
/// #NM handler reached through the standard gate.
extern RestoreFn g_restore;

/// Applies fpu.clean=patched or nops: rewrites the cleaning sequence inside
/// restore_patched when the CPU does not need it. Returns the bytes rewritten.
unsigned patch_cleaning(Clean how);

/// The kernel's dummy operand of the cleaning load: after cleaning, FDP holds
/// its address.
extern const uint32_t g_clean_dummy;

/// Installs the #NM handlers and, for fpu.clean=idt on a CPU without the
/// bug, points the #NM gate at the handler without cleaning (fpu_trap.cpp).
void install_trap_handlers();

/// Makes the running thread the FPU owner with its state (or the initial
/// state) loaded through @p restore: the body of every #NM handler.
void take_ownership(RestoreFn restore);

extern Counter g_dna_traps, g_saves, g_restores, g_clean_calls;

/// The FPU owner of the CPU that reads it (fpu.cpp); nullptr when CR0.TS is
/// set there. One slot per CPU (by Cpu::id), read and written as if it were
/// one pointer: a thread's registers can be live only on the CPU it runs on,
/// since every switch saves the outgoing owner's (switch_threads), so a
/// thread that moves to another CPU finds its state in memory, and no CPU
/// ever needs another's registers.
struct PerCpuOwner {
    arch::ThreadContext* slot[k_max_cpus];
    static unsigned here()
    {
        return static_cast<unsigned>(arch::cpu_local_word<offsetof(Cpu, id)>());
    }
    operator arch::ThreadContext*() const { return slot[here()]; }
    PerCpuOwner& operator=(arch::ThreadContext* owner)
    {
        slot[here()] = owner;
        return *this;
    }
};
extern PerCpuOwner g_owner;

} // namespace toll::i386::fpu
