// arm64 user-memory access (kernel/kern/arch_uaccess.h). arm64 user space
// needs the MMU: not implemented yet, so every copy fails (EFAULT) rather
// than touching physical memory a user pointer happens to name.
#include "kernel/kern/arch_uaccess.h"

namespace toll::arch {

bool copy_from_user(void*, uintptr_t, size_t)
{
    return false;
}

bool copy_to_user(uintptr_t, const void*, size_t)
{
    return false;
}

long copy_string_from_user(char*, uintptr_t, size_t)
{
    return -1;
}

} // namespace toll::arch
