// The scheduler: one run queue per CPU, each under its own spinlock, served
// by one of two policies chosen at boot (sched=rr or sched=mlfq); sleep and
// wakeup are the wait queues' (proc/waitqueue.h, proc/sleep.cpp), which
// block the current thread and make it runnable through here; an idle
// thread per CPU that steals work from the busiest queue; a periodic
// balance on the boot CPU's clock; and CPU affinity.
//
// The rules that keep a thread on one CPU at a time:
//  - A thread's queue membership, its on_cpu flag and its cpu field are
//    changed under the run-queue lock of the CPU named by its cpu field.
//  - A CPU that switches holds its own queue's lock from the moment it
//    decides until it runs on the next thread's stack (switch_tail), and
//    clears the previous thread's on_cpu there, before releasing the lock.
//    So a thread on a queue whose lock is free is never still on some
//    CPU's stack, and a waker that finds on_cpu set (the thread is going to
//    sleep on its CPU right now) queues it on that CPU (Linux and FreeBSD
//    keep the same "on CPU" fact, p->on_cpu and td_lock's blocked_lock).
//  - No code holds two run-queue locks at once: a migration takes the
//    thread off one queue, drops that lock, then takes the other.
#include "kernel/proc/sched.h"
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/vm/kmalloc.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

TOLL_CPU_COUNTER(g_context_switches, "sched.context_switches", CpuEvent::context_switches);
TOLL_CPU_COUNTER(g_preemptions, "sched.preemptions", CpuEvent::preemptions);
TOLL_CPU_COUNTER(g_clock_ticks, "sched.clock_ticks", CpuEvent::clock_ticks);
TOLL_CPU_COUNTER(g_migrations, "sched.migrations", CpuEvent::sched_migrations);
TOLL_CPU_COUNTER(g_steals, "sched.steals", CpuEvent::sched_steals);
TOLL_CPU_COUNTER(g_balance_moves, "sched.balance_moves", CpuEvent::sched_balance_moves);
TOLL_CPU_COUNTER(g_wakeups_local, "sched.wakeups.local", CpuEvent::sched_wakeups_local);
TOLL_CPU_COUNTER(g_wakeups_remote, "sched.wakeups.remote", CpuEvent::sched_wakeups_remote);
TOLL_CPU_COUNTER(g_kicks, "sched.ipis", CpuEvent::sched_ipis);

TOLL_PARAM(g_param_sched, "sched", "the scheduling policy: rr (the default) or mlfq");
TOLL_PARAM(g_param_smp_user, "smp.user",
           "1 (the default): run user processes on every CPU; 0: on the boot CPU only");

// The MLFQ's shape: three levels, the quantum doubling at each (1, 2, 4
// ticks); a thread that uses its level's whole allotment drops one level,
// and every k_boost_ticks every thread goes back to the top (OSTEP's rules
// 4 and 5), so a CPU-bound thread cannot starve and a thread that turns
// interactive gets its priority back.
constexpr unsigned k_mlfq_levels = 3;
constexpr uint64_t k_boost_ticks = 50;
// The boot CPU evens out the queues every k_balance_ticks.
constexpr uint64_t k_balance_ticks = 4;

const char* const k_policy_names[] = {"rr", "mlfq"};

Policy g_policy = Policy::rr;
bool g_user_smp;

// One CPU's queue: a FIFO per level (round robin uses level 0 only).
struct RunQueue {
    Spinlock lock;
    Thread* head[k_mlfq_levels] = {};
    Thread* tail[k_mlfq_levels] = {};
    unsigned queued = 0;    // threads on the queue (the running one is not)
    Thread* prev = nullptr; // the thread this CPU is switching away from
    explicit RunQueue(const char* name) : lock(name) {}
};

RunQueue g_rq[k_max_cpus] = {
    RunQueue("sched.rq0"), RunQueue("sched.rq1"), RunQueue("sched.rq2"), RunQueue("sched.rq3"),
    RunQueue("sched.rq4"), RunQueue("sched.rq5"), RunQueue("sched.rq6"), RunQueue("sched.rq7"),
};
static_assert(k_max_cpus == 8, "one run queue per CPU, each with its lock's name");

// Dead threads a CPU other than the boot CPU did not free: with smp.user=0
// the heap is used from the boot CPU alone, so the boot CPU frees them.
Spinlock g_orphan_lock("sched.orphans");
Thread* g_orphans;

Thread g_boot_thread;
int g_next_id = 1;
uint64_t g_ticks;

unsigned levels()
{
    return g_policy == Policy::mlfq ? k_mlfq_levels : 1;
}

uint32_t quantum(unsigned level)
{
    return g_policy == Policy::mlfq ? 1u << level : 1;
}

void copy_name(Thread* t, const char* name)
{
    size_t n = strnlen(name, sizeof t->name - 1);
    memcpy(t->name, name, n);
    t->name[n] = '\0';
}

// The online CPUs, recomputed only when their number changes (CPUs come
// online at boot and never leave): the placement asks on every wakeup.
uint32_t g_online_mask;
unsigned g_online_seen;

uint32_t online_mask()
{
    unsigned n = cpus_online();
    if (n == __atomic_load_n(&g_online_seen, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&g_online_mask, __ATOMIC_RELAXED);
    uint32_t mask = 0;
    for (unsigned i = 0; i < k_max_cpus; ++i)
        if (__atomic_load_n(&cpu_by_id(i).online, __ATOMIC_ACQUIRE))
            mask |= 1u << i;
    if (static_cast<unsigned>(__builtin_popcount(mask)) == n) {
        __atomic_store_n(&g_online_mask, mask, __ATOMIC_RELAXED);
        __atomic_store_n(&g_online_seen, n, __ATOMIC_RELEASE);
    }
    return mask;
}

// The CPUs @p t may run on now: its affinity, the online CPUs, and for a
// user thread the boot CPU alone with smp.user=0.
uint32_t allowed(const Thread* t)
{
    uint32_t mask = t->affinity & online_mask();
    if (t->process && !g_user_smp)
        mask &= 1u;
    return mask ? mask : 1u; // never nowhere: the boot CPU is always online
}

bool allowed_on(const Thread* t, unsigned cpu)
{
    return allowed(t) & (1u << cpu);
}

void enqueue(RunQueue& rq, Thread* t)
{
    unsigned level = t->level < levels() ? t->level : levels() - 1;
    t->next = nullptr;
    if (rq.tail[level])
        rq.tail[level]->next = t;
    else
        rq.head[level] = t;
    rq.tail[level] = t;
    t->queued = true;
    ++rq.queued;
}

void unlink(RunQueue& rq, unsigned level, Thread* t, Thread* before)
{
    if (before)
        before->next = t->next;
    else
        rq.head[level] = t->next;
    if (rq.tail[level] == t)
        rq.tail[level] = before;
    t->next = nullptr;
    t->queued = false;
    --rq.queued;
}

// The first thread of the highest non-empty level.
Thread* dequeue(RunQueue& rq)
{
    for (unsigned level = 0; level < k_mlfq_levels; ++level)
        if (Thread* t = rq.head[level]) {
            unlink(rq, level, t, nullptr);
            return t;
        }
    return nullptr;
}

// Takes off @p rq the last queued thread (the one that would wait longest)
// that may run on @p cpu; nullptr if none. A queued thread may still be on
// its CPU: woken between queueing itself on a wait queue and its switch
// away (block), it was queued on the CPU it runs on, which has not switched
// yet; that CPU picks it up, or clears its on_cpu once it is off it. Taken
// to another CPU now, it would run on two CPUs at once, on one stack.
Thread* take_for(RunQueue& rq, unsigned cpu)
{
    for (unsigned level = k_mlfq_levels; level-- > 0;) {
        Thread* found = nullptr;
        Thread* found_before = nullptr;
        Thread* before = nullptr;
        for (Thread* t = rq.head[level]; t; before = t, t = t->next)
            if (allowed_on(t, cpu) && !__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE)) {
                found = t;
                found_before = before;
            }
        if (found) {
            unlink(rq, level, found, found_before);
            return found;
        }
    }
    return nullptr;
}

// The level of what @p cpu runs: k_mlfq_levels for its idle thread.
unsigned running_level(const Cpu& cpu)
{
    return cpu.current == cpu.idle ? k_mlfq_levels : cpu.current->level;
}

unsigned load(unsigned id)
{
    const Cpu& cpu = cpu_by_id(id);
    return __atomic_load_n(&g_rq[id].queued, __ATOMIC_RELAXED) +
           (__atomic_load_n(&cpu.current, __ATOMIC_RELAXED) != cpu.idle ? 1 : 0);
}

// Tells CPU @p id to look at its queue: a reschedule IPI.
void kick(unsigned id)
{
    cpu_count(CpuEvent::sched_ipis);
    ipi_send(id, IpiReason::reschedule);
}

// The CPU to queue @p t on: where it ran last if it may run there and that
// CPU is idle (its cache is warm) or no allowed CPU is idle, else an idle
// allowed CPU, else the least loaded allowed CPU.
unsigned choose_cpu(const Thread* t)
{
    uint32_t ok = allowed(t);
    unsigned last = t->cpu;
    if ((ok & (1u << last)) && load(last) == 0)
        return last;
    unsigned best = k_max_cpus;
    unsigned best_load = ~0u;
    for (uint32_t left = ok; left; left &= left - 1) {
        auto i = static_cast<unsigned>(__builtin_ctz(left));
        unsigned l = load(i);
        if (i == last && l > 0)
            --l; // the warm cache breaks ties
        if (l < best_load) {
            best = i;
            best_load = l;
        }
    }
    return best < k_max_cpus ? best : 0;
}

// Queues @p t on CPU @p id (its lock held) and decides whether that CPU
// should look at its queue now. Returns true if another CPU needs an IPI.
bool place_locked(unsigned id, Thread* t)
{
    Cpu& cpu = cpu_by_id(id);
    t->cpu = id;
    enqueue(g_rq[id], t);
    bool preempt =
        cpu.current == cpu.idle || (g_policy == Policy::mlfq && t->level < running_level(cpu));
    if (!preempt)
        return false;
    cpu.current->need_resched = true;
    return id != this_cpu().id;
}

// Moves @p t (off every queue and off every CPU) to the queue of a CPU it
// may run on.
void place(Thread* t)
{
    unsigned id = choose_cpu(t);
    bool ipi;
    {
        SpinGuard g(g_rq[id].lock);
        ipi = place_locked(id, t);
    }
    if (ipi)
        kick(id);
}

void free_thread_now(Thread* t)
{
    vm::free_pages(reinterpret_cast<void*>(kstack_base(*t)), k_kstack_order);
    destroy(t);
}

// Frees a dead thread's stack: here, or on the boot CPU while the heap is
// the boot CPU's alone.
void dispose(Thread* t)
{
    if (this_cpu().id == 0 || g_user_smp) {
        free_thread_now(t);
        return;
    }
    SpinGuard g(g_orphan_lock);
    t->next = g_orphans;
    g_orphans = t;
}

void free_orphans()
{
    if (this_cpu().id != 0 || !__atomic_load_n(&g_orphans, __ATOMIC_RELAXED))
        return;
    Thread* list;
    {
        SpinGuard g(g_orphan_lock);
        list = g_orphans;
        g_orphans = nullptr;
    }
    while (Thread* t = list) {
        list = t->next;
        free_thread_now(t);
    }
}

} // namespace

// Runs on the next thread's stack right after every switch, and first of
// all in a new thread (the ports' thread-start code calls it): the previous
// thread is off this CPU now. Clears its on_cpu and releases the queue lock
// the switch held; then finishes what the previous thread could not do on
// its own stack: move to a CPU it may run on, or be freed.
extern "C" void sched_switch_tail()
{
    Cpu& cpu = this_cpu();
    RunQueue& rq = g_rq[cpu.id];
    if (!rq.lock.held_here())
        return; // a switch the scheduler did not make (a ktest's own): nothing to finish
    Thread* prev = rq.prev;
    rq.prev = nullptr;
    bool dead = false, move = false;
    if (prev) {
        dead = prev->state == ThreadState::dead;
        move = prev->state == ThreadState::runnable && !prev->queued && prev != cpu.idle;
        __atomic_store_n(&prev->on_cpu, false, __ATOMIC_RELEASE);
    }
    rq.lock.unlock();
    if (move)
        place(prev);
    if (dead)
        dispose(prev);
    free_orphans();
}

namespace {

// Picks the next thread for this CPU and switches to it. Called with the
// CPU's queue lock held and interrupts off, the current thread already
// where it belongs (queued, asleep, dead, or runnable and to be moved by the
// tail); returns (on this thread, perhaps much later and elsewhere) with
// the lock released.
void switch_locked(Cpu& cpu, RunQueue& rq)
{
    Thread* prev = cpu.current;
    Thread* next = dequeue(rq);
    if (!next)
        next = cpu.idle;
    if (next == prev) {
        if (prev != cpu.idle)
            prev->state = ThreadState::running;
        rq.lock.unlock();
        return;
    }
    if (next != cpu.idle) {
        next->state = ThreadState::running;
        if (g_policy == Policy::rr)
            next->slice_used = 0;
        if (next->last_ran != cpu.id) {
            cpu_count(CpuEvent::sched_migrations);
            next->last_ran = cpu.id;
        }
    }
    next->on_cpu = true;
    next->need_resched = false;
    ++next->switches_in;
    cpu_count(CpuEvent::context_switches);
    rq.prev = prev;
    __atomic_store_n(&cpu.current, next, __ATOMIC_RELAXED);
    cpu.mutexes = &next->mutexes; // the spinlocks' order check reads them
    // A user thread runs in its own address space; a kernel thread runs in
    // whichever is loaded (the kernel part is the same in all of them).
    if (next->process && next->process->vm)
        arch::pmap_activate(next->process->vm->pmap);
    arch::context_switch(prev->context, next->context);
    // Back on prev's stack, perhaps on another CPU.
    sched_switch_tail();
}

// The current thread gives up its CPU but stays runnable: back on this
// CPU's queue, or (when its affinity no longer allows this CPU) moved by the
// switch tail once it is off this CPU.
void requeue_current_and_switch()
{
    Cpu& cpu = this_cpu();
    RunQueue& rq = g_rq[cpu.id];
    rq.lock.lock();
    Thread* t = cpu.current;
    if (t != cpu.idle) {
        t->state = ThreadState::runnable;
        if (allowed_on(t, cpu.id))
            enqueue(rq, t);
    }
    switch_locked(cpu, rq);
}

// An idle CPU takes a thread from the busiest queue that has one it may
// run. Returns true if it queued one on its own queue.
bool steal(Cpu& cpu)
{
    unsigned busiest = k_max_cpus, most = 0;
    for (unsigned i = 0; i < k_max_cpus; ++i) {
        unsigned q = __atomic_load_n(&g_rq[i].queued, __ATOMIC_RELAXED);
        if (i != cpu.id && q > most) {
            busiest = i;
            most = q;
        }
    }
    if (busiest == k_max_cpus)
        return false;
    Thread* t;
    {
        SpinGuard g(g_rq[busiest].lock);
        t = take_for(g_rq[busiest], cpu.id);
    }
    if (!t)
        return false;
    cpu_count(CpuEvent::sched_steals);
    SpinGuard g(g_rq[cpu.id].lock);
    t->cpu = cpu.id;
    enqueue(g_rq[cpu.id], t);
    return true;
}

void idle_loop(void*)
{
    for (;;) {
        arch::interrupts_disable();
        Cpu& cpu = this_cpu();
        if (__atomic_load_n(&g_rq[cpu.id].queued, __ATOMIC_RELAXED) || steal(cpu)) {
            g_rq[cpu.id].lock.lock();
            switch_locked(cpu, g_rq[cpu.id]);
            continue;
        }
        free_orphans();
        // Interrupts are enabled only while halted: a wakeup from an
        // interrupt handler, or another CPU's reschedule IPI, ends the halt.
        arch::wait_for_interrupt();
    }
}

// Every CPU's queue back to the top level (MLFQ's priority boost).
void boost_all()
{
    for (unsigned id = 0; id < k_max_cpus; ++id) {
        Cpu& cpu = cpu_by_id(id);
        if (!cpu.online)
            continue;
        SpinGuard g(g_rq[id].lock);
        RunQueue& rq = g_rq[id];
        for (unsigned level = 1; level < k_mlfq_levels; ++level)
            while (Thread* t = rq.head[level]) {
                unlink(rq, level, t, nullptr);
                t->level = 0;
                t->slice_used = 0;
                enqueue(rq, t);
            }
        if (cpu.current != cpu.idle) {
            cpu.current->level = 0;
            cpu.current->slice_used = 0;
        }
    }
}

// Moves one queued thread from the busiest CPU to the least loaded one when
// their loads differ by two or more.
void balance()
{
    unsigned busiest = 0, idlest = 0, most = 0, least = ~0u;
    uint32_t online = online_mask();
    for (unsigned i = 0; i < k_max_cpus; ++i) {
        if (!(online & (1u << i)))
            continue;
        unsigned l = load(i);
        if (l > most && g_rq[i].queued) {
            most = l;
            busiest = i;
        }
        if (l < least) {
            least = l;
            idlest = i;
        }
    }
    if (most < least + 2 || busiest == idlest)
        return;
    Thread* t;
    {
        SpinGuard g(g_rq[busiest].lock);
        t = take_for(g_rq[busiest], idlest);
    }
    if (!t)
        return;
    cpu_count(CpuEvent::sched_balance_moves);
    bool ipi;
    {
        SpinGuard g(g_rq[idlest].lock);
        ipi = place_locked(idlest, t);
    }
    if (ipi)
        kick(idlest);
}

} // namespace

uint64_t ticks()
{
    return __atomic_load_n(&g_ticks, __ATOMIC_RELAXED);
}

Policy sched_policy()
{
    return g_policy;
}

const char* sched_policy_name()
{
    return k_policy_names[static_cast<unsigned>(g_policy)];
}

bool sched_user_smp()
{
    return g_user_smp;
}

uint32_t sched_online_mask()
{
    return online_mask();
}

uint32_t sched_allowed_cpus(const Thread* t)
{
    uint32_t mask = online_mask();
    if (t->process && !g_user_smp)
        mask &= 1u;
    return mask;
}

uint32_t sched_get_affinity(const Thread* t)
{
    return t->affinity & sched_allowed_cpus(t);
}

Errno sched_set_affinity(Thread* t, uint32_t mask)
{
    if (!(mask & sched_allowed_cpus(t)))
        return k_einval;
    bool resched = false;
    unsigned where;
    {
        arch::InterruptsOff off;
        Thread* moved = nullptr;
        for (;;) {
            where = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
            SpinGuard g(g_rq[where].lock);
            if (t->cpu != where)
                continue; // it moved before the lock was ours
            t->affinity = mask;
            if (!allowed_on(t, where)) {
                if (t->queued && !t->on_cpu) {
                    // Queued where it may no longer run: take it off, place it below.
                    // (Queued and still on its CPU, it is going to sleep and was
                    // woken first: it stays, as take_for says, and moves below.)
                    RunQueue& rq = g_rq[where];
                    for (unsigned level = 0; level < k_mlfq_levels && !moved; ++level) {
                        Thread* before = nullptr;
                        for (Thread* q = rq.head[level]; q; before = q, q = q->next)
                            if (q == t) {
                                unlink(rq, level, t, before);
                                moved = t;
                                break;
                            }
                    }
                } else if (t->on_cpu) {
                    // Running there: it moves at its next switch (the tail
                    // finds it runnable and on no queue).
                    t->need_resched = true;
                    resched = true;
                }
            }
            break;
        }
        if (moved)
            place(moved);
    }
    if (t == current() && resched)
        yield();
    else if (resched && where != this_cpu().id)
        kick(where);
    return k_ok;
}

unsigned sched_cpu_of(const Thread* t)
{
    return __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
}

unsigned sched_this_cpu()
{
    arch::InterruptsOff off;
    return this_cpu().id;
}

void sched_init()
{
    g_policy = static_cast<Policy>(param_get_choice("sched", k_policy_names, 0));
    g_user_smp = param_get_ulong("smp.user", 1) != 0;
    if (g_user_smp && !arch::user_threads_on_every_cpu()) {
        if (param_present("smp.user"))
            kprintf(
                "sched: smp.user=1 ignored: this port runs user threads on the boot CPU only\n");
        g_user_smp = false;
    }
    kprintf("sched: policy %s, %s\n", sched_policy_name(),
            g_user_smp ? "user processes on every CPU (smp.user=1)"
                       : "user processes on the boot CPU (smp.user=0)");
    Cpu& cpu = this_cpu();
    copy_name(&g_boot_thread, "boot");
    g_boot_thread.state = ThreadState::running;
    g_boot_thread.id = g_next_id++;
    g_boot_thread.on_cpu = true;
    cpu.current = &g_boot_thread;
    cpu.mutexes = &g_boot_thread.mutexes;
    cpu.idle = thread_alloc("idle");
    TOLL_ASSERT(cpu.idle);
    arch::context_init_kernel(cpu.idle->context, cpu.idle->kstack_top, idle_loop, nullptr);
    cpu.idle->state = ThreadState::runnable; // never on the run queue
}

void sched_init_secondary(uintptr_t stack_base)
{
    // The CPU's start-up flow becomes its idle thread, on the stack it
    // was started with.
    Cpu& cpu = this_cpu();
    static Thread s_idle[k_max_cpus];
    Thread* idle = &s_idle[cpu.id];
    lib::snformat(idle->name, sizeof idle->name, "idle%u", cpu.id);
    idle->kstack_top = stack_base + k_kstack_size;
    idle->state = ThreadState::running;
    idle->on_cpu = true;
    idle->cpu = idle->last_ran = cpu.id;
    idle->affinity = 1u << cpu.id;
    cpu.idle = cpu.current = idle;
    cpu.mutexes = &idle->mutexes;
}

void sched_idle_secondary()
{
    idle_loop(nullptr);
    panic("an idle loop returned");
}

Thread* thread_alloc(const char* name)
{
    Thread* t = make<Thread>();
    if (!t)
        return nullptr;
    // Whole pages, not zeroed: a stack is written before it is read, and
    // kmalloc would add a header (rounding 16 KB up to 32) and zero it all.
    void* stack = vm::alloc_pages_unzeroed(k_kstack_order);
    if (!stack) {
        destroy(t);
        return nullptr;
    }
    t->kstack_top = reinterpret_cast<uintptr_t>(stack) + k_kstack_size;
    t->id = __atomic_fetch_add(&g_next_id, 1, __ATOMIC_RELAXED);
    // A new thread starts where its creator runs, with its creator's
    // affinity (fork and clone inherit it, as on Linux).
    arch::InterruptsOff off;
    Cpu& cpu = this_cpu();
    t->cpu = t->last_ran = cpu.id;
    if (cpu.current && cpu.current != cpu.idle && cpu.current->process)
        t->affinity = cpu.current->affinity;
    copy_name(t, name);
    return t;
}

void thread_free(Thread* t)
{
    free_thread_now(t);
}

Thread* thread_create_kernel(const char* name, void (*fn)(void*), void* arg, bool preemptible)
{
    return thread_create_kernel_on(name, fn, arg, preemptible, ~0u);
}

Thread* thread_create_kernel_on(const char* name, void (*fn)(void*), void* arg, bool preemptible,
                                uint32_t affinity)
{
    Thread* t = thread_alloc(name);
    if (!t)
        return nullptr;
    t->preemptible = preemptible;
    t->affinity = affinity;
    arch::context_init_kernel(t->context, t->kstack_top, fn, arg);
    make_runnable(t);
    return t;
}

void make_runnable(Thread* t)
{
    // A thread still on its CPU's stack (going to sleep there right now) is
    // queued on that CPU, which picks it up again; any other goes wherever
    // choose_cpu says.
    arch::InterruptsOff off;
    unsigned home = t->cpu;
    bool ipi = false, placed = false;
    {
        SpinGuard g(g_rq[home].lock);
        t->state = ThreadState::runnable;
        // The usual case, the thread's own CPU, without taking a second lock.
        if (t->on_cpu || choose_cpu(t) == home) {
            ipi = place_locked(home, t);
            placed = true;
        }
    }
    cpu_count(home == this_cpu().id ? CpuEvent::sched_wakeups_local
                                    : CpuEvent::sched_wakeups_remote);
    if (ipi)
        kick(home);
    if (!placed)
        place(t);
}

void block()
{
    // The caller has marked the thread asleep where its waker finds it,
    // with interrupts off; a waker may already have queued it here again.
    lock_order_check_sleep("sleeps");
    arch::InterruptsOff off;
    Cpu& cpu = this_cpu();
    g_rq[cpu.id].lock.lock();
    switch_locked(cpu, g_rq[cpu.id]);
}

void yield()
{
    lock_order_check_sleep("yields");
    arch::InterruptsOff off;
    requeue_current_and_switch();
}

void thread_exit()
{
    lock_order_check_sleep("exits");
    arch::interrupts_disable();
    Cpu& cpu = this_cpu();
    RunQueue& rq = g_rq[cpu.id];
    rq.lock.lock();
    cpu.current->state = ThreadState::dead; // the tail frees it, off its stack
    switch_locked(cpu, rq);
    panic("a dead thread was scheduled");
}

void sched_clock_tick()
{
    Cpu& cpu = this_cpu();
    cpu_count(CpuEvent::clock_ticks);
    if (cpu.id == 0) {
        uint64_t now = __atomic_add_fetch(&g_ticks, 1, __ATOMIC_RELAXED);
        sleep_clock_tick(now); // the timed sleepers (proc/sleep.cpp)
        if (g_policy == Policy::mlfq && now % k_boost_ticks == 0)
            boost_all();
        if (now % k_balance_ticks == 0)
            balance();
    }
    SpinGuard g(g_rq[cpu.id].lock);
    Thread* t = cpu.current;
    if (t == cpu.idle)
        return;
    ++t->ticks_run;
    if (++t->slice_used < quantum(t->level))
        return;
    // The quantum is used up: MLFQ drops it a level (rule 4).
    if (g_policy == Policy::mlfq && t->level + 1u < k_mlfq_levels) {
        ++t->level;
        t->slice_used = 0;
    } else if (g_policy == Policy::mlfq) {
        t->slice_used = 0;
    }
    if (g_rq[cpu.id].queued)
        t->need_resched = true;
}

void sched_preempt_point(bool from_user)
{
    Cpu& cpu = this_cpu();
    Thread* t = cpu.current;
    if (!t->need_resched || t == cpu.idle || (!from_user && !t->preemptible))
        return;
    t->need_resched = false;
    cpu_count(CpuEvent::preemptions);
    requeue_current_and_switch();
}

} // namespace toll::proc

/// Where a kernel thread goes when its entry function returns.
extern "C" void kernel_thread_exit_from_entry()
{
    toll::proc::thread_exit();
}
