// The architecture's fault-recovering user-memory primitives. The range
// checks are done by the caller (kernel/sys/uaccess.cpp); these only survive
// faults inside the range. A fault the VM refuses ends the copy with the
// VM's reason: the port's fixup puts it in the copy routine's return
// register as it sends it to its fault exit, and the primitive returns it,
// so nothing is left behind for a later copy to find.
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
/// C++, the same on every port: @p n is the length copied, -errno for a
/// fault (the Errno the fixup left in the return register) or
/// k_string_no_nul when no NUL came within the size. Turned into
/// copy_string_from_user's answer.
constexpr long k_string_no_nul = -2; // a fault gives -k_efault or -k_enomem, never -2
inline Result<size_t> copy_string_result(long n)
{
    if (n == k_string_no_nul)
        return k_enametoolong;
    if (n < 0)
        return static_cast<Errno>(-n);
    return static_cast<size_t>(n);
}

} // namespace toll::arch
