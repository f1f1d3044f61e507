// The i386 side of the core's processor and console interfaces
// (kernel/arch/cpu.h, kernel/arch/console.h).
#include "arch/i386/apic.h"
#include "arch/i386/io.h"
#include "arch/i386/uart.h"
#include "kernel/arch/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/cpu.h"

namespace toll::arch {
namespace {
// QEMU's isa-debug-exit device (tools/run adds it at this port): writing v
// makes QEMU exit with status (v << 1) | 1.
constexpr uint16_t k_qemu_debug_exit = 0xF4;
// Bochs ends the simulation when "Shutdown" is written to this port.
constexpr uint16_t k_bochs_shutdown = 0x8900;
// ACPI PM1a control of QEMU's PIIX4 (SLP_TYPa = 0, SLP_EN): a last resort.
constexpr uint16_t k_piix4_pm1a_control = 0x604;
} // namespace

const char* name()
{
    return "i386";
}

void console_putc(char c)
{
    i386::uart_putc(c);
}

void poweroff(bool success)
{
    asm volatile("cli");
    i386::outb(k_qemu_debug_exit, success ? 0 : 1);
    for (const char* p = "Shutdown"; *p; ++p)
        i386::outb(k_bochs_shutdown, static_cast<uint8_t>(*p));
    i386::outw(k_piix4_pm1a_control, 0x2000);
    for (;;)
        asm volatile("hlt");
}

uint64_t cycle_counter()
{
    return i386::rdtsc();
}

void wait_for_interrupt()
{
    asm volatile("sti; hlt" ::: "memory");
}

void halt()
{
    for (;;)
        asm volatile("cli; hlt" ::: "memory");
}

void send_ipi(const Cpu& target)
{
    // The locked OR that set the pending bit is ordered before this
    // uncached write (Intel SDM Vol. 3, 8.2.2): no fence needed.
    i386::apic_send_fixed(static_cast<uint32_t>(target.hw_id), i386::k_vec_ipi);
}

void cpu_relax()
{
    // PAUSE (Intel SDM Vol. 2B): a hint in a spin-wait loop; a NOP before the P4.
    asm volatile("pause" ::: "memory");
}

} // namespace toll::arch
