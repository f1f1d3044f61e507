// The architecture's fault-recovering user-memory primitives. The range
// checks are done by the caller (kernel/sys/uaccess.cpp); these only survive
// faults inside the range. The two copies answer bool, their one failure
// being a fault: copyin/copyout turn it into k_efault, and keep the path
// that every system call takes as short as it was.
#pragma once
#include "kernel/kern/result.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// Copies from user memory; false if a page fault could not be satisfied.
bool copy_from_user(void* to, uintptr_t from, size_t length);

/// Copies to user memory; false if a page fault could not be satisfied.
bool copy_to_user(uintptr_t to, const void* from, size_t length);

/// Copies a NUL-terminated string of at most @p size bytes. Returns its
/// length (without the NUL); k_efault on a fault; k_enametoolong if no NUL
/// was found within @p size bytes.
Result<size_t> copy_string_from_user(char* to, uintptr_t from, size_t size);

} // namespace toll::arch
