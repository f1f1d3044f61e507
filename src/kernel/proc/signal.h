// Signals as Linux defines them: per-process actions (default, ignore or a
// handler), a blocked mask, pending signals, and delivery on the way back
// to user mode through a signal frame that sigreturn undoes.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/signal_abi.h"
#include "machine/context.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::proc {

struct Process;
struct Thread;

/// A process's signal state, which its threads share: the actions, the
/// signals sent to the process as a whole (kill), and whether it is stopped.
struct Signals {
    SigAction actions[k_nsig];    ///< each signal's action, as sigaction set it
    SigInfo info[k_nsig];         ///< for each pending signal, why it was sent
    SigSet pending = 0;           ///< sent to the process, not yet delivered to a thread
    bool stopped = false;         ///< stopped by SIGSTOP and its kin
    int stop_report = 0;          ///< for wait4: 0, or the stop signal not yet reported
    bool continue_report = false; ///< for wait4 WCONTINUED: continued, not yet reported
};

/// Why a signal sent to one thread was sent (ThreadSignals::infos).
struct DirectedInfo {
    int sig = 0;  ///< the signal, 0 for a free slot
    SigInfo info; ///< its siginfo
};

/// Slots for the siginfo of signals sent to one thread: a few, not one per
/// signal, so that a thread stays within its allocator class; past them a
/// signal's info goes in its process's slot (Signals::info).
constexpr int k_thread_infos = 4;

/// One thread's signal state (Linux keeps the same per thread): its mask,
/// the signals sent to it alone (tkill, tgkill, its own faults), and its
/// alternate stack.
struct ThreadSignals {
    SigSet blocked = 0;                 ///< the signal mask (sigprocmask)
    SigSet pending = 0;                 ///< sent to this thread, not yet delivered
    DirectedInfo infos[k_thread_infos]; ///< why the signals in @c pending were sent
    bool suspend_active = false;        ///< in sigsuspend: @c suspend_saved is the mask to restore
    SigSet suspend_saved = 0;           ///< the mask sigsuspend replaced
    /// The alternate stack as sigaltstack set it, flags as given (what a
    /// signal frame's uc_stack saves, as on Linux).
    AltStack altstack;
};

/// Whether @p sp lies on @p s's alternate signal stack (Linux's
/// on_sig_stack: above its base, at most its size above).
bool on_altstack(const ThreadSignals& s, uintptr_t sp);

/// The alternate stack of @p s as sigaltstack reports it to a program whose
/// stack pointer is @p sp: flags TOLL_SS_DISABLE when there is none,
/// TOLL_SS_ONSTACK when @p sp is on it, else 0.
AltStack altstack_state(const ThreadSignals& s, uintptr_t sp);

/// Fills @p out as Linux's siginfo_t for @p d: si_signo, si_errno (0),
/// si_code, then si_pid/si_uid/si_status (a sender or a child) or si_addr
/// (a fault) where the union starts (offset 12 on i386, 16 on arm64).
void siginfo_write(uint8_t (&out)[k_siginfo_size], const SignalDelivery& d);

/// Sends @p sig to the process @p p with @p info, as Linux generates a
/// signal: an ignored one is dropped (unless every thread blocks it),
/// SIGCONT resumes a stopped process and drops pending stops, a stop drops a
/// pending SIGCONT, and init (pid 1) never receives a signal it has no
/// handler for (SIGKILL and SIGSTOP included). The first thread that does
/// not block it takes it; those threads are woken if they sleep, so that
/// blocking calls give up.
void signal_send(Process& p, int sig, const SigInfo& info);

/// Sends @p sig to the thread @p t alone (tkill, tgkill), with the rules of
/// signal_send; only @p t's mask holds it back, only @p t is woken. Its
/// effect may still be the whole process's (a stop, or a default action
/// that ends the process).
void signal_send_thread(Thread& t, int sig, const SigInfo& info);

/// tgkill() (@p tgid > 0) and tkill() (@p tgid 0): @p sig, from the running
/// process, to the thread numbered @p tid, which must belong to process
/// @p tgid when one is named. Signal 0 only checks that the thread exists.
/// Returns k_ok, k_einval for a bad signal number, k_esrch when there is no
/// such thread.
Errno kill_thread(int tgid, int tid, int sig);

/// sigaction's SIG_IGN: forgets @p sig wherever it is pending in @p p (the
/// process and each of its threads).
void discard_signal(Process& p, int sig);

/// A synchronous fault of the running program (SIGSEGV, SIGILL, ...), with
/// si_code @p code and si_addr @p address: if it has a handler for @p sig
/// that is not blocked, the signal is queued and runs on the way out of this
/// trap; otherwise the process ends (a blocked or ignored fault signal
/// cannot be survived, as on Linux), with a line on the console saying why.
/// The ports reach it through user_fault, which picks the signal.
void force_signal(int sig, int code, unsigned vector, const char* what, uintptr_t pc,
                  uintptr_t address);

/// Ends the running process for a fault, whatever its signal actions say.
[[noreturn]] void terminate_by_fault(int sig, unsigned vector, const char* what, uintptr_t pc,
                                     uintptr_t address);

/// The work of return_to_user_checks when there is some: for the
/// running process @p p, whose thread is @p t, delivers the
/// first pending unblocked signal (its default action, or a handler frame
/// built by the architecture), vets a frame marked k_exit_check_frame and
/// finishes an interrupted system call (restarted, or EINTR).
void return_to_user_work(Process& p, Thread& t, arch::TrapFrame& frame);

/// True if a signal waits that should end a blocking system call of the
/// running thread (one it does not block, sent to it or to its process), or
/// the thread must exit: blocking loops return -k_erestartsys (or EINTR)
/// when it is.
bool interrupted();

/// True if the running thread must exit, or a signal waits that will end
/// its process when it is delivered (SIGKILL, or one not blocked whose
/// action is the default "terminate"): what a killable sleep, such as
/// vfork's, gives up for.
bool fatal_signal_pending();

/// The SIGCHLD a parent gets when @p child ends (@p wait_status, Linux's
/// encoding) or stops. Also decides, from the parent's SIGCHLD action,
/// whether the child is reaped at once (SIG_IGN or SA_NOCLDWAIT): returns
/// true if so.
bool notify_parent_of_exit(Process& child, int wait_status);

/// For sigsuspend and ppoll: blocks @p mask (less SIGKILL and SIGSTOP) in
/// place of the running thread's mask @p s until the call returns; the old
/// mask comes back then, or, if a handler runs, when it returns.
void suspend_mask(ThreadSignals& s, SigSet mask);

/// Resets @p p's handlers to the default for execve, and the alternate stack
/// of its thread @p t (ignored signals stay ignored, the mask and pending
/// set are kept, as POSIX says).
void signals_exec_reset(Process& p, Thread& t);

} // namespace toll::proc
