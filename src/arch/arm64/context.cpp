// Threads on arm64 and the CPU bring-up the core asks for (kernel/arch/cpu.h):
// first switch frames of new threads, the user frames, and the switch itself.
#include "kernel/arch/context.h"
#include "arch/arm64/asid.h"
#include "arch/arm64/fpu.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/mmu.h"
#include "arch/arm64/switch.h"
#include "arch/arm64/timer.h"
#include "arch/arm64/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/cpu.h"
#include "kernel/proc/thread.h"
#include "lib/string.h"

extern "C" void kernel_thread_exit_from_entry();
extern "C" void arm64_new_user_thread_start(); // switch.S: sched_switch_tail, then trap return
extern "C" char __kernel_start[], __kernel_end[];

namespace toll::arch {
namespace {

constexpr unsigned k_clock_hz = 100;
// Arm ARM, SPSR_EL1: M[3:0] = 0 returns to EL0 (EL0t); DAIF clear, so user
// code runs with interrupts enabled.
constexpr uint64_t k_spsr_el0t = 0;
constexpr uintptr_t k_stack_alignment = 16;
// ELF for the Arm 64-bit Architecture (AArch64), 4.2.1: e_machine EM_AARCH64.
constexpr unsigned k_em_aarch64 = 183;
constexpr unsigned k_elfclass64 = 2;

// The user frame sits at the very top of the kernel stack: an exception from
// EL0 starts on SP_EL1, which arm64_trap_return left just above the frame.
TrapFrame* user_frame_at(uintptr_t stack_top)
{
    stack_top &= ~(k_stack_alignment - 1);
    return reinterpret_cast<TrapFrame*>(stack_top) - 1;
}

// A switch frame below @p frame that "returns" into arm64_trap_return,
// which restores the frame and erets to user mode.
void switch_into_trap_return(ThreadContext& ctx, TrapFrame* frame)
{
    auto* sw = reinterpret_cast<arm64::SwitchFrame*>(frame) - 1;
    *sw = arm64::SwitchFrame{};
    sw->x30 = reinterpret_cast<uint64_t>(arm64_new_user_thread_start);
    ctx.sp = reinterpret_cast<uint64_t>(sw);
}

// A fresh EL0 frame: entry @p pc, stack @p sp, every other register zero.
void fill_user_frame(TrapFrame* f, uintptr_t pc, uintptr_t sp)
{
    memset(f, 0, sizeof *f);
    f->elr = pc;
    f->sp_el0 = sp;
    f->spsr = k_spsr_el0t;
}

} // namespace

void cpu_init(Cpu& boot)
{
    // The per-CPU pointer (machine/cpu_local.h) first: nothing below reads
    // it, but anything that traps from here on may.
    asm volatile("msr tpidr_el1, %0" ::"r"(&boot));
    // The vectors are in place since entry.S; add the MMU, the interrupt
    // controller, the user-access fault fixups and the clock. (The system
    // call table is built at compile time; SVC from EL0 goes straight from
    // vectors.S to arm64_syscall. The way out of every trap is the core's
    // proc::trap_exit.)
    arm64::mmu_init();
    arm64::asid::init();
    arm64::gic_init();
    arm64::uaccess_init();
    arm64::fpu::init();
    arm64::timer_start(k_clock_hz, proc::sched_clock_tick);
}

void kernel_image_range(uint64_t* start, uint64_t* end)
{
    // Physical addresses: the kernel runs in the upper half (linker.ld).
    // The ramdisk is in .rodata, inside the image.
    *start = arch::virt_to_phys(__kernel_start);
    *end = arch::virt_to_phys(__kernel_end);
}

unsigned clock_hz()
{
    return k_clock_hz;
}

void context_init_kernel(ThreadContext& ctx, uintptr_t stack_top, void (*entry)(void*), void* arg)
{
    ctx.sp = arm64::switch_frame_for_thread(stack_top, entry, arg, kernel_thread_exit_from_entry);
    ctx.tls = 0;
}

TrapFrame* context_init_user(ThreadContext& ctx, uintptr_t stack_top, uintptr_t pc, uintptr_t sp)
{
    TrapFrame* f = user_frame_at(stack_top);
    fill_user_frame(f, pc, sp);
    ctx.tls = 0;
    ctx.fp = FpState{};
    switch_into_trap_return(ctx, f);
    return f;
}

void frame_reset_user(ThreadContext& ctx, TrapFrame& f, uintptr_t pc, uintptr_t sp)
{
    fill_user_frame(&f, pc, sp);
    ctx.tls = 0;
    asm volatile("msr tpidr_el0, xzr");
    arm64::fpu::exec_reset(ctx); // the new program starts with clean FP registers
}

unsigned elf_machine()
{
    return k_em_aarch64;
}

unsigned elf_class()
{
    return k_elfclass64;
}

TrapFrame* context_init_fork(ThreadContext& child, uintptr_t stack_top, const TrapFrame& parent)
{
    TrapFrame* f = user_frame_at(stack_top);
    *f = parent;
    f->x[0] = 0; // fork returns 0 in the child
    // The parent is running: its TPIDR_EL0 is live, its saved copy may be stale.
    asm volatile("mrs %0, tpidr_el0" : "=r"(child.tls));
    arm64::fpu::fork_copy(proc::current()->context, child);
    switch_into_trap_return(child, f);
    return f;
}

void frame_set_user_sp(TrapFrame& f, uintptr_t sp)
{
    f.sp_el0 = sp;
}

Errno clone_tls(ThreadContext& child, uintptr_t tls)
{
    child.tls = tls; // TPIDR_EL0 holds any value EL0 likes
    return k_ok;
}

void context_switch(ThreadContext& from, ThreadContext& to)
{
    // The user thread pointer (TPIDR_EL0) belongs to the thread; EL0 may
    // change it at will, so it is read back rather than trusted.
    asm volatile("mrs %0, tpidr_el0" : "=r"(from.tls));
    asm volatile("msr tpidr_el0, %0" ::"r"(to.tls));
    // So do the FP/SIMD registers (lazily or eagerly); the kernel never
    // touches them.
    arm64::fpu::switch_threads(from, to);
    arm64_switch_stacks(&from.sp, to.sp);
}

} // namespace toll::arch
