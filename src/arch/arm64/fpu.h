// The FP/SIMD registers on arm64, switched lazily or eagerly (fpu.switch=):
// the twin of i386's CR0.TS and #NM is CPACR_EL1.FPEN, which makes EL0's
// first FP/SIMD instruction trap (EC 0x07) while the registers hold someone
// else's values. context.cpp and signal_frame.cpp call these hooks; nothing
// else in the kernel touches the FP/SIMD registers.
#pragma once
#include "machine/context.h"

namespace toll::arm64::fpu {

/// Reads fpu.switch (lazy, the default, or eager) from the command line,
/// installs the FP-access trap handler and leaves EL0's FP/SIMD access
/// trapping. Called once from arch::cpu_init.
void init();

/// The FP half of a context switch from @p from to @p to. If @p from owns
/// the registers they are saved into its FpState (fpu.saves). Lazy: EL0
/// access then traps, so @p to pays one trap and one restore only if it
/// uses FP/SIMD before it is switched out. Eager: @p to's registers are
/// restored now if it has FP state (fpu.restores), trap-free.
void switch_threads(arch::ThreadContext& from, arch::ThreadContext& to);

/// Gives the new thread @p child a copy of the running thread @p parent's
/// FP state (fork): its live registers if it owns them, else its saved copy.
void fork_copy(arch::ThreadContext& parent, arch::ThreadContext& child);

/// Forgets the FP state of the running thread @p ctx, which starts a new
/// program: it finds every register zero (FPCR and FPSR too).
void exec_reset(arch::ThreadContext& ctx);

/// The running thread @p ctx's FP state, for a signal frame: the live
/// registers if it owns them, else its saved copy (zeros if it never used
/// FP/SIMD).
arch::FpState read(arch::ThreadContext& ctx);

/// Makes @p state the running thread @p ctx's FP state (sigreturn); it is
/// loaded on the thread's next FP/SIMD instruction.
void write(arch::ThreadContext& ctx, const arch::FpState& state);

/// The thread whose values are in the FP/SIMD registers (EL0 access then
/// does not trap), or nullptr. Always the running thread or nobody.
const arch::ThreadContext* owner();

/// True when fpu.switch=eager.
bool eager();

} // namespace toll::arm64::fpu
