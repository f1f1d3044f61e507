// Backtraces for the kernel's own reports (the spinlock watchdog).
#pragma once
#include <stdint.h>

namespace toll {

/// The return addresses of the calls that led here, innermost first (the
/// caller of backtrace() first), at most @p max of them, found through the
/// frame pointers the kernel keeps (-fno-omit-frame-pointer). Returns how
/// many it found; the walk stops at a frame that does not look like one.
unsigned backtrace(uintptr_t* out, unsigned max);

} // namespace toll
