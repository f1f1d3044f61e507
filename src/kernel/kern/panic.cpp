// The end of the road for a broken invariant: one PANIC record, then power off.
#include "kernel/kern/panic.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "lib/format.h"

namespace toll {
namespace {
PanicHook g_hook;
bool g_panicking;
} // namespace

void set_panic_hook(PanicHook hook)
{
    g_hook = hook;
}

void panic(const char* fmt, ...)
{
    arch::interrupts_disable();
    char message[256];
    va_list args;
    va_start(args, fmt);
    lib::vsnformat(message, sizeof message, fmt, args);
    va_end(args);
    if (g_hook) {
        PanicHook hook = g_hook;
        g_hook = nullptr;
        hook(message); // Expected not to return; fall through if it does.
    }
    if (g_panicking) // A panic while panicking: do not recurse into the console again.
        arch::poweroff(false);
    g_panicking = true;
    console_panic();
    krecord("PANIC %s", message);
    arch::poweroff(false);
}

} // namespace toll
