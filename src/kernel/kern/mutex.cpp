// Sleeping locks (mutex.h) on a wait queue whose lock guards the owner.
#include "kernel/kern/mutex.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/thread.h"

namespace toll {

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
    proc::Thread* t = proc::current();
    unsigned depth = t->mutex_depth < proc::k_max_held_mutexes ? t->mutex_depth
                                                               : proc::k_max_held_mutexes;
    lock_order_acquire_sleeping(*this, where, t->held_mutex, t->held_mutex_where, depth);
    {
        SpinGuard g(m_waiters.lock());
        ++m_acquisitions;
        if (m_owner) {
            ++m_contended;
            while (m_owner) {
                ++m_sleeps;
                m_waiters.sleep_locked();
            }
        }
        m_owner = t;
        m_owner_where = where;
    }
    if (t->mutex_depth < proc::k_max_held_mutexes) {
        t->held_mutex[t->mutex_depth] = this;
        t->held_mutex_where[t->mutex_depth] = where;
    }
    ++t->mutex_depth;
}

void Mutex::unlock()
{
    proc::Thread* t = proc::current();
    if (m_owner != t)
        panic("mutex %s released by thread %d, which does not own it", name(), t ? t->id : -1);
    unsigned n = t->mutex_depth < proc::k_max_held_mutexes ? t->mutex_depth
                                                           : proc::k_max_held_mutexes;
    for (unsigned i = 0; i < n; ++i)
        if (t->held_mutex[i] == this) {
            for (unsigned j = i; j + 1 < n; ++j) {
                t->held_mutex[j] = t->held_mutex[j + 1];
                t->held_mutex_where[j] = t->held_mutex_where[j + 1];
            }
            t->held_mutex[n - 1] = nullptr;
            break;
        }
    --t->mutex_depth;
    SpinGuard g(m_waiters.lock());
    m_owner = nullptr;
    m_owner_where = 0;
    m_waiters.wake_one_locked();
}

bool Mutex::held_by_current() const
{
    return __atomic_load_n(&m_owner, __ATOMIC_RELAXED) == proc::current();
}

} // namespace toll
