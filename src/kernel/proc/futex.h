// Futexes: the kernel's half of the locks user programs build on an
// atomic word (musl's mutexes, condition variables, barriers, pthread_join).
// A thread sleeps on a word's address while the word holds what it expects,
// and another wakes it; the word itself is only ever read here.
#pragma once
#include "kernel/kern/result.h"
#include "kernel/vm/vmspace.h"
#include <stdint.h>

namespace toll::proc {

/// A futex wait's bitset that any wake matches (Linux's FUTEX_BITSET_MATCH_ANY).
constexpr uint32_t k_futex_match_any = 0xFFFFFFFF;

/// Sleeps at the word @p uaddr of address space @p space (the running
/// thread's) if it holds @p expected, until a futex_wake or futex_requeue
/// whose bitset shares a bit with @p bitset reaches it, or the tick
/// @p deadline (0: none). The value is read and the sleeper queued with
/// nothing in between that could wake it, so a wake after the user's
/// store cannot be missed. Returns 0 when woken; k_eagain when the word
/// held another value, k_efault when it cannot be read, k_etimedout at the
/// deadline, k_erestartsys when a signal came first.
Result<int> futex_wait(vm::VmSpace* space, uintptr_t uaddr, uint32_t expected, uint64_t deadline,
                       uint32_t bitset);

/// Wakes up to @p count threads waiting at @p uaddr in @p space whose bitset
/// meets @p bitset, oldest first. Returns how many it woke.
int futex_wake(vm::VmSpace* space, uintptr_t uaddr, int count, uint32_t bitset);

/// FUTEX_REQUEUE and FUTEX_CMP_REQUEUE: wakes up to @p wake waiters at
/// @p uaddr and moves up to @p requeue of the rest to wait at @p uaddr2
/// instead, without waking them (a condition variable's broadcast hands
/// its waiters to the mutex this way). With @p expected, the word at
/// @p uaddr must hold *expected (k_eagain otherwise; k_efault when it cannot
/// be read). Returns how many were woken or moved.
Result<int> futex_requeue(vm::VmSpace* space, uintptr_t uaddr, int wake, int requeue,
                          uintptr_t uaddr2, const uint32_t* expected);

} // namespace toll::proc
