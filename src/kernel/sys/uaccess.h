// copyin, copyout and copyinstr: the only way the kernel touches user memory.
// Every user pointer is range-checked against the top of user space, and a
// fault while copying becomes EFAULT (or ENOMEM, when the page could not be
// had) instead of a kernel panic.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::sys {

/// True if [address, address+length) lies wholly in user space (no wrap).
bool user_range_ok(uintptr_t address, size_t length);

/// Copies @p length bytes from user address @p from into the kernel.
/// Returns k_ok; k_efault for a bad address; k_enomem when a page of the
/// user range could not be made present for lack of memory.
Errno copyin(void* to, uintptr_t from, size_t length);

/// Copies @p length bytes from the kernel to user address @p to. Returns
/// k_ok; k_efault for a bad address; k_enomem when memory is short (a page
/// shared copy-on-write cannot be copied, a demand-zero page not filled).
Errno copyout(uintptr_t to, const void* from, size_t length);

/// A struct timespec as a program passes it: seconds and nanoseconds.
struct Timespec {
    int64_t seconds = 0;
    int64_t nanoseconds = 0;
};

/// Reads the struct timespec at user address @p user: two longs, the native
/// layout, or two 64-bit fields when @p time64 (i386's *_time64 calls; on
/// arm64 the two layouts are one). Returns it; k_efault or k_enomem as
/// copyin; k_einval for a negative time or nanoseconds outside [0, 1e9).
Result<Timespec> copyin_timespec(uintptr_t user, bool time64);

/// Writes @p ts to user address @p to in copyin_timespec's layout for
/// @p time64 (natively, the seconds cut to a long). k_ok, or as copyout.
Errno copyout_timespec(uintptr_t to, const Timespec& ts, bool time64);

/// Copies a NUL-terminated string of at most @p size bytes (NUL included)
/// from user space. Returns its length (without the NUL), k_efault,
/// k_enomem (as copyin), or k_enametoolong.
Result<size_t> copyinstr(char* to, uintptr_t from, size_t size);

} // namespace toll::sys
