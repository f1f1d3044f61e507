// The end of the road for a broken invariant: one PANIC record, then power off.
#include "kernel/kern/panic.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
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
    // The other CPUs stop where they are, so that nothing they print or
    // change comes after the PANIC record. (Before the boot CPU's Cpu is
    // set up only one CPU runs.)
    if (unsigned online = cpus_online(); online > 1) {
        unsigned stopped = ipi_stop_others();
        console_panic(); // a stopped CPU may hold the console's lock
        kprintf("panic: cpu%u stopped %u of %u other CPUs\n", this_cpu().id, stopped, online - 1);
    }
    console_panic();
    krecord("PANIC %s", message);
    arch::poweroff(false);
}

} // namespace toll
