// Wait queues (waitqueue.h): the waiter's entry lives on its stack, the
// queue is a list of entries under the queue's spinlock, and the only way
// off the queue is a waker that holds that lock.
#include "kernel/proc/waitqueue.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/signal.h"
#include "kernel/proc/thread.h"

namespace toll::proc {

void WaitQueue::enqueue(WaitEntry& e)
{
    e.next = nullptr;
    e.queued = true;
    if (m_tail)
        m_tail->next = &e;
    else
        __atomic_store_n(&m_head, &e, __ATOMIC_RELAXED);
    m_tail = &e;
}

void WaitQueue::remove(WaitEntry& e)
{
    WaitEntry* prev = nullptr;
    for (WaitEntry* w = m_head; w; prev = w, w = w->next)
        if (w == &e) {
            if (prev)
                prev->next = e.next;
            else
                __atomic_store_n(&m_head, e.next, __ATOMIC_RELAXED);
            if (m_tail == &e)
                m_tail = prev;
            break;
        }
    e.next = nullptr;
    e.queued = false;
}

void WaitQueue::wake_entry(WaitEntry& e)
{
    // Read the thread before the entry goes: once it is off the queue and
    // runnable, the waiter may return and its stack frame be reused.
    Thread* t = e.thread;
    remove(e);
    t->wait_channel = nullptr;
    t->wake_tick = 0;
    make_runnable(t);
}

// An interruptible sleeper looks for a signal once more after it is on the
// queue and marked asleep. Its caller looked before, but a signal sent from
// another CPU between that look and the mark found the thread still running,
// so the sender's kick (thread_kick) woke nobody, and the thread would sleep
// with the signal pending, perhaps for ever. The fence here and the one in
// thread_kick make sure that one side sees the other: either the sender sees
// the thread asleep and wakes it, or the thread sees the signal here.
bool WaitQueue::signalled_before_sleep(WaitEntry& e, bool interruptible)
{
    if (!interruptible)
        return false;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!interrupted())
        return false;
    Thread* t = e.thread;
    remove(e);
    t->state = ThreadState::running;
    t->wait_channel = nullptr;
    t->wake_tick = 0;
    return true;
}

void WaitQueue::sleep_locked(const void* channel, uint64_t deadline, bool interruptible)
{
    if (!m_lock.held_here())
        panic("wait queue %s: sleep_locked without its lock", m_lock.name());
    Thread* t = current();
    WaitEntry e;
    e.thread = t;
    e.channel = channel;
    e.deadline = deadline;
    // From the release below to the switch, interrupts stay off: a wake-up
    // from an interrupt in that gap would find the thread still running.
    // The outermost lock's saved state says what to come back to.
    bool were = this_cpu().spin_interrupts_were;
    this_cpu().spin_interrupts_were = false;
    enqueue(e);
    ++m_sleeps;
    t->state = ThreadState::sleeping;
    t->wait_channel = channel;
    t->wake_tick = deadline;
    if (signalled_before_sleep(e, interruptible)) {
        this_cpu().spin_interrupts_were = were;
        return;
    }
    m_lock.unlock();
    block();
    m_lock.lock();
    this_cpu().spin_interrupts_were = were; // possibly another CPU's block now
    if (e.queued)
        remove(e);
}

void WaitQueue::wait(Spinlock& held, const void* channel, uint64_t deadline, bool interruptible)
{
    if (!held.held_here())
        panic("wait queue %s: wait without %s held", m_lock.name(), held.name());
    Thread* t = current();
    WaitEntry e;
    e.thread = t;
    e.channel = channel;
    e.deadline = deadline;
    m_lock.lock(); // held -> queue: the order every waker keeps too
    bool were = this_cpu().spin_interrupts_were;
    this_cpu().spin_interrupts_were = false;
    enqueue(e);
    ++m_sleeps;
    t->state = ThreadState::sleeping;
    t->wait_channel = channel;
    t->wake_tick = deadline;
    if (signalled_before_sleep(e, interruptible)) {
        this_cpu().spin_interrupts_were = were;
        m_lock.unlock();
        return;
    }
    held.unlock();
    m_lock.unlock();
    block();
    held.lock();
    this_cpu().spin_interrupts_were = were;
    if (__atomic_load_n(&e.queued, __ATOMIC_RELAXED)) {
        SpinGuard g(m_lock);
        if (e.queued)
            remove(e);
    }
}

bool WaitQueue::wake_one_locked()
{
    if (!m_head)
        return false;
    wake_entry(*m_head);
    return true;
}

unsigned WaitQueue::wake_locked(const void* channel)
{
    unsigned n = 0;
    WaitEntry* w = m_head;
    while (w) {
        WaitEntry* next = w->next;
        if (!channel || w->channel == channel) {
            wake_entry(*w);
            ++n;
        }
        w = next;
    }
    return n;
}

unsigned WaitQueue::wake_expired_locked(uint64_t now)
{
    unsigned n = 0;
    WaitEntry* w = m_head;
    while (w) {
        WaitEntry* next = w->next;
        if (w->deadline && w->deadline <= now) {
            wake_entry(*w);
            ++n;
        }
        w = next;
    }
    return n;
}

bool WaitQueue::wake_one()
{
    SpinGuard g(m_lock);
    return wake_one_locked();
}

unsigned WaitQueue::wake_all()
{
    SpinGuard g(m_lock);
    return wake_locked(nullptr);
}

} // namespace toll::proc
