// The signal system calls: sigaction, the mask, sigpending, sigsuspend and
// pause, tkill/tgkill, and sigreturn, which hands the saved frame back to
// the architecture (kernel/arch/signal.h). The subsystem itself is
// kernel/proc/signal.cpp.
#include "kernel/arch/signal.h"
#include "kernel/kern/errno.h"
#include "kernel/proc/process.h"
#include "kernel/proc/signal.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

// Linux's struct sigaction as rt_sigaction reads and writes it (the kernel's
// layout, include/linux/signal_types.h: handler, flags, restorer, mask).
struct LinuxSigaction {
    uintptr_t handler;
    unsigned long flags;
    uintptr_t restorer;
    uint32_t mask[2];
};
static_assert(sizeof(LinuxSigaction) == 3 * sizeof(uintptr_t) + 8);

constexpr uintptr_t k_sigset_size = sizeof(SigSet); // rt_*'s sigsetsize argument
constexpr SigSet k_unblockable = sig_bit(TOLL_SIGKILL) | sig_bit(TOLL_SIGSTOP);

SigSet set_from(const uint32_t words[2])
{
    return SigSet(words[0]) | SigSet(words[1]) << 32;
}

} // namespace

long sys_tkill(const SyscallArgs& a)
{
    int tid = static_cast<int>(a.a[0]);
    if (tid <= 0)
        return -k_einval;
    return -proc::kill_thread(0, tid, static_cast<int>(a.a[1]));
}

long sys_tgkill(const SyscallArgs& a)
{
    int tgid = static_cast<int>(a.a[0]), tid = static_cast<int>(a.a[1]);
    if (tgid <= 0 || tid <= 0)
        return -k_einval;
    return -proc::kill_thread(tgid, tid, static_cast<int>(a.a[2]));
}

long syscall_interrupted(SyscallHandler handler, uintptr_t overwritten)
{
    if (handler == sys_rt_sigreturn || handler == sys_sigreturn)
        return -k_erestartsys; // the restored register, whatever it holds
    proc::Thread* t = proc::current();
    proc::exit_work_set(*t, proc::k_exit_restart); // return_to_user_checks consumes it
    t->syscall_saved = overwritten;
    return -k_eintr;
}

long sys_rt_sigaction(const SyscallArgs& a)
{
    int sig = static_cast<int>(a.a[0]);
    if (a.a[3] != k_sigset_size || sig < 1 || sig > k_nsig)
        return -k_einval;
    proc::Process* p = proc::current_process();
    LinuxSigaction in;
    if (a.a[1]) {
        if (Errno e = copyin(&in, a.a[1], sizeof in); e != k_ok)
            return -e;
        if (sig == TOLL_SIGKILL || sig == TOLL_SIGSTOP)
            return -k_einval;
    }
    if (a.a[2]) {
        const SigAction& old = p->signals.actions[sig - 1];
        LinuxSigaction out{
            old.handler,
            static_cast<unsigned long>(old.flags),
            old.restorer,
            {static_cast<uint32_t>(old.mask), static_cast<uint32_t>(old.mask >> 32)}};
        if (Errno e = copyout(a.a[2], &out, sizeof out); e != k_ok)
            return -e;
    }
    if (a.a[1]) {
        // Flags Linux knows but Toll has no use for (SA_ONSTACK without an
        // alternate stack, SA_RESTORER) are kept and reported back; unknown
        // bits are kept too, as Linux does, but mean nothing.
        {
            // Under the table's lock: a signal picked on another CPU reads it.
            SpinGuard g(proc::process_table_lock());
            p->signals.actions[sig - 1] = SigAction{in.handler, in.flags & 0xFFFFFFFFu, in.restorer,
                                                    set_from(in.mask) & ~k_unblockable};
        }
        // Setting SIG_IGN (or a default that ignores) drops what is pending.
        if (in.handler == k_sig_ign ||
            (in.handler == k_sig_dfl &&
             (sig == TOLL_SIGCHLD || sig == TOLL_SIGURG || sig == TOLL_SIGWINCH)))
            proc::discard_signal(*p, sig);
    }
    return 0;
}

long sys_rt_sigprocmask(const SyscallArgs& a)
{
    constexpr uintptr_t k_block = 0, k_unblock = 1, k_setmask = 2;
    uintptr_t how = a.a[0];
    if (a.a[3] != k_sigset_size)
        return -k_einval;
    proc::ThreadSignals& s = proc::current()->sig; // the calling thread's mask alone
    SigSet set = 0;
    if (a.a[1]) {
        if (how > k_setmask)
            return -k_einval;
        if (Errno e = copyin(&set, a.a[1], sizeof set); e != k_ok)
            return -e;
    }
    if (a.a[2])
        if (Errno e = copyout(a.a[2], &s.blocked, sizeof s.blocked); e != k_ok)
            return -e;
    if (a.a[1]) {
        if (how == k_block)
            s.blocked |= set;
        else if (how == k_unblock)
            s.blocked &= ~set;
        else
            s.blocked = set;
        s.blocked &= ~k_unblockable;
    }
    return 0;
}

long sys_rt_sigpending(const SyscallArgs& a)
{
    if (a.a[1] > k_sigset_size)
        return -k_einval;
    proc::Thread* t = proc::current();
    SigSet pending = (t->process->signals.pending | t->sig.pending) & t->sig.blocked;
    return -copyout(a.a[0], &pending, a.a[1]); // 0, or -errno
}

long sys_rt_sigsuspend(const SyscallArgs& a)
{
    if (a.a[1] != k_sigset_size)
        return -k_einval;
    SigSet set;
    if (Errno e = copyin(&set, a.a[0], sizeof set); e != k_ok)
        return -e;
    proc::ThreadSignals& s = proc::current()->sig;
    proc::suspend_mask(s, set);
    while (!proc::interrupted())
        proc::sleep_on_interruptible(&s);
    return -k_eintr; // the handler's frame saves the old mask (mask_to_save)
}

long sys_sigaltstack(const SyscallArgs& a)
{
    // Linux's stack_t: ss_sp, ss_flags, ss_size (padded after the int).
    struct LinuxStack {
        uintptr_t sp;
        int flags;
        size_t size;
    };
    LinuxStack in;
    if (a.a[0])
        if (Errno e = copyin(&in, a.a[0], sizeof in); e != k_ok)
            return -e;
    proc::ThreadSignals& s = proc::current()->sig;
    uintptr_t sp = a.frame->user_sp();
    AltStack old = proc::altstack_state(s, sp);
    if (a.a[0]) {
        // Not while a handler runs on it (Linux's EPERM); SS_ONSTACK is
        // accepted as 0 for old programs. SS_AUTODISARM is not offered.
        if (proc::on_altstack(s, sp))
            return -k_eperm;
        if (in.flags != 0 && in.flags != TOLL_SS_ONSTACK && in.flags != TOLL_SS_DISABLE)
            return -k_einval;
        if (in.flags == TOLL_SS_DISABLE) {
            in.sp = 0;
            in.size = 0;
        } else if (in.size < arch::min_signal_stack()) {
            return -k_enomem;
        }
        s.altstack = AltStack{in.sp, in.size, in.flags};
    }
    if (a.a[1]) {
        LinuxStack out;
        memset(&out, 0, sizeof out); // no kernel bytes in the padding
        out.sp = old.sp;
        out.flags = old.flags;
        out.size = old.size;
        if (Errno e = copyout(a.a[1], &out, sizeof out); e != k_ok)
            return -e;
    }
    return 0;
}

long sys_pause(const SyscallArgs&)
{
    proc::ThreadSignals& s = proc::current()->sig;
    while (!proc::interrupted())
        proc::sleep_on_interruptible(&s);
    return -k_eintr;
}

namespace {

// sigreturn and rt_sigreturn: the frame is the program's; a bad one kills it.
long do_sigreturn(const SyscallArgs& a, bool rt)
{
    SigSet mask;
    proc::Thread* t = proc::current();
    if (!arch::signal_frame_pop(*a.frame, t->context, rt, &mask))
        proc::terminate_by_fault(TOLL_SIGSEGV, 0, "bad signal frame at sigreturn", a.frame->pc(),
                                 0);
    proc::exit_work_set(*t, proc::k_exit_check_frame); // every value came from the program
    t->sig.blocked = mask & ~k_unblockable;
    return arch::syscall_return_value(*a.frame); // the restored register, unchanged
}

} // namespace

long sys_rt_sigreturn(const SyscallArgs& a)
{
    return do_sigreturn(a, true);
}

long sys_sigreturn(const SyscallArgs& a)
{
    return do_sigreturn(a, false);
}

} // namespace toll::sys
