// Making processes and threads: clone (fork, vfork, pthread_create) and the
// check of its flags, and the wait of a vfork parent. The table they enter
// is process.cpp's (process_internal.h).
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/proc/process.h"
#include "kernel/proc/process_internal.h"
#include "kernel/proc/sched.h"
#include "kernel/sys/file.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_forks, "proc.forks");
TOLL_COUNTER(g_threads, "proc.threads_created");

constexpr uint64_t k_clone_namespaces = k_clone_newns | k_clone_newcgroup | k_clone_newuts |
                                        k_clone_newipc | k_clone_newuser | k_clone_newpid |
                                        k_clone_newnet;

// The combinations Linux's copy_process refuses, then what Toll lacks.
Errno check_clone_flags(uint64_t f)
{
    auto both = [f](uint64_t a, uint64_t b) { return (f & a) && (f & b); };
    if (both(k_clone_newns, k_clone_fs) || both(k_clone_newuser, k_clone_fs))
        return k_einval; // a new mount namespace cannot share the root and cwd
    if ((f & k_clone_thread) && !(f & k_clone_sighand))
        return k_einval; // threads share their signal handlers
    if ((f & k_clone_sighand) && !(f & k_clone_vm))
        return k_einval; // handlers are addresses in one address space
    if (both(k_clone_pidfd, k_clone_parent_settid) || both(k_clone_pidfd, k_clone_detached))
        return k_einval; // the pidfd goes where parent_tid points
    if ((f & k_clone_signal_mask) > k_nsig)
        return k_einval;
    // Toll: no namespaces and no pidfds; the descriptor table, the root
    // and the signal actions are the process's, so only threads share them,
    // and a thread always shares them.
    if (f & (k_clone_namespaces | k_clone_pidfd))
        return k_einval;
    constexpr uint64_t k_shared = k_clone_files | k_clone_fs | k_clone_sighand;
    if ((f & k_clone_thread) ? (f & k_shared) != k_shared : (f & k_shared) != 0)
        return k_einval;
    return k_ok;
}

// The vfork parent of the running process's child sleeps here until the
// child has let go of the address space (vfork_release), or a fatal signal
// comes (as on Linux, where the wait is killable and nothing else).
void vfork_wait(Thread* self, int child_pid)
{
    // The child, on another CPU, clears the flag and wakes under the lock.
    SpinGuard g(g_table_lock);
    while (self->vfork_waiting && !fatal_signal_pending())
        sleep_on(&self->vfork_waiting, g_table_lock);
    if (self->vfork_waiting) { // killed first: the child must forget us
        self->vfork_waiting = false;
        if (Process* c = find_process(child_pid))
            c->vfork_parent = nullptr;
    }
}

// What a new thread of either kind takes from the request: its user stack,
// if one is given, and the words CLONE_CHILD_SETTID and CLONE_CHILD_CLEARTID
// name (the first written on its way out to user mode, the second at its exit).
void set_child_words(Thread& t, const CloneRequest& r)
{
    if (r.stack)
        arch::frame_set_user_sp(*t.frame, r.stack);
    if (r.flags & k_clone_child_settid) {
        t.set_child_tid = r.child_tid;
        exit_work_set(t, k_exit_child_settid);
    }
    if (r.flags & k_clone_child_cleartid)
        t.clear_child_tid = r.child_tid;
}

// clone() of a new process: a copy of the caller's (or, with k_clone_vm,
// the caller's own address space) with one thread.
Result<int> clone_process(arch::TrapFrame& frame, const CloneRequest& r)
{
    Process* parent = current_process();
    Thread* self = current();
    Process* reported_to = parent;
    if (r.flags & k_clone_parent) {
        if (!parent->parent)
            return k_einval; // Linux: not from init, whose parent is nobody
        reported_to = parent->parent;
    }
    Process* child = alloc_process(reported_to);
    if (!child)
        return k_eagain;
    Thread* t = thread_alloc(parent->name);
    if (!t) {
        SpinGuard g(g_table_lock);
        free_process(child);
        return k_enomem;
    }
    {
        SpinGuard g(g_table_lock); // a kill may walk the child's threads already
        add_thread(child, t);
    }
    t->tid = child->pid;
    t->context.tls = self->context.tls;
    t->frame = arch::context_init_fork(t->context, t->kstack_top, frame);
    if (r.flags & k_clone_settls)
        if (Errno e = arch::clone_tls(t->context, r.tls); e != k_ok) {
            SpinGuard g(g_table_lock);
            free_process(child);
            return e;
        }
    child->vm = (r.flags & k_clone_vm) ? parent->vm : vm::vmspace_fork(parent->vm);
    if (!child->vm) {
        SpinGuard g(g_table_lock);
        free_process(child);
        return k_enomem;
    }
    if (r.flags & k_clone_vm)
        ++child->vm->processes;
    memcpy(child->name, parent->name, sizeof child->name);
    child->pgid = parent->pgid;
    child->sid = parent->sid;
    child->exit_signal = (r.flags & k_clone_parent)
                             ? parent->exit_signal
                             : static_cast<int>(r.flags & k_clone_signal_mask);
    // The child inherits the actions and the mask; nothing is pending for it.
    memcpy(child->signals.actions, parent->signals.actions, sizeof child->signals.actions);
    t->sig.blocked = self->sig.blocked;
    t->sig.altstack = self->sig.altstack; // fork keeps it (Linux)
    sys::fd_copy_table(child, parent);
    child->cwd = parent->cwd;
    memcpy(child->disk_cwd, parent->disk_cwd, sizeof child->disk_cwd);
    child->umask = parent->umask;
    memcpy(child->exe, parent->exe, sizeof child->exe);
    memcpy(child->cmdline, parent->cmdline, sizeof child->cmdline);
    child->cmdline_length = parent->cmdline_length;
    set_child_words(*t, r);
    int tid = t->tid;
    if (r.flags & k_clone_parent_settid)
        (void)sys::copyout(r.parent_tid, &tid, sizeof tid); // Linux ignores a bad address too
    g_forks.add();
    if (r.flags & k_clone_vfork) {
        SpinGuard g(g_table_lock);
        self->vfork_waiting = true;
        child->vfork_parent = self;
    }
    make_runnable(t);
    if (r.flags & k_clone_vfork)
        vfork_wait(self, tid);
    return tid;
}

// clone(CLONE_THREAD): a new thread of the caller's process, which shares
// everything with it but its kernel stack, registers, TLS, signal mask and
// pending signals. (Its exit signal is ignored, as on Linux.)
Result<int> clone_thread(arch::TrapFrame& frame, const CloneRequest& r)
{
    Process* p = current_process();
    Thread* self = current();
    if (r.flags & k_clone_vfork)
        return k_einval; // Toll: a thread's vfork would wait on its own process
    if (__atomic_load_n(&p->live_threads, __ATOMIC_RELAXED) >= k_max_threads)
        return k_eagain; // (checked again under the lock, below)
    Thread* t = thread_alloc(p->name);
    if (!t)
        return k_enomem;
    t->context.tls = self->context.tls;
    t->frame = arch::context_init_fork(t->context, t->kstack_top, frame);
    if (r.flags & k_clone_settls)
        if (Errno e = arch::clone_tls(t->context, r.tls); e != k_ok) {
            thread_free(t);
            return e;
        }
    t->sig.blocked = self->sig.blocked; // a new thread's altstack is none (Linux, CLONE_VM)
    set_child_words(*t, r);
    int tid = 0;
    Errno refused = k_ok;
    {
        // Checked and added under one hold of the lock: an exit_group or an
        // execve on another CPU either comes first, and the clone fails, or
        // finds the new thread on the list and kills it too.
        SpinGuard g(g_table_lock);
        if (p->group_exiting || self->must_exit || p->exec_thread)
            refused = k_erestartsys; // it exits on its way out; Linux restarts the call
        else if (p->live_threads >= k_max_threads)
            refused = k_eagain;
        else {
            t->tid = tid = g_next_pid++; // thread and process ids are numbered together (Linux)
            add_thread(p, t);
        }
    }
    if (refused != k_ok) {
        thread_free(t);
        return refused;
    }
    if (r.flags & k_clone_parent_settid)
        (void)sys::copyout(r.parent_tid, &tid, sizeof tid);
    g_threads.add();
    make_runnable(t);
    return tid;
}

} // namespace

Result<int> clone(arch::TrapFrame& frame, const CloneRequest& request)
{
    TRY(check_clone_flags(request.flags));
    if (request.flags & k_clone_thread)
        return clone_thread(frame, request);
    return clone_process(frame, request);
}

Result<int> fork(arch::TrapFrame& frame)
{
    return clone(frame, CloneRequest{});
}

void vfork_release(Process& p)
{
    SpinGuard g(g_table_lock); // the parent checks and sleeps under it (vfork_wait)
    if (Thread* waiter = p.vfork_parent) {
        p.vfork_parent = nullptr;
        waiter->vfork_waiting = false;
        wakeup(&waiter->vfork_waiting);
    }
}

} // namespace toll::proc
