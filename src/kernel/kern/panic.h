// panic() and kernel assertions: for broken kernel invariants only, never for
// anything a user program can cause.
#pragma once

namespace toll {

/// Prints "PANIC <message>" as a record and powers the machine off with failure.
[[noreturn]] void panic(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// Installs a hook that panic() calls instead of powering off; the ktests use
/// it to prove that an assertion fires. Pass nullptr to remove it.
using PanicHook = void (*)(const char* message);
void set_panic_hook(PanicHook hook);

} // namespace toll

/// Checks a kernel invariant; on failure panics naming the file, line and condition.
#define TOLL_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::toll::panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__);              \
    } while (0)
