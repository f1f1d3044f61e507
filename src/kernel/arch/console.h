// The serial console: what a port implements so that the core can write to
// it and hear what is typed. The port's receive interrupt hands each byte to
// the core's line discipline, sys::console_input_byte (kernel/sys/file.h).
#pragma once

namespace toll::arch {

/// Writes one byte to the serial console, waiting until the UART takes it.
void console_putc(char c);

/// Starts the console's input side: enables the UART's receive interrupt and
/// routes it, so that typed bytes reach sys::console_input_byte.
void console_input_init();

} // namespace toll::arch
