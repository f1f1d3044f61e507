// The process table: a slot and a pid for each process, the look-ups by pid
// and tid, process groups and sessions. Making processes is clone.cpp's,
// ending and waiting for them exit.cpp's; exec lives in exec.cpp, signals in
// signal.cpp, futexes in futex.cpp.
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
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process_internal.h"
#include "kernel/proc/sched.h"
#include "kernel/vm/kmalloc.h"

namespace toll::proc {

Spinlock g_table_lock("proc.table");
Process* g_table[k_max_processes];
int g_next_pid = 1;

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

void thread_kick(Thread& t)
{
    // The signal is posted; now look at the thread. Paired with the fence
    // of an interruptible sleep (waitqueue.cpp): if the thread is not yet
    // seen asleep here, it sees the signal there.
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (t.state == ThreadState::sleeping && t.wait_channel)
        wakeup(t.wait_channel);
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

} // namespace toll::proc
