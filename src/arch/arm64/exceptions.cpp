// What happens on an exception, for now: every one is unexpected and ends
// the run with a PANIC naming it, except the fault of the semihosting trap
// when the emulator has no semihosting, which falls back to PSCI.
#include "arch/arm64/semihosting.h"
#include "kernel/kern/panic.h"

namespace toll::arm64 {
namespace {
// Arm ARM, "Exception vectors": the groups, four entries each, in table order.
const char* const k_vector_names[16] = {
    "synchronous (EL1, SP_EL0)",
    "IRQ (EL1, SP_EL0)",
    "FIQ (EL1, SP_EL0)",
    "SError (EL1, SP_EL0)",
    "synchronous (EL1)",
    "IRQ (EL1)",
    "FIQ (EL1)",
    "SError (EL1)",
    "synchronous (EL0, AArch64)",
    "IRQ (EL0, AArch64)",
    "FIQ (EL0, AArch64)",
    "SError (EL0, AArch64)",
    "synchronous (EL0, AArch32)",
    "IRQ (EL0, AArch32)",
    "FIQ (EL0, AArch32)",
    "SError (EL0, AArch32)",
};
// Arm ARM, ESR_EL1: the exception class is in bits [31:26].
constexpr unsigned k_esr_class_shift = 26;
constexpr uint64_t k_esr_class_mask = 0x3F;
} // namespace
} // namespace toll::arm64

/// Entered from the vector table (vectors.S) with the vector number and the
/// syndrome, return address and fault address registers.
extern "C" [[noreturn]] void arm64_unexpected_exception(uint64_t vector, uint64_t esr, uint64_t elr,
                                                        uint64_t far)
{
    using namespace toll::arm64;
    if (elr == reinterpret_cast<uint64_t>(arm64_semihosting_trap))
        poweroff_without_semihosting();
    unsigned exception_class = (esr >> k_esr_class_shift) & k_esr_class_mask;
    toll::panic("unexpected exception: %s, ESR 0x%llx (class 0x%x), ELR 0x%llx, FAR 0x%llx",
                k_vector_names[vector & 15], (unsigned long long)esr, exception_class,
                (unsigned long long)elr, (unsigned long long)far);
}
