// The one interface between Toll's architecture-independent core and an
// architecture port (src/arch/<arch>/). The core calls only these.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// A short name for banners and records: "i386" or "arm64".
const char* name();

/// Writes one byte to the serial console, waiting until the UART takes it.
void console_putc(char c);

/// Returns the next byte typed on the serial console, or -1 if none is waiting.
int console_getc();

/// Ends the run: powers the machine off through whatever the emulator offers
/// (isa-debug-exit and Bochs port 0x8900 on i386, semihosting on arm64).
/// @p success selects the exit status where the emulator passes one on.
[[noreturn]] void poweroff(bool success);

/// Reads the free-running cycle counter (TSC on i386, CNTVCT_EL0 on arm64).
/// In deterministic mode it counts guest instructions.
uint64_t cycle_counter();

/// Disables interrupts and returns whether they were enabled.
bool interrupts_disable();

/// Re-enables interrupts if @p were_enabled.
void interrupts_restore(bool were_enabled);

/// Waits for the next interrupt (hlt / wfi).
void wait_for_interrupt();

} // namespace toll::arch
