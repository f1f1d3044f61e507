// The PL011 UART at 0x09000000 on QEMU's virt machine. Register offsets and
// bits from the Arm PrimeCell UART (PL011) Technical Reference Manual, 3.2-3.3.
#include "arch/arm64/uart.h"
#include "arch/arm64/cpu.h"
#include "arch/arm64/layout.h"

namespace toll::arm64 {
namespace {
constexpr uintptr_t k_base = KERNEL_VA_BASE + VIRT_PL011_BASE;
constexpr uintptr_t k_data = 0x000, k_flag = 0x018, k_int_baud = 0x024, k_frac_baud = 0x028,
                    k_line_control = 0x02C, k_control = 0x030, k_int_mask = 0x038,
                    k_int_clear = 0x044, k_periph_id0 = 0xFE0, k_pcell_id0 = 0xFF0;
constexpr uint32_t k_flag_rx_empty = 1u << 4, k_flag_tx_full = 1u << 5, k_flag_busy = 1u << 3;
constexpr uint32_t k_lcr_fifo_enable = 1u << 4, k_lcr_8_bits = 3u << 5;
constexpr uint32_t k_cr_enable = 1u << 0, k_cr_tx_enable = 1u << 8, k_cr_rx_enable = 1u << 9;
constexpr uint32_t k_all_interrupts = 0x7FF;
// TRM 3.3.10 (UARTIMSC): RXIM (bit 4) receive, RTIM (bit 6) receive timeout.
constexpr uint32_t k_int_rx = 1u << 4, k_int_rx_timeout = 1u << 6;
// QEMU's virt machine clocks the UART from a 24 MHz "apb-pclk". TRM 3.3.6:
// divisor = clock / (16 * baud) = 13.0208: integer part 13, fraction
// round(0.0208 * 64) = 1.
constexpr uint32_t k_baud_integer = 13, k_baud_fraction = 1;

uint32_t read_id_bytes(uintptr_t first)
{
    uint32_t id = 0;
    for (unsigned i = 0; i < 4; ++i)
        id |= (mmio_read32(k_base + first + 4 * i) & 0xFF) << (8 * i);
    return id;
}
} // namespace

void uart_init()
{
    // TRM 3.3.8: disable the UART and let the transmitter drain before
    // changing the line settings.
    mmio_write32(k_base + k_control, 0);
    while (mmio_read32(k_base + k_flag) & k_flag_busy)
        ;
    mmio_write32(k_base + k_int_baud, k_baud_integer);
    mmio_write32(k_base + k_frac_baud, k_baud_fraction);
    // The baud divisor takes effect on the write of the line control register.
    mmio_write32(k_base + k_line_control, k_lcr_8_bits | k_lcr_fifo_enable);
    mmio_write32(k_base + k_int_mask, 0);
    mmio_write32(k_base + k_int_clear, k_all_interrupts);
    mmio_write32(k_base + k_control, k_cr_enable | k_cr_tx_enable | k_cr_rx_enable);
}

void uart_putc(char c)
{
    while (mmio_read32(k_base + k_flag) & k_flag_tx_full)
        ;
    mmio_write32(k_base + k_data, static_cast<uint8_t>(c));
}

Optional<uint8_t> uart_getc()
{
    if (mmio_read32(k_base + k_flag) & k_flag_rx_empty)
        return {};
    return static_cast<uint8_t>(mmio_read32(k_base + k_data) & 0xFF);
}

void uart_enable_rx_interrupt(bool on)
{
    mmio_write32(k_base + k_int_mask, on ? k_int_rx | k_int_rx_timeout : 0);
}

uint32_t uart_primecell_id()
{
    return read_id_bytes(k_pcell_id0);
}

uint32_t uart_periph_id()
{
    return read_id_bytes(k_periph_id0);
}

} // namespace toll::arm64
