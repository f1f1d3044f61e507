// The kernel console: formatted output on the serial port, and the records of
// the serial protocol that tools/run parses (book/appendix/interfaces.rst).
#pragma once
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

namespace toll {

/// Prints formatted text on the console (printf conventions, see lib/format.h).
void kprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// va_list form of kprintf.
void kvprintf(const char* fmt, va_list args);

/// From now on the console takes no lock: panic's last words go out even
/// when the lock is what the panicking CPU was stuck on, or is held by a
/// CPU that will never release it.
void console_panic();

/// Writes @p length bytes as they are ('\n' becoming "\r\n"), in one hold
/// of the console: a program's write(2) to the console.
void console_write_bytes(const char* bytes, size_t length);

/// Prints one whole record line of the serial protocol ("TEST x PASS", ...),
/// prefixed with the run's nonce when the command line gave one, so that the
/// grader can tell the framework's records from anything else on the console.
/// The line is written with interrupts off so that it is never interleaved.
void krecord(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// Sets the nonce that krecord() puts in front of every record.
void console_set_nonce(const char* nonce, unsigned length);

} // namespace toll
