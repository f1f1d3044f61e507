// What process.cpp, clone.cpp and exit.cpp share: the process table, the
// pid counter and each process's list of threads, all under the table lock
// ("proc.table"). Not for the rest of the kernel, which reaches the table
// through process.h.
#pragma once
#include "kernel/kern/panic.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"

namespace toll::proc {

/// The table lock (process_table_lock() to the rest of the kernel).
extern Spinlock g_table_lock;
/// Every process that has not been freed, zombies included; lock: g_table_lock.
extern Process* g_table[k_max_processes];
/// The next pid or tid (threads and processes are numbered together, as on
/// Linux); lock: g_table_lock.
extern int g_next_pid;

/// Takes a table slot and a pid for a new process, child of @p parent
/// (nullptr: the kernel's). Reaps exited orphans first. nullptr when the
/// table is full or the Process cannot be had. Takes the table lock.
Process* alloc_process(Process* parent);

/// Frees a zombie (or a process never started) and any threads of it that
/// never ran. With the table lock held.
void free_process(Process* p);

/// Puts @p t on @p p's list of threads, with the table lock held.
inline void add_thread(Process* p, Thread* t)
{
    TOLL_ASSERT(g_table_lock.held_here());
    t->process = p;
    t->peer = p->threads;
    p->threads = t;
    ++p->live_threads;
}

/// Takes @p t off its process's list, with the table lock held.
inline void remove_thread(Process* p, Thread* t)
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

/// The channel a parent sleeps on while waiting for its children (the
/// kernel's, for @p parent nullptr).
inline const void* child_channel(Process* parent)
{
    return parent ? static_cast<const void*>(parent) : static_cast<const void*>(&g_table);
}

} // namespace toll::proc
