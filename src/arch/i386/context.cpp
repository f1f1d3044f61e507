// Threads on i386: building the first kernel-stack frames of new threads, and
// switching kernel stacks (context_switch_stacks in switch.S).
#include "kernel/arch/context.h"
#include "arch/i386/apic.h"
#include "arch/i386/cpu.h"
#include "arch/i386/fpu/fpu.h"
#include "arch/i386/layout.h"
#include "arch/i386/mmu.h"
#include "arch/i386/pic.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/trap.h"
#include "arch/i386/walks.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "kernel/proc/thread.h"
#include "lib/string.h"

extern "C" void context_switch_stacks(uint32_t* save_esp, uint32_t new_esp);
extern "C" void kernel_thread_start();
extern "C" void new_user_thread_start(); // switch.S: sched_switch_tail, then trap_return
extern "C" char __kernel_end[];

namespace toll::arch {
namespace {

constexpr unsigned k_clock_hz = 100;
constexpr uint32_t k_eflags_reserved1 = 1u << 1;
constexpr uint32_t k_eflags_if = 1u << 9;

// The frame context_switch_stacks pops: edi, esi, ebx, ebp, return address.
struct SwitchFrame {
    uint32_t edi, esi, ebx, ebp;
    uint32_t eip;
};

TrapFrame* user_frame_at(uintptr_t stack_top)
{
    return reinterpret_cast<TrapFrame*>(stack_top - sizeof(TrapFrame));
}

// A user frame that enters the program at @p pc with stack @p sp: user
// segments, interrupts on, every other register 0 (a new thread and execve).
void fill_user_frame(TrapFrame& f, uintptr_t pc, uintptr_t sp)
{
    memset(&f, 0, sizeof f);
    f.cs = i386::k_user_cs;
    f.ds = f.es = f.fs = f.gs = f.user_ss = i386::k_user_ds;
    f.eip = pc;
    f.user_esp = sp;
    f.eflags = k_eflags_reserved1 | k_eflags_if;
}

// Puts a SwitchFrame below @p frame_top that "returns" into trap_return.
void switch_into_trap_return(ThreadContext& ctx, TrapFrame* frame)
{
    auto* sw = reinterpret_cast<SwitchFrame*>(frame) - 1;
    *sw = SwitchFrame{0, 0, 0, 0, reinterpret_cast<uint32_t>(new_user_thread_start)};
    ctx.esp = reinterpret_cast<uint32_t>(sw);
}

} // namespace

void cpu_init(Cpu& boot)
{
    i386::walks_init(); // before idt_init: it picks the entry path
    i386::gdt_init(boot);
    i386::idt_init();
    i386::double_fault_init(boot.id);
    if (i386::layout_isolated())
        i386::tss_set_kernel_stack(i386::trampoline_stack_top(boot.id));
    i386::uaccess_init();
    i386::shootdown_init();
    i386::pic_init();
    i386::pit_init(k_clock_hz); // runs on for pit_wait_us even when the APIC times
    // The local APIC's timer is the clock where there is one (every CPU has
    // its own); the PIT's IRQ 0 only on a CPU without.
    if (i386::apic_init())
        i386::apic_timer_start(k_clock_hz);
    else
        i386::pic_enable(i386::k_irq_timer);
    i386::fpu::init();
}

void kernel_image_range(uint64_t* start, uint64_t* end)
{
    *start = KERNEL_LOAD_PHYS;
    *end = reinterpret_cast<uint32_t>(__kernel_end) - KERNEL_BASE;
}

unsigned clock_hz()
{
    return k_clock_hz;
}

const char* uname_machine()
{
    return "i686"; // Linux's utsname machine for this port
}

void context_init_kernel(ThreadContext& ctx, uintptr_t stack_top, void (*entry)(void*), void* arg)
{
    auto* sw = reinterpret_cast<SwitchFrame*>(stack_top) - 1;
    *sw = SwitchFrame{0, reinterpret_cast<uint32_t>(arg), reinterpret_cast<uint32_t>(entry), 0,
                      reinterpret_cast<uint32_t>(kernel_thread_start)};
    ctx.esp = reinterpret_cast<uint32_t>(sw);
}

TrapFrame* context_init_user(ThreadContext& ctx, uintptr_t stack_top, uintptr_t pc, uintptr_t sp)
{
    TrapFrame* f = user_frame_at(stack_top);
    fill_user_frame(*f, pc, sp);
    ctx.tls = {};
    switch_into_trap_return(ctx, f);
    return f;
}

void frame_reset_user(ThreadContext& ctx, TrapFrame& f, uintptr_t pc, uintptr_t sp)
{
    fill_user_frame(f, pc, sp);
    f.vector = i386::k_vec_syscall;
    ctx.tls = {};
    i386::gdt_set_user_tls(ctx.tls);
    i386::fpu::exec_reset(ctx);
}

unsigned elf_machine()
{
    return 3; // EM_386 (System V ABI, ELF header)
}

unsigned elf_class()
{
    return 1; // ELFCLASS32
}

TrapFrame* context_init_fork(ThreadContext& child, uintptr_t stack_top, const TrapFrame& parent)
{
    TrapFrame* f = user_frame_at(stack_top);
    *f = parent;
    f->eax = 0; // fork returns 0 in the child
    i386::fpu::fork_copy(child);
    switch_into_trap_return(child, f);
    return f;
}

void frame_set_user_sp(TrapFrame& f, uintptr_t sp)
{
    f.user_esp = sp;
}

void context_switch(ThreadContext& from, ThreadContext& to)
{
    // Under 3/1 a trap from user mode lands on the thread's kernel stack
    // directly; under the isolated layouts it lands on the trampoline stack
    // (this CPU's, TSS.esp0, fixed) and the entry code moves it to this
    // CPU's kstack_top. The stack top is the core's (proc::Thread), read
    // from the thread of @p to.
    uintptr_t stack_top = proc::thread_of(to).kstack_top;
    if (i386::layout_isolated())
        i386::trampoline_of(arch::cpu_local_word<offsetof(Cpu, id)>()).kstack_top = stack_top;
    else
        i386::tss_set_kernel_stack(stack_top);
    i386::gdt_set_user_tls(to.tls);
    // The user's gs selector comes back from its trap frame; until then hold
    // a null one, so that the TLS entry can change under it. (%fs is the
    // kernel's per-CPU segment, never a TLS one.)
    asm volatile("movl %0, %%gs" : : "r"(0));
    i386::fpu::switch_threads(from, to);
    context_switch_stacks(&from.esp, to.esp);
}

} // namespace toll::arch
