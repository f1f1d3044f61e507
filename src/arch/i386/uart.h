// COM1 serial console driver.
#pragma once
#include "kernel/kern/result.h"
#include <stdint.h>

namespace toll::i386 {

/// Programs COM1 for 115200 baud, 8 data bits, no parity, 1 stop bit.
void uart_init();

/// Sends one byte, waiting for the transmitter to be free.
void uart_putc(char c);

/// A received byte, or nothing if none is waiting.
Optional<uint8_t> uart_getc();

/// Turns the receive-data interrupt (IRQ 4) on or off.
void uart_enable_rx_interrupt(bool on);

} // namespace toll::i386
