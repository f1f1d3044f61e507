// The end of threads and processes: exit, exit_group (and the other threads'
// end that execve asks for), the clear-child-tid word, and wait. The table
// they leave is process.cpp's (process_internal.h).
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/proc/futex.h"
#include "kernel/proc/process.h"
#include "kernel/proc/process_internal.h"
#include "kernel/proc/sched.h"
#include "kernel/sys/file.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmalloc.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_exits, "proc.exits");
TOLL_COUNTER(g_thread_exits, "proc.thread_exits");

// Linux's wait options and status encoding.
constexpr int k_wnohang = 1, k_wuntraced = 2, k_wcontinued = 8;
// __WALL: every child; __WCLONE: only those whose exit signal is not SIGCHLD
// (Linux, include/uapi/linux/wait.h; eligible_child).
constexpr unsigned k_wall = 0x40000000, k_wclone = 0x80000000;
// A stopped child's status: 0x7f, the stop signal in the next byte; a
// continued one's: 0xffff (Linux, bits/waitstatus.h).
constexpr int k_status_stopped = 0x7F, k_status_continued = 0xFFFF;

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
