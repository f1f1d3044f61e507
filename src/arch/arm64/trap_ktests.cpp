// In-kernel tests of the arm64 trap path, the interrupt controller and timer,
// and kernel stack switching.
#include "arch/arm64/cpu.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/switch.h"
#include "arch/arm64/timer.h"
#include "arch/arm64/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/proc/thread.h"

namespace toll::arm64 {
namespace {

// Arm ARM, ESR_ELx ISS for BRK: the instruction's immediate in bits [15:0].
constexpr uint64_t k_brk_immediate_mask = 0xFFFF;
constexpr uint64_t k_test_brk_immediate = 0x7011;
constexpr unsigned k_a64_instruction_size = 4;

uint64_t g_brk_immediate;
bool g_brk_from_user = true;

bool brk_hook(arch::TrapFrame& frame)
{
    g_brk_immediate = frame.esr & k_brk_immediate_mask;
    g_brk_from_user = frame.from_user();
    frame.x[0] = 0x5EED;                 // the trapped code sees this in x0
    frame.elr += k_a64_instruction_size; // resume after the brk
    return true;
}

} // namespace

// A synchronous exception goes through vectors.S and comes back: the hook
// sees the syndrome, its edit of the frame reaches the interrupted code, and
// the registers the hook did not touch survive.
KTEST("arm64.trap_frame_round_trip")
{
    set_sync_hook(k_ec_brk, brk_hook);
    uint64_t x0_after, x19_after, x7_after;
    asm volatile("mov x0, #1\n"
                 "mov x7, #0x77\n"
                 "movz x19, #0xbeef\n"
                 "brk #0x7011\n"
                 "mov %0, x0\n"
                 "mov %1, x19\n"
                 "mov %2, x7\n"
                 : "=r"(x0_after), "=r"(x19_after), "=r"(x7_after)
                 :
                 : "x0", "x7", "x19", "memory");
    set_sync_hook(k_ec_brk, nullptr);
    KEXPECT_EQ(g_brk_immediate, k_test_brk_immediate);
    KEXPECT(!g_brk_from_user);
    KEXPECT_EQ(x0_after, 0x5EEDu);
    KEXPECT_EQ(x19_after, 0xBEEFu);
    KEXPECT_EQ(x7_after, 0x77u);
}

// The virtual timer interrupts through the GIC at the rate asked for, and
// each interrupt is acknowledged (otherwise the next would never come).
KTEST("arm64.timer_interrupts_arrive")
{
    constexpr unsigned k_hz = 1000, k_wanted_ticks = 5;
    gic_init();
    uint64_t handled_before = gic_interrupts_handled();
    uint64_t start = read_cntvct();
    // Five ticks take 5 ms of counter time; give up after a full second.
    uint64_t deadline = start + read_cntfrq();
    timer_start(k_hz, nullptr);
    while (timer_ticks() < k_wanted_ticks && read_cntvct() < deadline) {
        arch::wait_for_interrupt(); // returns with IRQs enabled
        arch::interrupts_disable();
    }
    uint64_t elapsed = read_cntvct() - start;
    timer_stop();
    uint64_t ticks_seen = timer_ticks();
    // Give the clock back to the scheduler, as cpu_init() set it up.
    timer_start(arch::clock_hz(), proc::sched_clock_tick);
    KEXPECT(ticks_seen >= k_wanted_ticks);
    KEXPECT(gic_interrupts_handled() - handled_before >= k_wanted_ticks);
    // Not faster than asked: five ticks need at least 4 intervals.
    KEXPECT(elapsed >= 4 * (read_cntfrq() / k_hz));
}

namespace {
constexpr size_t k_test_stack_size = 8192;
alignas(16) uint8_t g_thread_stack[k_test_stack_size];
uint64_t g_main_sp, g_thread_sp;
unsigned g_steps;
bool g_returned;
void* g_arg_seen;

void test_thread(void* arg)
{
    g_arg_seen = arg;
    ++g_steps;
    arm64_switch_stacks(&g_thread_sp, g_main_sp);
    ++g_steps;
}

void test_thread_returned()
{
    g_returned = true;
    arm64_switch_stacks(&g_thread_sp, g_main_sp); // never resumed
}
} // namespace

// A new kernel thread starts in its entry function with its argument, can be
// switched away from and back, and its return is caught.
KTEST("arm64.kernel_stack_switch_round_trip")
{
    g_steps = 0;
    g_returned = false;
    g_thread_sp =
        switch_frame_for_thread(reinterpret_cast<uint64_t>(g_thread_stack + k_test_stack_size),
                                test_thread, g_thread_stack, test_thread_returned);
    arm64_switch_stacks(&g_main_sp, g_thread_sp);
    KEXPECT_EQ(g_steps, 1u);
    KEXPECT(g_arg_seen == g_thread_stack);
    KEXPECT(!g_returned);
    arm64_switch_stacks(&g_main_sp, g_thread_sp);
    KEXPECT_EQ(g_steps, 2u);
    KEXPECT(g_returned);
}

} // namespace toll::arm64
