// The serial receive interrupt on arm64: bytes typed on the console go to
// the line discipline in kernel/sys/devices.cpp.
#include "arch/arm64/gic.h"
#include "arch/arm64/uart.h"
#include "kernel/arch/console.h"
#include "kernel/kern/counters.h"
#include "kernel/sys/file.h"

namespace toll::arm64 {
namespace {

// QEMU hw/arm/virt.c: the first PL011 is SPI 1; SPIs start at INTID 32
// (GIC architecture specification, IHI 0048B, 2.2.1).
constexpr unsigned k_uart_intid = 32 + 1;

TOLL_COUNTER(g_serial_irqs, "cpu.irq.serial");

void console_input_interrupt()
{
    g_serial_irqs.add();
    // Draining the receive FIFO clears both receive interrupts (PL011 TRM 3.4).
    for (Optional<uint8_t> c = uart_getc(); c; c = uart_getc())
        sys::console_input_byte(static_cast<char>(c.value()));
}

} // namespace
} // namespace toll::arm64

namespace toll::arch {

void console_input_init()
{
    arm64::gic_set_handler(arm64::k_uart_intid, arm64::console_input_interrupt);
    arm64::uart_enable_rx_interrupt(true);
}

} // namespace toll::arch
