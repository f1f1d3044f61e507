// Fault injection for memory: make chosen page and kernel-heap allocations
// fail, to prove that every caller copes (returns an error to the program,
// or kills it alone) and frees what it had taken.
#pragma once
#include "kernel/kern/errno.h"
#include <stdint.h>

namespace toll::vm {

/// Decides whether the allocation being made now must fail, and counts it in
/// vm.fail.injected when it does. Only allocations made while a user address
/// space is active (a program runs, or the kernel works for it) are
/// candidates: the kernel's own set-up at boot never fails. Called by the
/// page allocator and kmalloc.
[[nodiscard]] bool fail_alloc_now();

/// Reads the boot keys fail.alloc=N and fail.seed=S. With N > 0 every Nth
/// candidate allocation fails; with a seed as well, each fails with
/// probability 1/N instead, from a generator started at S. Called once at boot.
void fail_alloc_init();

/// Changes the injection at run time: @p every and @p seed as for the boot
/// keys (every = 0 stops it), the candidate count restarting at 0. Refused
/// with k_eperm unless the kernel was booted with fail.alloc= (any value), so
/// an ordinary kernel cannot be made to fail by a program.
Errno fail_alloc_set(uint32_t every, uint32_t seed);

} // namespace toll::vm
