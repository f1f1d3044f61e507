// The isolation self-check of the i386 address-space layouts (isolation.cpp).
#pragma once
#include "kernel/arch/pmap.h"
#include "kernel/sys/syscalls.h"

namespace toll::i386 {

/// What check_user_directory found.
struct DirectoryCheck {
    unsigned user_tables; ///< user page tables present
    unsigned violations;  ///< entries user mode must not see (the first is printed)
};

/// Walks the directory user mode runs on for @p pmap and counts the entries
/// that break the layout's promise: anything but user page tables and the
/// trampoline under 3/1-pti and 4/4; a kernel quarter unlike the kernel's
/// under 3/1.
DirectoryCheck check_user_directory(arch::Pmap* pmap);

} // namespace toll::i386

namespace toll::sys {

/// Toll's call TOLL_SYS_check_isolation (i386 only): check_isolation(unsigned*
/// directories) walks the user directory of every live process, returns the
/// number of bad entries found and stores how many directories it checked.
long sys_check_isolation(const SyscallArgs& a);

} // namespace toll::sys
