// Linux's signal ABI as the kernel sees it: signal numbers, the si_code
// values, sigaction's and sigaltstack's shapes, and what one handler
// invocation hands the port's signal frame (kernel/arch/signal.h). The core
// keeps the signal state (kernel/proc/signal.h); these are the words it and
// the ports both speak, so they live below both.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll {

/// Signals are numbered 1 to 64 (Linux's _NSIG); 32 and up are real-time.
constexpr int k_nsig = 64;

// Linux's signal numbers (include/uapi/asm-generic/signal.h; the same on
// i386 and arm64).
enum Signal : int {
    k_sighup = 1,
    k_sigint = 2,
    k_sigquit = 3,
    k_sigill = 4,
    k_sigtrap = 5,
    k_sigabrt = 6,
    k_sigbus = 7,
    k_sigfpe = 8,
    k_sigkill = 9,
    k_sigusr1 = 10,
    k_sigsegv = 11,
    k_sigusr2 = 12,
    k_sigpipe = 13,
    k_sigalrm = 14,
    k_sigterm = 15,
    k_sigstkflt = 16,
    k_sigchld = 17,
    k_sigcont = 18,
    k_sigstop = 19,
    k_sigtstp = 20,
    k_sigttin = 21,
    k_sigttou = 22,
    k_sigurg = 23,
    k_sigxcpu = 24,
    k_sigxfsz = 25,
    k_sigvtalrm = 26,
    k_sigprof = 27,
    k_sigwinch = 28,
    k_sigio = 29,
    k_sigpwr = 30,
    k_sigsys = 31,
};

/// A set of signals: bit n-1 stands for signal n (Linux's sigset_t, 8 bytes).
using SigSet = uint64_t;
constexpr SigSet sig_bit(int sig)
{
    return SigSet(1) << (sig - 1);
}

// sa_handler's two special values and the sa_flags Toll honours (Linux,
// include/uapi/asm-generic/signal-defs.h and asm/signal.h).
constexpr uintptr_t k_sig_dfl = 0, k_sig_ign = 1;
constexpr uint64_t k_sa_nocldstop = 0x1, k_sa_nocldwait = 0x2, k_sa_siginfo = 0x4,
                   k_sa_restorer = 0x04000000, k_sa_onstack = 0x08000000, k_sa_restart = 0x10000000,
                   k_sa_nodefer = 0x40000000, k_sa_resethand = 0x80000000;

/// What a process does with one signal.
struct SigAction {
    uintptr_t handler = k_sig_dfl; ///< k_sig_dfl, k_sig_ign or a user function
    uint64_t flags = 0;            ///< k_sa_* bits
    uintptr_t restorer = 0;        ///< user code that calls sigreturn (SA_RESTORER)
    SigSet mask = 0;               ///< blocked while the handler runs
};

// siginfo_t's si_code values Toll produces (Linux, include/uapi/asm-generic/siginfo.h).
constexpr int k_si_user = 0, k_si_kernel = 0x80, k_si_tkill = -6;
constexpr int k_segv_maperr = 1, k_segv_accerr = 2;                 // SIGSEGV
constexpr int k_bus_adraln = 1, k_bus_objerr = 3;                   // SIGBUS
constexpr int k_ill_illopc = 1, k_trap_brkpt = 1, k_fpe_intdiv = 1; // SIGILL, SIGTRAP, SIGFPE
constexpr int k_cld_exited = 1, k_cld_killed = 2, k_cld_stopped = 5, k_cld_continued = 6;

/// Why a signal was sent: the fields of siginfo_t a handler may read.
struct SigInfo {
    int code = k_si_user;
    int pid = 0;        ///< the sender (kill) or the child (SIGCHLD)
    int status = 0;     ///< SIGCHLD: exit code or signal
    uintptr_t addr = 0; ///< faults: the address
};

// sigaltstack's ss_flags (Linux, include/uapi/linux/signal.h).
constexpr int k_ss_onstack = 1, k_ss_disable = 2;
constexpr unsigned k_ss_autodisarm = 1u << 31;

/// An alternate signal stack (Linux's stack_t).
struct AltStack {
    uintptr_t sp = 0;         ///< its lowest address
    size_t size = 0;          ///< 0: there is none
    int flags = k_ss_disable; ///< k_ss_onstack, k_ss_disable or 0
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
