// Console output: formatting through lib/format onto the architecture's UART.
#include "kernel/kern/console.h"
#include "kernel/arch/console.h"
#include "kernel/arch/cpu.h"
#include "lib/format.h"

namespace toll {
namespace {

char g_nonce[33];
bool g_at_line_start = true;

void console_sink(void*, const char* bytes, size_t length)
{
    for (size_t i = 0; i < length; ++i) {
        if (bytes[i] == '\n')
            arch::console_putc('\r');
        arch::console_putc(bytes[i]);
        g_at_line_start = bytes[i] == '\n';
    }
}

} // namespace

void kvprintf(const char* fmt, va_list args)
{
    lib::vformat(console_sink, nullptr, fmt, args);
}

void kprintf(const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    kvprintf(fmt, args);
    va_end(args);
}

void console_set_nonce(const char* nonce, unsigned length)
{
    unsigned n = 0;
    for (; n < length && n + 1 < sizeof g_nonce; ++n)
        g_nonce[n] = nonce[n];
    g_nonce[n] = '\0';
}

void krecord(const char* fmt, ...)
{
    arch::InterruptsOff off; // one record, never interleaved with another
    // A record always starts on a line of its own, even if a program left a
    // partial line on the console.
    if (!g_at_line_start)
        console_sink(nullptr, "\n", 1);
    if (g_nonce[0])
        kprintf("@%s ", g_nonce);
    va_list args;
    va_start(args, fmt);
    kvprintf(fmt, args);
    va_end(args);
    console_sink(nullptr, "\n", 1);
}

} // namespace toll
