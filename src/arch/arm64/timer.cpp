// The periodic clock: the EL1 virtual timer (CNTV_*), reloaded on every
// interrupt. Arm ARM, "The Generic Timer in AArch64 state".
#include "arch/arm64/timer.h"
#include "arch/arm64/cpu.h"
#include "arch/arm64/gic.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"

namespace toll::arm64 {
namespace {
// Arm ARM, CNTV_CTL_EL0: ENABLE (bit 0); IMASK (bit 1) masks the interrupt.
constexpr uint64_t k_ctl_enable = 1;
// Arm ARM (DDI 0487), CNTKCTL_EL1: EL0VCTEN (bit 1) lets EL0 read CNTVCT_EL0
// (and CNTFRQ_EL0); without it a user program's read traps (EC 0x18).
constexpr uint64_t k_cntkctl_el0vcten = 1u << 1;

uint64_t g_interval;
volatile uint64_t g_ticks;
void (*g_on_tick)();

void write_tval(uint64_t ticks)
{
    asm volatile("msr cntv_tval_el0, %0; isb" ::"r"(ticks));
}

void write_ctl(uint64_t value)
{
    asm volatile("msr cntv_ctl_el0, %0; isb" ::"r"(value));
}

TOLL_COUNTER(g_timer_irqs, "cpu.irq.timer");

void on_interrupt()
{
    g_timer_irqs.add();
    // Writing TVAL sets the next deadline relative to now and clears the
    // condition that holds the interrupt line high.
    write_tval(g_interval);
    // Each CPU has its own virtual timer (a PPI, banked per CPU): each
    // calls the scheduler's tick (the boot CPU's also drives the global
    // time, sched_clock_tick says); this count is the boot CPU's.
    if (this_cpu().id == 0)
        g_ticks = g_ticks + 1;
    if (g_on_tick)
        g_on_tick();
}
} // namespace

void timer_start(unsigned hz, void (*on_tick)())
{
    // User benchmarks time themselves with the virtual counter, as i386's use
    // rdtsc; the timer registers stay the kernel's (EL0VTEN and EL0PTEN clear).
    asm volatile("msr cntkctl_el1, %0; isb" ::"r"(k_cntkctl_el0vcten));
    g_interval = read_cntfrq() / hz;
    g_ticks = 0;
    g_on_tick = on_tick;
    gic_set_handler(k_virtual_timer_intid, on_interrupt);
    write_tval(g_interval);
    write_ctl(k_ctl_enable);
}

void timer_start_cpu()
{
    asm volatile("msr cntkctl_el1, %0; isb" ::"r"(k_cntkctl_el0vcten));
    write_tval(g_interval);
    write_ctl(k_ctl_enable);
}

void timer_stop()
{
    write_ctl(0);
    gic_set_handler(k_virtual_timer_intid, nullptr);
}

uint64_t timer_ticks()
{
    return g_ticks;
}

} // namespace toll::arm64
