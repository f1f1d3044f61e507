// The scheduler: one run queue served round robin, one quantum per clock
// tick, sleep/wakeup on channels, and an idle thread that halts the CPU.
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_context_switches, "sched.context_switches");
TOLL_COUNTER(g_preemptions, "sched.preemptions");
TOLL_COUNTER(g_clock_ticks, "sched.clock_ticks");

Thread g_boot_thread;
Thread* g_current = &g_boot_thread;
Thread* g_idle;
Thread* g_run_head;
Thread* g_run_tail;
Thread* g_sleepers; // sleeping threads, linked through Thread::next
int g_next_id = 1;
uint64_t g_ticks;
Thread* g_reap; // a dead thread whose stack is freed by the next thread to run

void copy_name(Thread* t, const char* name)
{
    size_t n = strnlen(name, sizeof t->name - 1);
    memcpy(t->name, name, n);
    t->name[n] = '\0';
}

Thread* dequeue()
{
    Thread* t = g_run_head;
    if (t) {
        g_run_head = t->next;
        if (!g_run_head)
            g_run_tail = nullptr;
        t->next = nullptr;
    }
    return t;
}

void reap_dead()
{
    if (g_reap && g_reap != g_current) {
        thread_free(g_reap);
        g_reap = nullptr;
    }
}

// Picks the next thread and switches to it. The caller has already put the
// current thread where it belongs (run queue, sleeping, dead).
void reschedule()
{
    Thread* next = dequeue();
    if (!next)
        next = g_current->state == ThreadState::runnable ? g_current : g_idle;
    if (next == g_current) {
        g_current->state = ThreadState::running;
        return;
    }
    Thread* prev = g_current;
    g_current = next;
    next->state = ThreadState::running;
    next->need_resched = false;
    ++next->switches_in;
    g_context_switches.add();
    // A user thread runs in its own address space; a kernel thread runs in
    // whichever is loaded (the kernel part is the same in all of them).
    if (next->process && next->process->vm)
        vm::pmap_activate(next->process->vm->pmap);
    arch::context_switch(prev->context, next->context);
    reap_dead();
}

void idle_loop(void*)
{
    for (;;) {
        // Interrupts are enabled only while halted: a wakeup from an interrupt
        // handler makes a thread runnable, and we switch to it right here.
        arch::wait_for_interrupt();
        arch::interrupts_disable();
        if (g_run_head)
            reschedule();
    }
}

void add_sleeper(Thread* t)
{
    t->next = g_sleepers;
    g_sleepers = t;
}

// Moves every sleeper for which @p should_wake is true to the run queue.
template <typename Predicate>
void wake_if(Predicate should_wake)
{
    Thread** link = &g_sleepers;
    while (Thread* t = *link) {
        if (should_wake(t)) {
            *link = t->next;
            t->wait_channel = nullptr;
            t->wake_tick = 0;
            make_runnable(t);
        } else {
            link = &t->next;
        }
    }
}

} // namespace

Thread* current()
{
    return g_current;
}

uint64_t ticks()
{
    return g_ticks;
}

void sched_init()
{
    copy_name(&g_boot_thread, "boot");
    g_boot_thread.state = ThreadState::running;
    g_boot_thread.id = g_next_id++;
    g_idle = thread_alloc("idle");
    TOLL_ASSERT(g_idle);
    arch::context_init_kernel(g_idle->context, kstack_top(*g_idle), idle_loop, nullptr);
    g_idle->state = ThreadState::runnable; // never on the run queue
}

Thread* thread_alloc(const char* name)
{
    Thread* t = make<Thread>();
    if (!t)
        return nullptr;
    void* stack = vm::kmalloc(k_kstack_size);
    if (!stack) {
        destroy(t);
        return nullptr;
    }
    t->kstack_base = reinterpret_cast<uintptr_t>(stack);
    t->id = g_next_id++;
    copy_name(t, name);
    return t;
}

void thread_free(Thread* t)
{
    vm::kfree(reinterpret_cast<void*>(t->kstack_base));
    destroy(t);
}

Thread* thread_create_kernel(const char* name, void (*fn)(void*), void* arg, bool preemptible)
{
    Thread* t = thread_alloc(name);
    if (!t)
        return nullptr;
    t->preemptible = preemptible;
    arch::context_init_kernel(t->context, kstack_top(*t), fn, arg);
    make_runnable(t);
    return t;
}

void make_runnable(Thread* t)
{
    t->state = ThreadState::runnable;
    t->next = nullptr;
    if (g_run_tail)
        g_run_tail->next = t;
    else
        g_run_head = t;
    g_run_tail = t;
}

void yield()
{
    arch::InterruptsOff off;
    if (g_current != g_idle)
        make_runnable(g_current);
    reschedule();
}

void sleep_on(const void* channel, uint64_t wake_tick)
{
    arch::InterruptsOff off;
    Thread* t = g_current;
    t->state = ThreadState::sleeping;
    t->wait_channel = channel;
    t->wake_tick = wake_tick;
    add_sleeper(t);
    reschedule();
}

void wakeup(const void* channel)
{
    arch::InterruptsOff off;
    wake_if([channel](Thread* t) { return t->wait_channel == channel; });
}

void thread_exit()
{
    arch::interrupts_disable();
    reap_dead(); // at most one dead thread waits for its stack to be freed
    g_current->state = ThreadState::dead;
    g_reap = g_current;
    reschedule();
    panic("a dead thread was scheduled");
}

void sched_clock_tick()
{
    ++g_ticks;
    g_clock_ticks.add();
    wake_if([](Thread* t) { return t->wake_tick && t->wake_tick <= g_ticks; });
    if (g_run_head)
        g_current->need_resched = true;
}

void sched_preempt_point(bool from_user)
{
    Thread* t = g_current;
    if (!t->need_resched || t == g_idle || (!from_user && !t->preemptible))
        return;
    t->need_resched = false;
    g_preemptions.add();
    make_runnable(t);
    reschedule();
}

} // namespace toll::proc

/// Where a kernel thread goes when its entry function returns.
extern "C" void kernel_thread_exit_from_entry()
{
    toll::proc::thread_exit();
}
