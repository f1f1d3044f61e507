// The arm64 side of the core's processor and console interfaces
// (kernel/arch/cpu.h, kernel/arch/console.h).
#include "arch/arm64/board.h"
#include "arch/arm64/cpu.h"
#include "arch/arm64/semihosting.h"
#include "arch/arm64/uart.h"
#include "kernel/arch/console.h"
#include "kernel/arch/cpu.h"

namespace toll::arm64 {
namespace {
// Arm Power State Coordination Interface (DEN0022), 5.1: SYSTEM_OFF's function id.
constexpr uint64_t k_psci_system_off = 0x84000008;
} // namespace

void semihosting_exit(uint32_t status)
{
    uint64_t block[2] = {k_adp_stopped_application_exit, status};
    arm64_semihosting_call(k_sys_exit, reinterpret_cast<uint64_t>(block));
}

void poweroff_without_semihosting()
{
    register uint64_t x0 asm("x0") = k_psci_system_off;
    if (board().psci == PsciConduit::hvc)
        asm volatile("hvc #0" : "+r"(x0)::"memory");
    else if (board().psci == PsciConduit::smc)
        asm volatile("smc #0" : "+r"(x0)::"memory");
    for (;;)
        asm volatile("wfi");
}

} // namespace toll::arm64

namespace toll::arch {

const char* name()
{
    return "arm64";
}

void console_putc(char c)
{
    arm64::uart_putc(c);
}

void poweroff(bool success)
{
    asm volatile("msr daifset, #0xf" ::: "memory");
    arm64::semihosting_exit(success ? 0 : 1);
    arm64::poweroff_without_semihosting();
}

uint64_t cycle_counter()
{
    return arm64::read_cntvct();
}

void wait_for_interrupt()
{
    // WFI wakes on a pending interrupt even while IRQs are masked (Arm ARM,
    // "Wait for Interrupt"), so sleeping with them masked and unmasking
    // afterwards cannot miss one; the interrupt is taken at the unmask. Like
    // i386's "sti; hlt", this returns with interrupts enabled.
    asm volatile("dsb sy; wfi; msr daifclr, #2; isb" ::: "memory");
}

void halt()
{
    asm volatile("msr daifset, #0xF" ::: "memory");
    for (;;)
        asm volatile("wfi" ::: "memory");
}

void cpu_relax()
{
    // YIELD (Arm ARM C6.2): a hint that this is a spin-wait loop.
    asm volatile("yield" ::: "memory");
}

} // namespace toll::arch
