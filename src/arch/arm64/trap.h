// The arm64 trap dispatcher's interface: exception classes, and hooks through
// which subsystems (and ktests) take the synchronous exceptions they handle.
#pragma once
#include "arch/arm64/include/machine/context.h"
#include "kernel/kern/counters.h"
#include <stdint.h>

namespace toll::arm64 {

/// Vector numbers (the index into the table of vectors.S) that Toll handles.
constexpr unsigned k_vector_el1_sync = 4, k_vector_el1_irq = 5, k_vector_el0_sync = 8,
                   k_vector_el0_irq = 9;

/// Arm ARM, ESR_EL1.EC: exception classes (bits [31:26] of the syndrome).
constexpr unsigned k_ec_unknown = 0x00, k_ec_svc64 = 0x15, k_ec_instruction_abort_el0 = 0x20,
                   k_ec_instruction_abort_el1 = 0x21, k_ec_data_abort_el0 = 0x24,
                   k_ec_data_abort_el1 = 0x25, k_ec_brk = 0x3C;
constexpr unsigned k_ec_count = 64;

/// The exception class of a synchronous exception's frame.
inline unsigned exception_class(const arch::TrapFrame& frame)
{
    return static_cast<unsigned>((frame.esr >> 26) & 0x3F);
}

/// A handler for one exception class. Returns true if it dealt with the
/// exception (it may edit @p frame, e.g. advance elr); false passes it on.
using SyncHook = bool (*)(arch::TrapFrame& frame);

/// Installs @p hook for exception class @p ec (nullptr removes it).
void set_sync_hook(unsigned ec, SyncHook hook);

/// Every exception taken, system calls included (cpu.traps, as on i386).
extern Counter g_traps_total;

/// Installs the data-abort hook that lets copyin/copyout fail instead of
/// panicking (uaccess.cpp).
void uaccess_init();

/// Prints the registers of a trap frame.
void dump_frame(const arch::TrapFrame& frame);

} // namespace toll::arm64
