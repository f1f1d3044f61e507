// Console output: formatting through lib/format onto the architecture's UART.
// One printf, one record or one chunk of a program's write is one hold of
// the console lock ("console", a leaf: nothing is taken under it), so that
// two CPUs' lines do not interleave. A CPU that holds it already (a panic
// while printing) goes on without it rather than wait for itself.
#include "kernel/kern/console.h"
#include "kernel/arch/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/spinlock.h"
#include "lib/format.h"

namespace toll {
namespace {

char g_nonce[33];
bool g_at_line_start = true;
Spinlock g_console_lock("console");
bool g_unlocked; // console_panic: the last words go out without the lock

// The console for one unit of output, unless this CPU has it already, or
// the boot CPU is not online yet (no per-CPU block for a lock to use, and
// no other CPU to share the console with).
class [[nodiscard]] ConsoleHold {
  public:
    ConsoleHold()
        : m_taken(cpus_online() != 0 && !__atomic_load_n(&g_unlocked, __ATOMIC_RELAXED) &&
                  !g_console_lock.held_here())
    {
        if (m_taken)
            g_console_lock.lock();
    }
    ~ConsoleHold()
    {
        if (m_taken)
            g_console_lock.unlock();
    }
    ConsoleHold(const ConsoleHold&) = delete;
    ConsoleHold& operator=(const ConsoleHold&) = delete;

  private:
    bool m_taken;
};

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
    ConsoleHold hold;
    lib::vformat(console_sink, nullptr, fmt, args);
}

void console_panic()
{
    __atomic_store_n(&g_unlocked, true, __ATOMIC_RELAXED);
}

void console_write_bytes(const char* bytes, size_t length)
{
    ConsoleHold hold;
    for (size_t i = 0; i < length; ++i) { // as ever, not counted in g_at_line_start
        if (bytes[i] == '\n')
            arch::console_putc('\r');
        arch::console_putc(bytes[i]);
    }
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
    ConsoleHold hold; // one record, never interleaved with another
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
