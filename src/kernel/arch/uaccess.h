// The architecture's fault-recovering user-memory primitives. The range
// checks are done by the caller (kernel/sys/uaccess.cpp); these only survive
// faults inside the range. A fault the VM refuses ends the copy with the
// VM's reason: the port's fixup stores it in the running thread
// (proc::Thread::copy_fault) before the copy routine returns its failure,
// and the primitive returns it, so nothing is left behind for later.
#pragma once
#include "kernel/kern/result.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// Copies from user memory. k_ok; or, if a page fault could not be
/// satisfied, why: k_efault (a bad address) or k_enomem (no page for it).
Errno copy_from_user(void* to, uintptr_t from, size_t length);

/// Copies to user memory; answers as copy_from_user.
Errno copy_to_user(uintptr_t to, const void* from, size_t length);

/// Copies a NUL-terminated string of at most @p size bytes. Returns its
/// length (without the NUL); k_efault or k_enomem on a fault, as the copies
/// answer; k_enametoolong if no NUL was found within @p size bytes.
Result<size_t> copy_string_from_user(char* to, uintptr_t from, size_t size);

/// The string copy's register protocol between a port's copy_user.S and its
/// C++, the same on every port: @p n is the length copied, -1 for a fault
/// (why: @p fault, which the fixup stored) or -2 when no NUL came within the
/// size. Turned into copy_string_from_user's answer.
inline Result<size_t> copy_string_result(long n, Errno fault)
{
    if (n == -1)
        return fault;
    if (n < 0)
        return k_enametoolong;
    return static_cast<size_t>(n);
}

} // namespace toll::arch
