// What the core keeps per thread for the arm64 port: the trap frame that
// vectors.S builds on every exception, and the saved context of a
// switched-out thread. Included by the core as "machine/context.h".
#pragma once
#include <stdint.h>

namespace toll::arch {

/// The registers vectors.S saves on the kernel stack for every exception,
/// and restores on the way out (offsets in arch/arm64/layout.h, TF_*).
struct TrapFrame {
    uint64_t x[31];  ///< x0-x30 (x30 is the link register).
    uint64_t sp_el0; ///< The user stack pointer.
    uint64_t elr;    ///< ELR_EL1: where eret resumes.
    uint64_t spsr;   ///< SPSR_EL1: the interrupted PSTATE.
    uint64_t esr;    ///< ESR_EL1 at entry (why a synchronous exception happened).
    uint64_t far;    ///< FAR_EL1 at entry (the faulting address, for aborts).

    /// True if the exception came from EL0 (SPSR.M[3:0] = EL0t).
    bool from_user() const { return (spsr & 0xF) == 0; }
    /// The interrupted program counter.
    uint64_t pc() const { return elr; }
    /// The interrupted user stack pointer.
    uint64_t user_sp() const { return sp_el0; }
};

/// A thread's FP/SIMD registers (the kernel itself never uses them:
/// -mgeneral-regs-only), saved and restored by the switch (arch/arm64/fpu.h).
struct FpState {
    uint64_t q[64] = {}; ///< q0-q31, 128 bits each, low half first.
    uint64_t fpcr = 0;
    uint64_t fpsr = 0;
    bool used = false; ///< The thread has used FP/SIMD since exec (eager restores only then).
};

/// The saved state of a thread that is not running: the port's alone (what
/// the core keeps per thread is in proc::Thread).
struct ThreadContext {
    uint64_t sp = 0;  ///< Kernel stack pointer saved by the switch.
    uint64_t tls = 0; ///< TPIDR_EL0, the user thread pointer.
    FpState fp;       ///< The user's FP/SIMD registers.
};

/// The system call number, as Linux's arm64 ABI passes it (x8).
inline uint64_t syscall_number(const TrapFrame& f)
{
    return f.x[8];
}

} // namespace toll::arch
