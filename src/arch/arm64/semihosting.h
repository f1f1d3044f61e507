// Semihosting: asking the emulator (QEMU -semihosting) to do things for the
// guest. Toll uses it for one thing, ending the run with an exit status.
#pragma once
#include <stdint.h>

extern "C" {
/// Issues semihosting operation @p op with parameter @p parameter; returns x0.
/// Without semihosting enabled the trap instruction is undefined and raises
/// an exception at arm64_semihosting_trap (see trap.cpp).
uint64_t arm64_semihosting_call(uint64_t op, uint64_t parameter);
/// The address of the trapping instruction inside arm64_semihosting_call.
extern const char arm64_semihosting_trap[];
}

namespace toll::arm64 {

/// Arm Semihosting v2.0, SYS_EXIT (0x18): ends the emulation. On AArch64 the
/// parameter points to a block {reason, subcode}.
constexpr uint64_t k_sys_exit = 0x18;
/// Arm Semihosting v2.0, SYS_EXIT: the reason code for a normal application exit,
/// whose subcode QEMU returns as its own exit status.
constexpr uint64_t k_adp_stopped_application_exit = 0x20026;

/// Ends the emulation with exit status @p status. Returns only if the
/// emulator did not act on the call.
void semihosting_exit(uint32_t status);

/// Powers off without semihosting: PSCI SYSTEM_OFF through the conduit the
/// device tree named, else parks the CPU. Called when the semihosting trap
/// itself faulted.
[[noreturn]] void poweroff_without_semihosting();

} // namespace toll::arm64
