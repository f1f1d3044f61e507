// Signals: generation (kill, faults, a child's exit, a broken pipe), the
// default actions Linux gives each signal, and delivery on the way back to
// user mode. The architecture writes and reads the signal frame itself
// (arch::signal_frame_push/pop); the system calls are in sys/sys_signal.cpp.
#include "kernel/proc/signal.h"
#include "kernel/arch/signal.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/process.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_sent, "signal.sent");
TOLL_COUNTER(g_delivered, "signal.handlers_run");
TOLL_COUNTER(g_default_kills, "signal.default_kills");
TOLL_COUNTER(g_fault_kills, "proc.killed_by_fault");
TOLL_COUNTER(g_stops, "signal.stops");

// What a signal does when its action is SIG_DFL (Linux, signal(7)).
enum class Default { terminate, ignore, stop, cont };

Default default_action(int sig)
{
    switch (sig) {
    case TOLL_SIGCHLD:
    case TOLL_SIGURG:
    case TOLL_SIGWINCH:
        return Default::ignore;
    case TOLL_SIGSTOP:
    case TOLL_SIGTSTP:
    case TOLL_SIGTTIN:
    case TOLL_SIGTTOU:
        return Default::stop;
    case TOLL_SIGCONT:
        return Default::cont;
    default:
        return Default::terminate; // the "core" signals too: Toll writes no core files
    }
}

constexpr SigSet k_unblockable = sig_bit(TOLL_SIGKILL) | sig_bit(TOLL_SIGSTOP);
constexpr SigSet k_stop_set =
    sig_bit(TOLL_SIGSTOP) | sig_bit(TOLL_SIGTSTP) | sig_bit(TOLL_SIGTTIN) | sig_bit(TOLL_SIGTTOU);

SigAction& action_of(Process& p, int sig)
{
    return p.signals.actions[sig - 1];
}

// Whether @p sig would do nothing at all if delivered to @p p now.
bool ignored(Process& p, int sig)
{
    const SigAction& a = action_of(p, sig);
    return a.handler == k_sig_ign ||
           (a.handler == k_sig_dfl && default_action(sig) == Default::ignore);
}

// Wakes @p p's thread if it sleeps, so a blocking call notices the signal.
void kick(Process& p)
{
    if (p.thread && p.thread->state == ThreadState::sleeping && p.thread->wait_channel)
        wakeup(p.thread->wait_channel);
}

void print_fault(Process& p, unsigned vector, const char* what, uintptr_t pc, uintptr_t address)
{
    kprintf("toll: pid %d (%s) killed by fault %u (%s) at pc 0x%lx, address 0x%lx\n", p.pid, p.name,
            vector, what, static_cast<unsigned long>(pc), static_cast<unsigned long>(address));
}

// Stops the running process until SIGCONT or SIGKILL arrives.
void stop_current(Process& p, int sig)
{
    g_stops.add();
    p.signals.stopped = true;
    p.signals.stop_report = sig;
    if (p.parent && !(action_of(*p.parent, TOLL_SIGCHLD).flags & k_sa_nocldstop))
        signal_send(*p.parent, TOLL_SIGCHLD, SigInfo{TOLL_CLD_STOPPED, p.pid, sig, 0});
    wakeup(p.parent); // a parent in wait4(WUNTRACED) sleeps on itself
    while (p.signals.stopped && !(p.signals.pending & sig_bit(TOLL_SIGKILL)))
        sleep_on(&p.signals.stopped);
}

// The mask a handler's frame saves: the one sigsuspend replaced, if any.
SigSet mask_to_save(Process& p)
{
    Signals& s = p.signals;
    if (s.suspend_active) {
        s.suspend_active = false;
        return s.suspend_saved;
    }
    return s.blocked;
}

} // namespace

void siginfo_write(uint8_t (&out)[k_siginfo_size], const SignalDelivery& d)
{
    memset(out, 0, sizeof out);
    int head[3] = {d.signo, 0, d.info.code};
    memcpy(out, head, sizeof head);
    // The union after the three ints is aligned for a pointer.
    constexpr size_t k_union = (sizeof head + alignof(void*) - 1) & ~(alignof(void*) - 1);
    bool fault = d.signo == TOLL_SIGSEGV || d.signo == TOLL_SIGBUS || d.signo == TOLL_SIGILL ||
                 d.signo == TOLL_SIGFPE || d.signo == TOLL_SIGTRAP;
    if (fault && d.info.code > 0) {
        memcpy(out + k_union, &d.info.addr, sizeof d.info.addr);
    } else {
        int fields[3] = {d.info.pid, 0 /* uid: root */, d.info.status};
        memcpy(out + k_union, fields, sizeof fields);
    }
}

void signal_send(Process& p, int sig, const SigInfo& info)
{
    Signals& s = p.signals;
    if (p.zombie)
        return;
    // init runs only the handlers it installed: no default action, not even
    // SIGKILL's, can end it (Linux's SIGNAL_UNKILLABLE).
    if (p.pid == 1 && (action_of(p, sig).handler == k_sig_dfl || (sig_bit(sig) & k_unblockable)))
        return;
    g_sent.add();
    if (sig == TOLL_SIGCONT || sig == TOLL_SIGKILL) {
        s.pending &= ~k_stop_set;
        if (s.stopped) {
            s.stopped = false;
            s.stop_report = 0;
            s.continue_report = true;
            wakeup(&s.stopped);
            if (p.parent && sig == TOLL_SIGCONT)
                signal_send(*p.parent, TOLL_SIGCHLD, SigInfo{TOLL_CLD_CONTINUED, p.pid, sig, 0});
        }
    } else if (sig_bit(sig) & k_stop_set) {
        s.pending &= ~sig_bit(TOLL_SIGCONT);
    }
    // Blocked signals are kept even if ignored: the action may change
    // before they are unblocked.
    if (ignored(p, sig) && !(s.blocked & sig_bit(sig)))
        return;
    if (!(s.pending & sig_bit(sig))) // the first of a kind is kept; they do not queue
        s.info[sig - 1] = info;
    s.pending |= sig_bit(sig);
    if (p.thread)
        p.thread->exit_work |= k_exit_signal;
    kick(p);
}

Errno kill(int pid, int sig, int code)
{
    if (sig < 0 || sig > k_nsig)
        return k_einval;
    Process* self = current_process();
    SigInfo info{code, self ? self->pid : 0, 0, 0};
    if (pid > 0) {
        SpinGuard g(process_table_lock());
        Process* p = find_process(pid);
        if (!p)
            return k_esrch;
        if (sig)
            signal_send(*p, sig, info); // nothing, for a zombie
        return k_ok;
    }
    // Linux's kill_something_info: -INT_MIN has no group to name.
    if (pid == INT32_MIN)
        return k_esrch;
    struct Target {
        int pid, group, sig;
        const SigInfo* info;
        Process* self;
        int found;
    } t{pid, pid == 0 ? (self ? self->pgid : 0) : -pid, sig, &info, self, 0};
    // 0 and < -1: the members of a process group; -1: every process but
    // init and the caller.
    for_each_process(
        [](Process& p, void* context) {
            auto& t = *static_cast<Target*>(context);
            if (p.zombie && p.orphan)
                return; // reaped at once on Linux
            bool match = t.pid == -1 ? p.pid != 1 && &p != t.self : p.pgid == t.group;
            if (!match)
                return;
            ++t.found;
            if (t.sig)
                signal_send(p, t.sig, *t.info);
        },
        &t);
    return t.found ? k_ok : k_esrch;
}

void force_signal(int sig, int code, unsigned vector, const char* what, uintptr_t pc,
                  uintptr_t address)
{
    Process* p = current_process();
    TOLL_ASSERT(p);
    const SigAction& a = action_of(*p, sig);
    bool catchable =
        a.handler != k_sig_dfl && a.handler != k_sig_ign && !(p->signals.blocked & sig_bit(sig));
    if (!catchable)
        terminate_by_fault(sig, vector, what, pc, address);
    p->signals.info[sig - 1] = SigInfo{code, 0, 0, address};
    p->signals.pending |= sig_bit(sig);
    current()->exit_work |= k_exit_signal;
}

void terminate_by_fault(int sig, unsigned vector, const char* what, uintptr_t pc, uintptr_t address)
{
    Process* p = current_process();
    TOLL_ASSERT(p);
    g_fault_kills.add();
    print_fault(*p, vector, what, pc, address);
    exit_current(sig); // wait status: terminated by this signal
}

void suspend_mask(Signals& s, SigSet mask)
{
    s.suspend_saved = s.blocked;
    s.suspend_active = true;
    current()->exit_work |= k_exit_suspend;
    s.blocked = mask & ~k_unblockable;
}

bool on_altstack(const Signals& s, uintptr_t sp)
{
    return sp > s.altstack.sp && sp - s.altstack.sp <= s.altstack.size;
}

AltStack altstack_state(const Signals& s, uintptr_t sp)
{
    if (s.altstack.size == 0)
        return AltStack{};
    return AltStack{s.altstack.sp, s.altstack.size, on_altstack(s, sp) ? k_ss_onstack : 0};
}

bool interrupted()
{
    Process* p = current_process();
    return p && (p->signals.pending & ~p->signals.blocked);
}

namespace {

// return_to_user_checks' work when there is some.
void deliver(Process* p, Thread& t, arch::TrapFrame& frame)
{
    Signals& s = p->signals;
    if (t.exit_work & k_exit_check_frame) {
        t.exit_work &= ~k_exit_check_frame;
        if (!arch::user_frame_vet(frame, t.context))
            force_signal(TOLL_SIGSEGV, TOLL_SI_KERNEL, 0, "frame cannot be restored", frame.pc(),
                         0);
    }
    for (;;) {
        SigSet ready = s.pending & ~s.blocked;
        if (!ready)
            break;
        int sig = __builtin_ctzll(ready) + 1;
        if (ready & sig_bit(TOLL_SIGKILL))
            sig = TOLL_SIGKILL;
        s.pending &= ~sig_bit(sig);
        SigAction a = action_of(*p, sig);
        if (a.handler == k_sig_ign)
            continue;
        if (a.handler == k_sig_dfl) {
            switch (default_action(sig)) {
            case Default::ignore:
            case Default::cont:
                continue;
            case Default::stop:
                stop_current(*p, sig);
                continue;
            case Default::terminate:
                g_default_kills.add();
                exit_current(sig);
            }
        }
        // A handler. A system call it interrupted either runs again after
        // it (SA_RESTART) or returns EINTR.
        if (t.exit_work & k_exit_restart) {
            t.exit_work &= ~k_exit_restart;
            if (a.flags & k_sa_restart)
                arch::syscall_restart(frame, t.syscall_saved);
        }
        // SA_ONSTACK: the frame goes on the alternate stack, unless the
        // program runs on it already (then it nests, as on Linux).
        // (A stack whose top wraps around zero gets a frame that cannot be
        // written: SIGSEGV, as on Linux.)
        uintptr_t sp = frame.user_sp();
        bool nested = on_altstack(s, sp);
        bool entering = (a.flags & k_sa_onstack) && s.altstack.size && !nested;
        uintptr_t top = entering ? s.altstack.sp + s.altstack.size : sp;
        SignalDelivery d{sig, s.info[sig - 1],    a,         mask_to_save(*p),
                         top, nested || entering, s.altstack};
        if (!arch::signal_frame_push(frame, t.context, d)) {
            // No room for the frame (a bad stack pointer): Linux's answer too.
            terminate_by_fault(TOLL_SIGSEGV, 0, "cannot write the signal frame", frame.pc(), 0);
        }
        g_delivered.add();
        if (!(a.flags & k_sa_nodefer))
            s.blocked |= sig_bit(sig);
        s.blocked = (s.blocked | a.mask) & ~k_unblockable;
        if (a.flags & k_sa_resethand)
            action_of(*p, sig) = SigAction{};
        return;
    }
    // Nothing ran in user mode: an interrupted call simply runs again.
    if (t.exit_work & k_exit_restart) {
        t.exit_work &= ~k_exit_restart;
        arch::syscall_restart(frame, t.syscall_saved);
    }
    if (s.suspend_active) { // sigsuspend woke for a signal that needed no handler
        s.blocked = s.suspend_saved;
        s.suspend_active = false;
    }
}

} // namespace

void return_to_user_work(Process& p, Thread& t, arch::TrapFrame& frame)
{
    t.exit_work &= ~k_exit_suspend; // s.suspend_active says the rest
    deliver(&p, t, frame);
    // k_exit_signal stays while anything is pending, blocked signals too, so
    // that unblocking one needs no other bookkeeping.
    if (!p.signals.pending)
        t.exit_work &= ~k_exit_signal;
}

bool notify_parent_of_exit(Process& child, int wait_status)
{
    Process* parent = child.parent;
    if (!parent)
        return false;
    bool killed = (wait_status & 0x7F) != 0;
    signal_send(*parent, TOLL_SIGCHLD,
                SigInfo{killed ? TOLL_CLD_KILLED : TOLL_CLD_EXITED, child.pid,
                        killed ? wait_status & 0x7F : (wait_status >> 8) & 0xFF, 0});
    const SigAction& a = action_of(*parent, TOLL_SIGCHLD);
    return a.handler == k_sig_ign || (a.flags & k_sa_nocldwait);
}

void signals_exec_reset(Process& p)
{
    // The old program's stack is gone; the flags stay (Linux, begin_new_exec).
    p.signals.altstack.sp = 0;
    p.signals.altstack.size = 0;
    for (SigAction& a : p.signals.actions)
        if (a.handler != k_sig_ign)
            a = SigAction{};
        else
            a.flags = 0;
}

} // namespace toll::proc
