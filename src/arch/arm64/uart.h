// The PL011 UART of QEMU's virt machine: Toll's console on arm64.
#pragma once
#include "kernel/kern/result.h"
#include <stdint.h>

namespace toll::arm64 {

/// Programs the PL011 for 115200 baud, 8 data bits, no parity, 1 stop bit,
/// FIFOs on, transmitter and receiver enabled.
void uart_init();

/// Sends one byte, waiting while the transmit FIFO is full.
void uart_putc(char c);

/// A received byte, or nothing if none is waiting.
Optional<uint8_t> uart_getc();

/// Turns the receive interrupts (FIFO level and receive timeout) on or off.
void uart_enable_rx_interrupt(bool on);

/// Reads the four PrimeCell identification bytes (UARTPCellID0-3), packed
/// little-endian; a PL011 answers 0xB105F00D.
uint32_t uart_primecell_id();

/// Reads the peripheral identification (UARTPeriphID0-3), packed little-endian;
/// its low 12 bits are the part number, 0x011 for a PL011.
uint32_t uart_periph_id();

} // namespace toll::arm64
