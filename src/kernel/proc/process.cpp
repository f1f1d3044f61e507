// The process table and the life of a process: fork, exit, wait, kill.
// exec lives in exec.cpp.
//
// The table, the pid counter and the parent links are the table lock's
// ("proc.table"); a parent waiting for a child checks for one and sleeps
// under it, and an exiting child marks itself a zombie and wakes the parent
// under it, so that the wake-up cannot fall between the two.
#include "kernel/proc/process.h"
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/spinlock.h"
#include "kernel/sys/file.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_forks, "proc.forks");
TOLL_COUNTER(g_exits, "proc.exits");

Spinlock g_table_lock("proc.table");
Process* g_table[k_max_processes];
int g_next_pid = 1;

// Linux's wait options and status encoding.
constexpr int k_wnohang = 1, k_wuntraced = 2, k_wcontinued = 8;
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
    if (p->thread)
        thread_free(p->thread);
    destroy(p);
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
    p->thread = t;
    p->vm = space;
    p->pgid = p->sid = p->pid; // the first process leads its own group and session
    t->process = p;
    return p;
}

Result<int> fork(arch::TrapFrame& frame)
{
    Process* parent = current_process();
    Process* child = alloc_process(parent);
    if (!child)
        return k_eagain;
    child->thread = thread_alloc(parent->name);
    child->vm = child->thread ? vm::vmspace_fork(parent->vm) : nullptr;
    if (!child->vm) {
        SpinGuard g(g_table_lock);
        free_process(child);
        return k_enomem;
    }
    memcpy(child->name, parent->name, sizeof child->name);
    child->pgid = parent->pgid;
    child->sid = parent->sid;
    // The child inherits the actions and the mask; nothing is pending for it.
    memcpy(child->signals.actions, parent->signals.actions, sizeof child->signals.actions);
    child->signals.blocked = parent->signals.blocked;
    child->signals.altstack = parent->signals.altstack; // fork keeps it (Linux)
    sys::fd_copy_table(child, parent);
    child->cwd = parent->cwd;
    child->umask = parent->umask;
    memcpy(child->exe, parent->exe, sizeof child->exe);
    memcpy(child->cmdline, parent->cmdline, sizeof child->cmdline);
    child->cmdline_length = parent->cmdline_length;
    child->thread->process = child;
    child->thread->context.tls = current()->context.tls;
    Thread* t = child->thread;
    t->frame = arch::context_init_fork(t->context, kstack_top(*t), frame);
    g_forks.add();
    make_runnable(child->thread);
    return child->pid;
}

void exit_current(int wait_status)
{
    Process* p = current_process();
    TOLL_ASSERT(p);
    g_exits.add();
    sys::fd_close_all(p);
    p->cwd.reset();
    arch::pmap_activate(nullptr); // leave the address space before freeing it
    vm::vmspace_destroy(p->vm);
    p->vm = nullptr;
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
    p->thread = nullptr; // the scheduler frees the thread once it is off its stack
    p->zombie = true;    // a waiting parent may free it from here on
    wakeup(child_channel(parent));
    g_table_lock.unlock();
    thread_exit();
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
