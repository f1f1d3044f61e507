// The FPU module's interface to the rest of the i386 port: the hooks that
// context.cpp calls on boot, switch, fork and exec, and the FPU owner (which
// the vm86 BIOS calls must put aside). Nothing outside src/arch/i386/fpu/
// executes an x87, MMX or SSE instruction.
#pragma once
#include "machine/context.h"

namespace toll::i386::fpu {

/// Detects the CPU (FXSR, SSE, the FXSAVE-leak bug), enables FXSAVE and SSE
/// for user programs (CR4.OSFXSR, OSXMMEXCPT; CR0.MP and NE set, EM clear),
/// reads fpu.switch, fpu.clean, fpu.leak and fpu.bug from the command line,
/// installs the #NM handler the strategy selects and sets CR0.TS. Called once
/// from arch::cpu_init, after the IDT is loaded.
void init();

/// The FPU half of a context switch from @p from to @p to. Lazy: saves
/// @p from's registers if it owns the FPU and sets CR0.TS, so that @p to's
/// first FPU instruction traps (#NM). Eager: also restores @p to's registers
/// right away if it has FPU state. Costs one FXSAVE and (eager) one FXRSTOR
/// per switch of an FPU-using thread.
void switch_threads(arch::ThreadContext& from, arch::ThreadContext& to);

/// Gives the new thread @p child a copy of the running thread's FPU state
/// (fork). If the running thread owns the FPU, its live registers are stored
/// straight into @p child with one FXSAVE.
void fork_copy(arch::ThreadContext& child);

/// Forgets the FPU state of @p ctx, the running thread, which is starting a
/// new program (execve): its next FPU instruction starts from the initial state.
void exec_reset(arch::ThreadContext& ctx);

/// For a signal frame: puts the running thread @p ctx's FPU registers (an
/// FXSAVE image, 512 bytes) in @p image and returns true, or returns false
/// if it has no FPU state (no FPU use since exec). The FPU is left released:
/// the handler's first FPU instruction traps and restores (#NM).
bool signal_save(arch::ThreadContext& ctx, uint8_t* image);

/// The MXCSR bits this CPU supports (FXSAVE's MXCSR_MASK, read at init):
/// FXRSTOR of an image with any other bit set raises #GP.
uint32_t mxcsr_mask();

/// At sigreturn: makes @p image (512 bytes, MXCSR already restorable) the
/// running thread @p ctx's FPU state, loaded on its next FPU instruction; a
/// nullptr forgets the state instead, as exec does.
void signal_restore(arch::ThreadContext& ctx, const uint8_t* image);

/// The thread whose registers are live in the FPU right now, or nullptr
/// (CR0.TS is then set). Always the running thread or nobody.
const arch::ThreadContext* owner();

/// Saves the owner's registers into its slot and sets CR0.TS, so the FPU
/// holds nobody's state; its next FPU instruction restores them (#NM).
/// For code that is about to run something else on the CPU (a vm86 BIOS
/// call). Does nothing when there is no owner.
void release_owner();

} // namespace toll::i386::fpu
