// The process table and the life of a process and its threads: clone (fork,
// vfork, pthread_create), exit, exit_group, wait. exec lives in exec.cpp,
// signals in signal.cpp, futexes in futex.cpp.
//
// The table, the pid counter and the parent links are the table lock's
// ("proc.table"); a parent waiting for a child checks for one and sleeps
// under it, and an exiting child marks itself a zombie and wakes the parent
// under it, so that the wake-up cannot fall between the two.
//
// The same lock guards each process's list of threads (threads,
// live_threads) and its group-exit state (group_exiting, group_status,
// exec_thread), which the threads of one process change on several CPUs
// at once: a clone adds a thread under it, so an exit_group that kills the
// others under it either sees the new thread or is seen by the clone; an
// exiting thread leaves the list under it, so exactly one, the last, ends
// the process. (Linux keeps the list under tasklist_lock and the group
// state under sighand->siglock; one lock here, the critical sections being
// a few stores.) The signals sent to threads are under it too (signal.cpp).
#include "kernel/proc/process.h"
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/futex.h"
#include "kernel/proc/sched.h"
#include "kernel/sys/file.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_forks, "proc.forks");
TOLL_COUNTER(g_exits, "proc.exits");
TOLL_COUNTER(g_threads, "proc.threads_created");
TOLL_COUNTER(g_thread_exits, "proc.thread_exits");

Spinlock g_table_lock("proc.table");
Process* g_table[k_max_processes];
int g_next_pid = 1;

// Linux's wait options and status encoding.
constexpr int k_wnohang = 1, k_wuntraced = 2, k_wcontinued = 8;
// __WALL: every child; __WCLONE: only those whose exit signal is not SIGCHLD
// (Linux, include/uapi/linux/wait.h; eligible_child).
constexpr unsigned k_wall = 0x40000000, k_wclone = 0x80000000;
// A stopped child's status: 0x7f, the stop signal in the next byte; a
// continued one's: 0xffff (Linux, bits/waitstatus.h).
constexpr int k_status_stopped = 0x7F, k_status_continued = 0xFFFF;

void free_process(Process* p);

// Takes a table slot and a pid for a new process; nullptr when either is short.
Process* alloc_process(Process* parent)
{
    SpinGuard g(g_table_lock);
    for (Process* z : g_table) // reap orphans that have exited
        if (z && z->orphan && z->zombie)
            free_process(z);
    int slot = -1;
    for (int i = 0; i < k_max_processes; ++i)
        if (!g_table[i]) {
            slot = i;
            break;
        }
    if (slot < 0)
        return nullptr;
    Process* p = make<Process>();
    if (!p)
        return nullptr;
    p->pid = g_next_pid++;
    p->parent = parent;
    g_table[slot] = p;
    return p;
}

// Frees a zombie (or a process never started), with the table lock held.
void free_process(Process* p)
{
    for (auto& slot : g_table)
        if (slot == p)
            slot = nullptr;
    while (Thread* t = p->threads) { // threads that never ran (a clone that failed)
        p->threads = t->peer;
        thread_free(t);
    }
    destroy(p);
}

// Puts @p t on @p p's list of threads, with the table lock held.
void add_thread(Process* p, Thread* t)
{
    TOLL_ASSERT(g_table_lock.held_here());
    t->process = p;
    t->peer = p->threads;
    p->threads = t;
    ++p->live_threads;
}

// Takes @p t off its process's list, with the table lock held.
void remove_thread(Process* p, Thread* t)
{
    TOLL_ASSERT(g_table_lock.held_here());
    for (Thread** link = &p->threads; *link; link = &(*link)->peer)
        if (*link == t) {
            *link = t->peer;
            --p->live_threads;
            return;
        }
    panic("a thread missing from its process");
}

// The channel a parent sleeps on while waiting for its children.
const void* child_channel(Process* parent)
{
    return parent ? static_cast<const void*>(parent) : static_cast<const void*>(&g_table);
}

} // namespace

Process* current_process()
{
    return current()->process;
}

vm::VmSpace* current_vm()
{
    Process* p = current_process();
    return p ? p->vm : nullptr;
}

Spinlock& process_table_lock()
{
    return g_table_lock;
}

void for_each_process(void (*visit)(Process& process, void* context), void* context)
{
    SpinGuard g(g_table_lock);
    for (Process* p : g_table)
        if (p)
            visit(*p, context);
}

int process_count()
{
    int n = 0;
    SpinGuard g(g_table_lock);
    for (Process* p : g_table)
        n += p != nullptr;
    return n;
}

Result<Process*> make_process_for_spawn(Thread* t, vm::VmSpace* space)
{
    Process* p = alloc_process(nullptr);
    if (!p)
        return k_eagain; // as fork: the table is full, or its entry cannot be had
    SpinGuard g(g_table_lock);
    add_thread(p, t);
    p->vm = space;
    p->pgid = p->sid = p->pid; // the first process leads its own group and session
    t->tid = p->pid;
    return p;
}

namespace {

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
    if (r.stack)
        arch::frame_set_user_sp(*t->frame, r.stack);
    if (r.flags & k_clone_child_settid) {
        t->set_child_tid = r.child_tid;
        exit_work_set(*t, k_exit_child_settid);
    }
    if (r.flags & k_clone_child_cleartid)
        t->clear_child_tid = r.child_tid;
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
    if (r.stack)
        arch::frame_set_user_sp(*t->frame, r.stack);
    if (r.flags & k_clone_child_settid) {
        t->set_child_tid = r.child_tid;
        exit_work_set(*t, k_exit_child_settid);
    }
    if (r.flags & k_clone_child_cleartid)
        t->clear_child_tid = r.child_tid;
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

// Tells every thread of @p p but @p keep to exit, and wakes those asleep;
// each goes on its way back to user mode (a thread running in user mode
// meets that way at its next trap, the clock's at the latest). With the
// table lock held.
void kill_other_threads(Process* p, Thread* keep)
{
    TOLL_ASSERT(g_table_lock.held_here());
    for (Thread* t = p->threads; t; t = t->peer)
        if (t != keep) {
            // As Linux's zap_other_threads: a SIGKILL of its own, which
            // no mask holds back, ends its blocking calls (interrupted).
            t->must_exit = true;
            t->sig.pending |= sig_bit(TOLL_SIGKILL);
            exit_work_set(*t, k_exit_signal);
            thread_kick(*t);
        }
}

// The end of a process, when its last thread exits: the files close, the
// address space goes, the children are orphaned, and the parent hears.
[[noreturn]] void end_process(Process* p, int wait_status)
{
    g_exits.add();
    sys::fd_close_all(p);
    p->cwd.reset();
    arch::pmap_activate(nullptr); // leave the address space before freeing it
    vm::VmSpace* space = p->vm;
    {
        // Under the table's lock: /proc reads another process's space under it.
        SpinGuard g(g_table_lock);
        p->vm = nullptr;
    }
    vm_drop(space);
    vfork_release(*p);
    // Orphans go to the kernel (parent nullptr): their zombies are reaped
    // when they exit, since nobody will wait for them.
    g_table_lock.lock();
    for (Process* c : g_table)
        if (c && c->parent == p) {
            c->parent = nullptr;
            c->orphan = true;
            if (c->zombie)
                free_process(c);
        }
    p->wait_status = wait_status;
    // The parent hears of it (SIGCHLD); one that ignores SIGCHLD explicitly
    // keeps no zombie children (Linux, as POSIX allows).
    Process* parent = p->parent;
    if (notify_parent_of_exit(*p, wait_status)) {
        p->parent = nullptr;
        p->orphan = true;
    }
    p->zombie = true; // a waiting parent may free it from here on
    wakeup(child_channel(parent));
    g_table_lock.unlock();
    thread_exit(); // the scheduler frees the thread once it is off its stack
}

} // namespace

Result<int> clone(arch::TrapFrame& frame, const CloneRequest& request)
{
    TRY(check_clone_flags(request.flags));
    if (request.flags & k_clone_thread)
        return clone_thread(frame, request);
    return clone_process(frame, request);
}

void thread_kick(Thread& t)
{
    // The signal is posted; now look at the thread. Paired with the fence
    // of an interruptible sleep (waitqueue.cpp): if the thread is not yet
    // seen asleep here, it sees the signal there.
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (t.state == ThreadState::sleeping && t.wait_channel)
        wakeup(t.wait_channel);
}

Errno exec_kill_other_threads()
{
    Process* p = current_process();
    Thread* self = current();
    SpinGuard g(g_table_lock);
    if (p->exec_thread || p->group_exiting || self->must_exit)
        return k_eagain;
    if (p->live_threads > 1) {
        p->exec_thread = self;
        kill_other_threads(p, self);
        // Not a killable wait: each of the others exits within a clock tick,
        // and a kill of the process tells this thread too (must_exit). Each
        // leaves the list and wakes us under the lock.
        while (p->live_threads > 1 && !self->must_exit)
            sleep_on(&p->threads, g_table_lock);
        p->exec_thread = nullptr;
        if (self->must_exit)
            return k_eagain;
    }
    self->tid = p->pid; // Linux: the thread that execs becomes the leader
    return k_ok;
}

Thread* find_thread(int tid)
{
    TOLL_ASSERT(g_table_lock.held_here());
    for (Process* p : g_table)
        if (p && !p->zombie)
            for (Thread* t = p->threads; t; t = t->peer)
                if (t->tid == tid)
                    return t;
    return nullptr;
}

void clear_child_tid(Thread& t, vm::VmSpace* space)
{
    uintptr_t word = t.clear_child_tid;
    t.clear_child_tid = 0;
    if (!word || !space)
        return;
    // Linux's mm_release: zero the word and wake one waiter (pthread_join's),
    // a bad address being no error.
    int zero = 0;
    if (sys::copyout(word, &zero, sizeof zero) == k_ok)
        futex_wake(space, word, 1, k_futex_match_any);
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

void vm_drop(vm::VmSpace* space)
{
    if (--space->processes == 0)
        vm::vmspace_destroy(space);
}

void exit_current(int wait_status)
{
    Process* p = current_process();
    TOLL_ASSERT(p);
    {
        SpinGuard g(g_table_lock);
        if (!p->group_exiting) { // the first group exit's status is the process's
            p->group_exiting = true;
            p->group_status = wait_status;
        }
        kill_other_threads(p, current());
    }
    exit_thread(wait_status);
}

void exit_thread(int wait_status)
{
    Thread* t = current();
    Process* p = t->process;
    TOLL_ASSERT(p);
    // The word is cleared only for someone else to see: not when the
    // address space goes with this thread (Linux checks mm_users too).
    // (The count is read without the lock: another thread exiting at once
    // may make this a wake nobody hears. The address space stays while this
    // thread is on the list, since only the last thread ends the process.)
    if (__atomic_load_n(&p->live_threads, __ATOMIC_RELAXED) > 1 || p->vm->processes > 1)
        clear_child_tid(*t, p->vm);
    bool last;
    {
        SpinGuard g(g_table_lock);
        if (p->group_exiting)
            wait_status = p->group_status;
        remove_thread(p, t);
        wakeup(&p->threads); // an execve waiting for the others to go
        last = !p->threads;
    }
    if (last)
        end_process(p, wait_status);
    g_thread_exits.add();
    thread_exit(); // the scheduler frees the thread once it is off its stack
}

Result<int> wait_child(int pid, int* status, int options)
{
    Process* self = current_process();
    SpinGuard g(g_table_lock);
    for (;;) {
        bool have_child = false;
        // pid > 0: that child; -1: any; 0: any in the caller's group (as it
        // is now); < -1: any in group -pid.
        bool by_group = pid == 0 || pid < -1;
        int group = pid == 0 ? self->pgid : -pid;
        for (Process* c : g_table) {
            if (!c || c->parent != self || (pid > 0 && c->pid != pid) ||
                (by_group && c->pgid != group))
                continue;
            bool clone_child = c->exit_signal != TOLL_SIGCHLD;
            bool wclone = static_cast<unsigned>(options) & k_wclone;
            if (clone_child != wclone && !(static_cast<unsigned>(options) & k_wall))
                continue;
            have_child = true;
            if (!c->zombie) {
                Signals& cs = c->signals;
                int report = 0;
                if ((options & k_wuntraced) && cs.stop_report) {
                    report = k_status_stopped | cs.stop_report << 8;
                    cs.stop_report = 0;
                } else if ((options & k_wcontinued) && cs.continue_report) {
                    report = k_status_continued;
                    cs.continue_report = false;
                }
                if (!report)
                    continue;
                if (status)
                    *status = report;
                return c->pid;
            }
            int child_pid = c->pid;
            if (status)
                *status = c->wait_status;
            free_process(c);
            return child_pid;
        }
        if (!have_child)
            return k_echild;
        if (options & k_wnohang)
            return 0;
        if (interrupted())
            return k_erestartsys;
        sleep_on(child_channel(self), g_table_lock);
    }
}

Process* find_process(int pid)
{
    TOLL_ASSERT(g_table_lock.held_here());
    // An orphan's zombie has no one left to reap it: it is gone already, as
    // init would have reaped it on Linux.
    for (Process* p : g_table)
        if (p && p->pid == pid && !(p->zombie && p->orphan))
            return p;
    return nullptr;
}

Errno set_process_group(int pid, int pgid)
{
    Process* self = current_process();
    if (pid == 0)
        pid = self->pid;
    if (pgid == 0)
        pgid = pid;
    if (pgid < 0)
        return k_einval;
    SpinGuard g(g_table_lock);
    Process* p = find_process(pid);
    if (!p)
        return k_esrch;
    if (p->parent == self) {
        if (p->sid != self->sid)
            return k_eperm;
        if (p->execed)
            return k_eacces;
    } else if (p != self) {
        return k_esrch;
    }
    if (p->sid == p->pid) // a session leader stays in its group
        return k_eperm;
    if (pgid != pid) {
        bool exists = false;
        for (Process* g : g_table)
            exists = exists ||
                     (g && !(g->zombie && g->orphan) && g->pgid == pgid && g->sid == self->sid);
        if (!exists)
            return k_eperm;
    }
    p->pgid = pgid;
    return k_ok;
}

Result<int> group_of(int pid, bool session)
{
    SpinGuard g(g_table_lock);
    Process* p = pid == 0 ? current_process() : find_process(pid);
    if (!p)
        return k_esrch;
    return session ? p->sid : p->pgid;
}

Result<int> new_session()
{
    Process* self = current_process();
    SpinGuard guard(g_table_lock);
    for (Process* g : g_table)
        if (g && !(g->zombie && g->orphan) && g->pgid == self->pid)
            return k_eperm; // it leads a group, or a group still bears its number
    self->sid = self->pgid = self->pid;
    return self->pid;
}

int wait_for(int pid)
{
    SpinGuard g(g_table_lock);
    for (;;) {
        for (Process* c : g_table)
            if (c && c->pid == pid && c->zombie) {
                int status = c->wait_status;
                free_process(c);
                return status;
            }
        sleep_on(child_channel(nullptr), g_table_lock);
    }
}

} // namespace toll::proc
