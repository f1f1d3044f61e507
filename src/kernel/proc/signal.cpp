// Signals: generation (kill, faults, a child's exit, a broken pipe), the
// default actions Linux gives each signal, and delivery on the way back to
// user mode. The architecture writes and reads the signal frame itself
// (arch::signal_frame_push/pop); the system calls are in sys/sys_signal.cpp.
//
// Locking: what is pending (the process's and each thread's), the stop
// state, and the thread lists walked to send are under the process table's
// lock (proc.table), as Linux keeps them under sighand->siglock: a sender
// on one CPU and the receiving thread taking its signal on another must
// agree on each pending bit. A signal is sent with the lock held
// (signal_send's callers take it); a thread takes it to pick a signal, to
// clear its exit_work bit once nothing is pending, and to wait while its
// process is stopped. One lock for every process costs little: the
// critical sections are a few bit operations. The masks are each thread's
// own and written only by it; another CPU reading one may see it a moment
// late, which a kick (a spurious wake-up) covers.
#include "kernel/proc/signal.h"
#include "kernel/arch/signal.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/process.h"
#include "kernel/sys/uaccess.h"
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

// Tells each thread of @p p that a signal waits (exit_work) and wakes those
// that @p sig may concern: the ones that do not block it, or all of them
// for the signals that stop, continue or kill the whole process.
void kick_threads(Process& p, int sig)
{
    bool everyone = (sig_bit(sig) & k_unblockable) || sig == TOLL_SIGCONT;
    for (Thread* t = p.threads; t; t = t->peer) {
        exit_work_set(*t, k_exit_signal);
        if (everyone || !(t->sig.blocked & sig_bit(sig)))
            thread_kick(*t);
    }
}

// Whether every thread of @p p blocks @p sig (a process-directed signal
// that none can take yet).
bool blocked_by_all(const Process& p, int sig)
{
    for (const Thread* t = p.threads; t; t = t->peer)
        if (!(t->sig.blocked & sig_bit(sig)))
            return false;
    return p.threads != nullptr;
}

void print_fault(Process& p, unsigned vector, const char* what, uintptr_t pc, uintptr_t address)
{
    kprintf("toll: pid %d (%s) killed by fault %u (%s) at pc 0x%lx, address 0x%lx\n", p.pid, p.name,
            vector, what, static_cast<unsigned long>(pc), static_cast<unsigned long>(address));
}

// Keeps @p info as the reason for @p sig, sent to the thread whose state is
// @p ts of process @p p (a free slot of its own, else the process's).
void keep_info(Process& p, ThreadSignals& ts, int sig, const SigInfo& info)
{
    for (DirectedInfo& d : ts.infos)
        if (d.sig == 0) {
            d = DirectedInfo{sig, info};
            return;
        }
    p.signals.info[sig - 1] = info;
}

// Takes the reason kept for @p sig off @p ts (and, if it had no slot, the
// process's): the siginfo of its delivery.
SigInfo take_info(Process& p, ThreadSignals& ts, int sig)
{
    for (DirectedInfo& d : ts.infos)
        if (d.sig == sig) {
            d.sig = 0;
            return d.info;
        }
    return p.signals.info[sig - 1];
}

// Drops @p sig from what is pending for the thread whose state is @p ts.
void forget(ThreadSignals& ts, int sig)
{
    ts.pending &= ~sig_bit(sig);
    for (DirectedInfo& d : ts.infos)
        if (d.sig == sig)
            d.sig = 0;
}

// While @p p is stopped, the running thread @p t sleeps (until SIGCONT, or
// SIGKILL, or it must exit).
void wait_while_stopped(Process& p, Thread& t)
{
    SpinGuard g(process_table_lock()); // SIGCONT clears stopped and wakes under it
    while (p.signals.stopped && !((p.signals.pending | t.sig.pending) & sig_bit(TOLL_SIGKILL)) &&
           !t.must_exit)
        sleep_on(&p.signals.stopped, process_table_lock());
}

// Stops the running process until SIGCONT or SIGKILL arrives: its other
// threads stop on their way back to user mode (wait_while_stopped).
void stop_current(Process& p, Thread& t, int sig)
{
    g_stops.add();
    {
        SpinGuard g(process_table_lock());
        p.signals.stopped = true;
        p.signals.stop_report = sig;
        for (Thread* other = p.threads; other; other = other->peer)
            exit_work_set(*other, k_exit_signal);
        if (p.parent && !(action_of(*p.parent, TOLL_SIGCHLD).flags & TOLL_SA_NOCLDSTOP))
            signal_send(*p.parent, TOLL_SIGCHLD, SigInfo{TOLL_CLD_STOPPED, p.pid, sig, 0});
        wakeup(p.parent); // a parent in wait4(WUNTRACED) sleeps on itself
    }
    wait_while_stopped(p, t);
}

// The mask a handler's frame saves: the one sigsuspend replaced, if any.
SigSet mask_to_save(ThreadSignals& s)
{
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

namespace {

// What every signal does as it is generated, for the process or one of its
// threads: false if it goes no further (a zombie, or init).
bool generate(Process& p, int sig)
{
    Signals& s = p.signals;
    if (p.zombie)
        return false;
    // init runs only the handlers it installed: no default action, not even
    // SIGKILL's, can end it (Linux's SIGNAL_UNKILLABLE).
    if (p.pid == 1 && (action_of(p, sig).handler == k_sig_dfl || (sig_bit(sig) & k_unblockable)))
        return false;
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
        for (Thread* t = p.threads; t; t = t->peer)
            forget(t->sig, TOLL_SIGCONT);
    }
    return true;
}

} // namespace

void signal_send(Process& p, int sig, const SigInfo& info)
{
    TOLL_ASSERT(process_table_lock().held_here());
    if (!generate(p, sig))
        return;
    Signals& s = p.signals;
    // Blocked signals are kept even if ignored: the action may change
    // before they are unblocked.
    if (ignored(p, sig) && !blocked_by_all(p, sig))
        return;
    if (!(s.pending & sig_bit(sig))) // the first of a kind is kept; they do not queue
        s.info[sig - 1] = info;
    s.pending |= sig_bit(sig);
    kick_threads(p, sig);
}

void signal_send_thread(Thread& t, int sig, const SigInfo& info)
{
    TOLL_ASSERT(process_table_lock().held_here());
    Process& p = *t.process;
    if (!generate(p, sig))
        return;
    if (ignored(p, sig) && !(t.sig.blocked & sig_bit(sig)))
        return;
    if (!(t.sig.pending & sig_bit(sig))) // the first of a kind is kept
        keep_info(p, t.sig, sig, info);
    t.sig.pending |= sig_bit(sig);
    exit_work_set(t, k_exit_signal);
    thread_kick(t);
}

Errno kill_thread(int tgid, int tid, int sig)
{
    if (sig < 0 || sig > k_nsig)
        return k_einval;
    SpinGuard g(process_table_lock());
    Thread* t = find_thread(tid);
    if (!t) {
        // A zombie's leader is still there to be signalled, for nothing
        // (Linux keeps its task until the wait).
        Process* z = find_process(tid);
        return z && z->zombie && (tgid <= 0 || tgid == tid) ? k_ok : k_esrch;
    }
    if (tgid > 0 && t->process->pid != tgid)
        return k_esrch;
    Process* self = current_process();
    if (sig)
        signal_send_thread(*t, sig, SigInfo{TOLL_SI_TKILL, self ? self->pid : 0, 0, 0});
    return k_ok;
}

void discard_signal(Process& p, int sig)
{
    SpinGuard g(process_table_lock());
    p.signals.pending &= ~sig_bit(sig);
    for (Thread* t = p.threads; t; t = t->peer)
        forget(t->sig, sig);
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
    Thread* t = current();
    const SigAction& a = action_of(*p, sig);
    bool catchable =
        a.handler != k_sig_dfl && a.handler != k_sig_ign && !(t->sig.blocked & sig_bit(sig));
    if (!catchable)
        terminate_by_fault(sig, vector, what, pc, address);
    // A fault is the faulting thread's own signal.
    SpinGuard g(process_table_lock()); // a sender on another CPU writes the same bits
    forget(t->sig, sig);               // this fault's address, not an earlier one's
    keep_info(*p, t->sig, sig, SigInfo{code, 0, 0, address});
    t->sig.pending |= sig_bit(sig);
    exit_work_set(*t, k_exit_signal);
}

void terminate_by_fault(int sig, unsigned vector, const char* what, uintptr_t pc, uintptr_t address)
{
    Process* p = current_process();
    TOLL_ASSERT(p);
    g_fault_kills.add();
    print_fault(*p, vector, what, pc, address);
    exit_current(sig); // wait status: terminated by this signal
}

void suspend_mask(ThreadSignals& s, SigSet mask)
{
    s.suspend_saved = s.blocked;
    s.suspend_active = true;
    exit_work_set(*current(), k_exit_suspend);
    s.blocked = mask & ~k_unblockable;
}

bool on_altstack(const ThreadSignals& s, uintptr_t sp)
{
    return sp > s.altstack.sp && sp - s.altstack.sp <= s.altstack.size;
}

AltStack altstack_state(const ThreadSignals& s, uintptr_t sp)
{
    if (s.altstack.size == 0)
        return AltStack{};
    return AltStack{s.altstack.sp, s.altstack.size, on_altstack(s, sp) ? TOLL_SS_ONSTACK : 0};
}

bool interrupted()
{
    Thread* t = current();
    Process* p = t->process;
    // A thread that must exit has a SIGKILL pending (kill_other_threads).
    return p && ((p->signals.pending | t->sig.pending) & ~t->sig.blocked);
}

bool fatal_signal_pending()
{
    Thread* t = current();
    Process* p = t->process;
    if (p && t->must_exit)
        return true;
    if (!p || p->pid == 1)
        return false; // init ends for no signal
    SigSet ready = (p->signals.pending | t->sig.pending) & ~t->sig.blocked;
    for (int sig = 1; sig <= k_nsig; ++sig)
        if ((ready & sig_bit(sig)) && action_of(*p, sig).handler == k_sig_dfl &&
            default_action(sig) == Default::terminate)
            return true;
    return false;
}

namespace {

// return_to_user_checks' work when there is some.
void deliver(Process* p, Thread& t, arch::TrapFrame& frame)
{
    Signals& s = p->signals;
    ThreadSignals& ts = t.sig;
    if (t.exit_work & k_exit_check_frame) {
        exit_work_clear(t, k_exit_check_frame);
        if (!arch::user_frame_vet(frame, t.context))
            force_signal(TOLL_SIGSEGV, TOLL_SI_KERNEL, 0, "frame cannot be restored", frame.pc(),
                         0);
    }
    for (;;) {
        wait_while_stopped(*p, t);
        if (t.must_exit)
            exit_thread(0); // the group's status, if it is a group exit
        // Picked under the table's lock: another thread of the process may
        // take the same process-directed signal on another CPU, and a
        // sender may be setting bits.
        int sig;
        SigInfo info;
        SigAction a;
        {
            SpinGuard g(process_table_lock());
            SigSet ready = (s.pending | ts.pending) & ~ts.blocked;
            if (!ready)
                break;
            sig = __builtin_ctzll(ready) + 1;
            if (ready & sig_bit(TOLL_SIGKILL))
                sig = TOLL_SIGKILL;
            // The thread's own signal first (its info), then the process's.
            if (ts.pending & sig_bit(sig)) {
                ts.pending &= ~sig_bit(sig);
                info = take_info(*p, ts, sig);
            } else {
                s.pending &= ~sig_bit(sig);
                info = s.info[sig - 1];
            }
            a = action_of(*p, sig);
        }
        if (a.handler == k_sig_ign)
            continue;
        if (a.handler == k_sig_dfl) {
            switch (default_action(sig)) {
            case Default::ignore:
            case Default::cont:
                continue;
            case Default::stop:
                stop_current(*p, t, sig);
                continue;
            case Default::terminate:
                g_default_kills.add();
                exit_current(sig);
            }
        }
        // A handler. A system call it interrupted either runs again after
        // it (SA_RESTART) or returns EINTR.
        if (t.exit_work & k_exit_restart) {
            exit_work_clear(t, k_exit_restart);
            if (a.flags & TOLL_SA_RESTART)
                arch::syscall_restart(frame, t.syscall_saved);
        }
        // SA_ONSTACK: the frame goes on the alternate stack, unless the
        // program runs on it already (then it nests, as on Linux).
        // (A stack whose top wraps around zero gets a frame that cannot be
        // written: SIGSEGV, as on Linux.)
        uintptr_t sp = frame.user_sp();
        bool nested = on_altstack(ts, sp);
        bool entering = (a.flags & TOLL_SA_ONSTACK) && ts.altstack.size && !nested;
        uintptr_t top = entering ? ts.altstack.sp + ts.altstack.size : sp;
        SignalDelivery d{sig, info, a, mask_to_save(ts), top, nested || entering, ts.altstack};
        if (!arch::signal_frame_push(frame, t.context, d)) {
            // No room for the frame (a bad stack pointer): Linux's answer too.
            terminate_by_fault(TOLL_SIGSEGV, 0, "cannot write the signal frame", frame.pc(), 0);
        }
        g_delivered.add();
        if (!(a.flags & TOLL_SA_NODEFER))
            ts.blocked |= sig_bit(sig);
        ts.blocked = (ts.blocked | a.mask) & ~k_unblockable;
        if (a.flags & TOLL_SA_RESETHAND)
            action_of(*p, sig) = SigAction{};
        return;
    }
    // Nothing ran in user mode: an interrupted call simply runs again.
    if (t.exit_work & k_exit_restart) {
        exit_work_clear(t, k_exit_restart);
        arch::syscall_restart(frame, t.syscall_saved);
    }
    if (ts.suspend_active) { // sigsuspend woke for a signal that needed no handler
        ts.blocked = ts.suspend_saved;
        ts.suspend_active = false;
    }
}

} // namespace

void return_to_user_work(Process& p, Thread& t, arch::TrapFrame& frame)
{
    if (t.exit_work & k_exit_child_settid) { // the first return of a clone child
        exit_work_clear(t, k_exit_child_settid);
        int tid = t.tid;
        (void)sys::copyout(t.set_child_tid, &tid,
                           sizeof tid); // as Linux, a bad address is no error
    }
    exit_work_clear(t, k_exit_suspend); // s.suspend_active says the rest
    deliver(&p, t, frame);
    // k_exit_signal stays while anything is pending, blocked signals too, so
    // that unblocking one needs no other bookkeeping. Cleared under the
    // table's lock, which a sender holds from its pending bit to its
    // exit_work bit: a signal sent now is not forgotten.
    SpinGuard g(process_table_lock());
    if (!(p.signals.pending | t.sig.pending) && !p.signals.stopped && !t.must_exit)
        exit_work_clear(t, k_exit_signal);
}

bool notify_parent_of_exit(Process& child, int wait_status)
{
    Process* parent = child.parent;
    if (!parent)
        return false;
    bool killed = (wait_status & 0x7F) != 0;
    // The signal clone asked for (SIGCHLD for fork; 0 is none).
    if (child.exit_signal)
        signal_send(*parent, child.exit_signal,
                    SigInfo{killed ? TOLL_CLD_KILLED : TOLL_CLD_EXITED, child.pid,
                            killed ? wait_status & 0x7F : (wait_status >> 8) & 0xFF, 0});
    const SigAction& a = action_of(*parent, TOLL_SIGCHLD);
    return child.exit_signal == TOLL_SIGCHLD &&
           (a.handler == k_sig_ign || (a.flags & TOLL_SA_NOCLDWAIT));
}

void signals_exec_reset(Process& p, Thread& t)
{
    // The old program's stack is gone; the flags stay (Linux, begin_new_exec).
    t.sig.altstack.sp = 0;
    t.sig.altstack.size = 0;
    for (SigAction& a : p.signals.actions)
        if (a.handler != k_sig_ign)
            a = SigAction{};
        else
            a.flags = 0;
}

} // namespace toll::proc
