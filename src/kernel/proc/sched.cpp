// The scheduler: a run queue served round robin, one quantum per clock
// tick, and an idle thread that halts the CPU. Sleeping is the wait
// queues' (proc/waitqueue.h, proc/sleep.cpp); the scheduler blocks the
// current thread and makes threads runnable for them.
// Which thread runs, the run queue and the idle thread are the CPU's own
// (kernel/kern/cpu.h); only the boot CPU runs threads so far, the others
// sit in their idle loops (sched_start_secondary).
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
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

Thread g_boot_thread;
int g_next_id = 1;
uint64_t g_ticks;

void copy_name(Thread* t, const char* name)
{
    size_t n = strnlen(name, sizeof t->name - 1);
    memcpy(t->name, name, n);
    t->name[n] = '\0';
}

Thread* dequeue(Cpu& cpu)
{
    Thread* t = cpu.run_head;
    if (t) {
        cpu.run_head = t->next;
        if (!cpu.run_head)
            cpu.run_tail = nullptr;
        t->next = nullptr;
    }
    return t;
}

void reap_dead(Cpu& cpu)
{
    if (cpu.reap && cpu.reap != cpu.current) {
        thread_free(cpu.reap);
        cpu.reap = nullptr;
    }
}

// Picks the next thread and switches to it. The caller has already put the
// current thread where it belongs (run queue, sleeping, dead).
void reschedule()
{
    Cpu& cpu = this_cpu();
    Thread* next = dequeue(cpu);
    if (!next)
        next = cpu.current->state == ThreadState::runnable ? cpu.current : cpu.idle;
    if (next == cpu.current) {
        cpu.current->state = ThreadState::running;
        return;
    }
    Thread* prev = cpu.current;
    cpu.current = next;
    cpu.mutexes = &next->mutexes; // the spinlocks' order check reads them
    next->state = ThreadState::running;
    next->need_resched = false;
    ++next->switches_in;
    cpu.events[static_cast<unsigned>(CpuEvent::context_switches)]++;
    // A user thread runs in its own address space; a kernel thread runs in
    // whichever is loaded (the kernel part is the same in all of them).
    if (next->process && next->process->vm)
        arch::pmap_activate(next->process->vm->pmap);
    arch::context_switch(prev->context, next->context);
    // Back on prev's stack, perhaps much later: this_cpu() again, since
    // the Cpu read above was the one prev left on.
    reap_dead(this_cpu());
}

void idle_loop(void*)
{
    for (;;) {
        // Interrupts are enabled only while halted: a wakeup from an interrupt
        // handler makes a thread runnable, and we switch to it right here.
        arch::wait_for_interrupt();
        arch::interrupts_disable();
        if (this_cpu().run_head)
            reschedule();
    }
}

} // namespace

uint64_t ticks()
{
    return g_ticks;
}

void sched_init()
{
    Cpu& cpu = this_cpu();
    copy_name(&g_boot_thread, "boot");
    g_boot_thread.state = ThreadState::running;
    g_boot_thread.id = g_next_id++;
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
    cpu.idle = cpu.current = idle;
    cpu.mutexes = &idle->mutexes;
}

void sched_idle_secondary()
{
    // Nothing is ever queued here yet.
    arch::interrupts_disable();
    for (;;)
        arch::wait_for_interrupt();
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
    t->kstack_top = reinterpret_cast<uintptr_t>(stack) + k_kstack_size;
    t->id = g_next_id++;
    copy_name(t, name);
    return t;
}

void thread_free(Thread* t)
{
    vm::kfree(reinterpret_cast<void*>(kstack_base(*t)));
    destroy(t);
}

Thread* thread_create_kernel(const char* name, void (*fn)(void*), void* arg, bool preemptible)
{
    Thread* t = thread_alloc(name);
    if (!t)
        return nullptr;
    t->preemptible = preemptible;
    arch::context_init_kernel(t->context, t->kstack_top, fn, arg);
    make_runnable(t);
    return t;
}

void make_runnable(Thread* t)
{
    // The calling CPU's queue: only the boot CPU runs threads (and wakes
    // them) so far; the others idle with interrupts masked.
    Cpu& cpu = this_cpu();
    t->state = ThreadState::runnable;
    t->next = nullptr;
    if (cpu.run_tail)
        cpu.run_tail->next = t;
    else
        cpu.run_head = t;
    cpu.run_tail = t;
}

void yield()
{
    lock_order_check_sleep("yields");
    arch::InterruptsOff off;
    Cpu& cpu = this_cpu();
    if (cpu.current != cpu.idle)
        make_runnable(cpu.current);
    reschedule();
}

void block()
{
    // The caller (a wait queue, proc/waitqueue.cpp) has marked the thread
    // asleep and queued it, with interrupts off, and keeps them off to here.
    lock_order_check_sleep("sleeps");
    reschedule();
}

void thread_exit()
{
    lock_order_check_sleep("exits");
    arch::interrupts_disable();
    Cpu& cpu = this_cpu();
    reap_dead(cpu); // at most one dead thread waits for its stack to be freed
    cpu.current->state = ThreadState::dead;
    cpu.reap = cpu.current;
    reschedule();
    panic("a dead thread was scheduled");
}

void sched_clock_tick()
{
    Cpu& cpu = this_cpu();
    ++g_ticks;
    cpu.events[static_cast<unsigned>(CpuEvent::clock_ticks)]++;
    sleep_clock_tick(g_ticks);
    if (cpu.run_head)
        cpu.current->need_resched = true;
}

void sched_preempt_point(bool from_user)
{
    Cpu& cpu = this_cpu();
    Thread* t = cpu.current;
    if (!t->need_resched || t == cpu.idle || (!from_user && !t->preemptible))
        return;
    t->need_resched = false;
    cpu.events[static_cast<unsigned>(CpuEvent::preemptions)]++;
    make_runnable(t);
    reschedule();
}

} // namespace toll::proc

/// Where a kernel thread goes when its entry function returns.
extern "C" void kernel_thread_exit_from_entry()
{
    toll::proc::thread_exit();
}
