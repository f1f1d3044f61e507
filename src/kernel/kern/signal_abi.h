// Linux's signal ABI as the kernel sees it: the signal numbers and si_code
// values (toll/signals.h, which user space shares), sigaction's and
// sigaltstack's shapes, and what one handler invocation hands the port's
// signal frame (kernel/arch/signal.h). The core keeps the signal state
// (kernel/proc/signal.h); these are the words it and the ports both speak,
// so they live below both.
#pragma once
#include "user/include/toll/signals.h" // the numbers and si_codes, shared with user space
#include <stddef.h>
#include <stdint.h>

namespace toll {

/// Signals are numbered 1 to 64 (Linux's _NSIG); 32 and up are real-time.
constexpr int k_nsig = 64;

/// A set of signals: bit n-1 stands for signal n (Linux's sigset_t, 8 bytes).
using SigSet = uint64_t;
constexpr SigSet sig_bit(int sig)
{
    return SigSet(1) << (sig - 1);
}

// sa_handler's two special values (Linux, include/uapi/asm-generic/signal-defs.h).
constexpr uintptr_t k_sig_dfl = 0, k_sig_ign = 1;

/// What a process does with one signal.
struct SigAction {
    uintptr_t handler = k_sig_dfl; ///< k_sig_dfl, k_sig_ign or a user function
    uint64_t flags = 0;            ///< TOLL_SA_* bits
    uintptr_t restorer = 0;        ///< user code that calls sigreturn (SA_RESTORER)
    SigSet mask = 0;               ///< blocked while the handler runs
};

/// Why a signal was sent: the fields of siginfo_t a handler may read.
struct SigInfo {
    int code = TOLL_SI_USER;
    int pid = 0;        ///< the sender (kill) or the child (SIGCHLD)
    int status = 0;     ///< SIGCHLD: exit code or signal
    uintptr_t addr = 0; ///< faults: the address
};

/// An alternate signal stack (Linux's stack_t).
struct AltStack {
    uintptr_t sp = 0;            ///< its lowest address
    size_t size = 0;             ///< 0: there is none
    int flags = TOLL_SS_DISABLE; ///< TOLL_SS_ONSTACK, TOLL_SS_DISABLE or 0
};

/// One handler invocation, as the architecture writes it into a signal frame.
struct SignalDelivery {
    int signo;
    SigInfo info;
    SigAction action;
    SigSet saved_mask; ///< the mask to put back at sigreturn
    /// Where the frame goes, below this address: the interrupted stack
    /// pointer, or the top of the alternate stack (SA_ONSTACK, not on it
    /// already).
    uintptr_t stack_top;
    /// The frame goes on the alternate stack (it starts there, or nests on
    /// it): one that would not fit on it is refused (i386, as Linux's x86
    /// get_sigframe).
    bool on_altstack;
    /// The alternate stack as the frame's uc_stack saves it.
    AltStack altstack;
};

/// Size of Linux's siginfo_t on every architecture.
constexpr size_t k_siginfo_size = 128;

} // namespace toll
