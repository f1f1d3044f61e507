// The serial receive interrupt: bytes typed on the console go to the line
// discipline in kernel/sys/devices.cpp.
#include "arch/i386/pic.h"
#include "arch/i386/trap.h"
#include "arch/i386/uart.h"
#include "kernel/arch/console.h"
#include "kernel/sys/file.h"

namespace toll::i386 {

void console_input_interrupt()
{
    for (Optional<uint8_t> c = uart_getc(); c; c = uart_getc())
        sys::console_input_byte(static_cast<char>(c.value()));
}

} // namespace toll::i386

namespace toll::arch {

void console_input_init()
{
    i386::uart_enable_rx_interrupt(true);
    i386::pic_enable(i386::k_irq_com1);
}

} // namespace toll::arch
