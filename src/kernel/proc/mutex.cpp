// Sleeping locks (mutex.h) on a wait queue whose lock guards the owner.
#include "kernel/proc/mutex.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/thread.h"

namespace toll::proc {

void Mutex::lock()
{
    uintptr_t where = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
    Cpu& cpu = this_cpu();
    if (cpu.interrupt_depth)
        panic("mutex %s taken in an interrupt handler at %p", name(),
              reinterpret_cast<void*>(where));
    if (cpu.spin_depth)
        lock_order_violation("lock order: cpu%u takes mutex %s at %p with spinlock %s held "
                             "(taken at %p)",
                             cpu.id, name(), reinterpret_cast<void*>(where),
                             cpu.held[0].lock ? cpu.held[0].lock->name() : "?",
                             reinterpret_cast<void*>(cpu.held[0].where));
    Thread* t = current();
    MutexesHeld& held = t->mutexes;
    unsigned depth = held.depth < k_max_held_mutexes ? held.depth : k_max_held_mutexes;
    lock_order_acquire_sleeping(*this, where, held.lock, held.where, depth);
    {
        SpinGuard g(m_waiters.lock());
        ++m_acquisitions;
        if (!m_owner) {
            m_owner = t;
        } else {
            // The releaser hands the mutex to the first waiter (unlock), so
            // a waiter is never overtaken by a thread that came later.
            ++m_contended;
            while (m_owner != t) {
                ++m_sleeps;
                m_waiters.sleep_locked();
            }
        }
        m_owner_where = where;
    }
    if (held.depth < k_max_held_mutexes) {
        held.lock[held.depth] = this;
        held.where[held.depth] = where;
    }
    ++held.depth;
}

void Mutex::unlock()
{
    Thread* t = current();
    if (m_owner != t)
        panic("mutex %s released by thread %d, which does not own it", name(), t ? t->id : -1);
    MutexesHeld& held = t->mutexes;
    unsigned n = held.depth < k_max_held_mutexes ? held.depth : k_max_held_mutexes;
    for (unsigned i = 0; i < n; ++i)
        if (held.lock[i] == this) {
            for (unsigned j = i; j + 1 < n; ++j) {
                held.lock[j] = held.lock[j + 1];
                held.where[j] = held.where[j + 1];
            }
            held.lock[n - 1] = nullptr;
            break;
        }
    --held.depth;
    SpinGuard g(m_waiters.lock());
    m_owner = m_waiters.first_locked(); // nullptr when nobody waits
    m_owner_where = 0;
    m_waiters.wake_one_locked();
}

bool Mutex::held_by_current() const
{
    return __atomic_load_n(&m_owner, __ATOMIC_RELAXED) == current();
}

} // namespace toll::proc
