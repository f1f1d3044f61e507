// Kernel stack switching (switch.S): the primitive under context switches.
#pragma once
#include "machine/context.h"
#include <stdint.h>

namespace toll::arm64 {

/// The frame arm64_switch_stacks() pushes and pops, lowest address first.
struct SwitchFrame {
    uint64_t x19, x20, x21, x22, x23, x24, x25, x26, x27, x28;
    uint64_t x29; ///< Frame pointer.
    uint64_t x30; ///< Where the switch "returns" to.
};
static_assert(sizeof(SwitchFrame) == 96);

/// Builds a switch frame below @p stack_top (16-byte aligned) that starts
/// entry(arg) through arm64_kernel_thread_start and calls @p on_return if
/// entry returns. Returns the stack pointer to hand arm64_switch_stacks().
uint64_t switch_frame_for_thread(uint64_t stack_top, void (*entry)(void*), void* arg,
                                 void (*on_return)());

} // namespace toll::arm64

extern "C" {
/// Saves the callee-saved registers on the current stack and the stack
/// pointer in @p save_sp, then resumes the stack at @p new_sp.
void arm64_switch_stacks(uint64_t* save_sp, uint64_t new_sp);
/// The first instructions of a thread made by switch_frame_for_thread().
void arm64_kernel_thread_start();
/// Saves the FP/SIMD registers in @p to.
void arm64_fp_save(toll::arch::FpState* to);
/// Loads the FP/SIMD registers from @p from.
void arm64_fp_restore(const toll::arch::FpState* from);
}
