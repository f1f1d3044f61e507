// The locks lab (labs/lab-locks): the ticket lock and the per-CPU counter
// of kernel/kern/lab_locks.h.
#include "kernel/kern/lab_locks.h"
#include "kernel/arch/cpu.h"

namespace toll {

uint64_t TicketLock::acquire()
{
    uint64_t spins = 0;
    // LAB locks BEGIN: take a ticket atomically, then spin (cpu_relax) until serving_ is it; count the turns; acquire ordering
    unsigned ticket = __atomic_fetch_add(&next_, 1u, __ATOMIC_RELAXED);
    while (__atomic_load_n(&serving_, __ATOMIC_ACQUIRE) != ticket) {
        arch::cpu_relax();
        ++spins;
    }
    // LAB locks STUB
    // (void)next_;
    // LAB locks END
    return spins;
}

void TicketLock::release()
{
    // LAB locks BEGIN: serve the next ticket, with release ordering (only the holder writes serving_)
    __atomic_store_n(&serving_, serving_ + 1, __ATOMIC_RELEASE);
    // LAB locks STUB
    // (void)serving_;
    // LAB locks END
}

void PerCpuCounter::add(unsigned long n)
{
    // LAB locks BEGIN: add to this CPU's own slot (this_cpu().id), which no other CPU writes
    unsigned long& v = slots_[this_cpu().id].value;
    __atomic_store_n(&v, v + n, __ATOMIC_RELAXED); // a whole word: read can race it safely
    // LAB locks STUB
    // // One word for every CPU: read, add, write back.
    // unsigned long v = __atomic_load_n(&shared_, __ATOMIC_RELAXED);
    // for (int i = 0; i < 8; ++i)
    //     arch::cpu_relax(); // the window between the read and the write
    // __atomic_store_n(&shared_, v + n, __ATOMIC_RELAXED);
    // LAB locks END
}

unsigned long PerCpuCounter::read() const
{
    unsigned long sum = __atomic_load_n(&shared_, __ATOMIC_RELAXED);
    // LAB locks BEGIN: add up every CPU's slot
    for (const Slot& s : slots_)
        sum += __atomic_load_n(&s.value, __ATOMIC_RELAXED);
    // LAB locks STUB
    // LAB locks END
    return sum;
}

} // namespace toll
