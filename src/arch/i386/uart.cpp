// The 16550 UART on COM1: Toll's console on i386. Programmed for 115200 8N1
// (Bochs honours the line settings; garbage comes out otherwise).
#include "arch/i386/uart.h"
#include "arch/i386/io.h"

namespace toll::i386 {
namespace {
// PC/AT COM1 base port and the 16550 register offsets (NS16550A data sheet).
constexpr uint16_t k_com1 = 0x3F8;
constexpr uint16_t k_data = 0, k_int_enable = 1, k_fifo = 2, k_line_control = 3,
                   k_modem_control = 4, k_line_status = 5;
constexpr uint8_t k_lsr_data_ready = 0x01, k_lsr_thr_empty = 0x20;
constexpr uint8_t k_lcr_dlab = 0x80, k_lcr_8n1 = 0x03;
} // namespace

void uart_init()
{
    outb(k_com1 + k_int_enable, 0x00);
    outb(k_com1 + k_line_control, k_lcr_dlab);
    outb(k_com1 + k_data, 1); // divisor 1: 115200 baud
    outb(k_com1 + k_int_enable, 0);
    outb(k_com1 + k_line_control, k_lcr_8n1);
    outb(k_com1 + k_fifo, 0xC7);          // enable and clear FIFOs, 14-byte threshold
    outb(k_com1 + k_modem_control, 0x0B); // DTR, RTS, OUT2 (interrupt line to the PIC)
}

void uart_putc(char c)
{
    while (!(inb(k_com1 + k_line_status) & k_lsr_thr_empty))
        ;
    outb(k_com1 + k_data, static_cast<uint8_t>(c));
}

Optional<uint8_t> uart_getc()
{
    if (!(inb(k_com1 + k_line_status) & k_lsr_data_ready))
        return {};
    return inb(k_com1 + k_data);
}

void uart_enable_rx_interrupt(bool on)
{
    outb(k_com1 + k_int_enable, on ? 0x01 : 0x00);
}

} // namespace toll::i386
