// The scheduler's policies, CPU affinity and the per-CPU queues as the rest
// of the kernel sees them (sched.cpp); thread.h has the calls every thread
// makes (sleep, wakeup, yield).
#pragma once
#include "kernel/kern/errno.h"
#include <stdint.h>

namespace toll::proc {

struct Thread;

/// The policy chosen at boot with sched=: round robin (one FIFO per CPU,
/// one-tick quanta) or a multi-level feedback queue (three levels with
/// quanta of 1, 2 and 4 ticks, a drop at each used-up allotment, a boost of
/// every thread to the top every 50 ticks, and a wakeup at a higher level
/// preempting the CPU it lands on).
enum class Policy : unsigned { rr, mlfq };

/// The policy in force.
Policy sched_policy();

/// Its name as sched= spells it.
const char* sched_policy_name();

/// True when smp.user=1: user threads may run on every CPU, not only the
/// boot CPU.
bool sched_user_smp();

/// The online CPUs, bit n for CPU n.
uint32_t sched_online_mask();

/// The CPUs @p t could ever be given: the online ones, and for a user
/// thread the boot CPU alone unless smp.user=1 (what Linux calls the
/// thread's cpuset).
uint32_t sched_allowed_cpus(const Thread* t);

/// sched_getaffinity: the CPUs @p t may run on.
uint32_t sched_get_affinity(const Thread* t);

/// sched_setaffinity: restricts @p t to @p mask (bit n: CPU n). k_einval
/// when the mask names none of sched_allowed_cpus(t). A thread queued or
/// running on a CPU the mask leaves out moves to one it names; the calling
/// thread moves before this returns.
Errno sched_set_affinity(Thread* t, uint32_t mask);

/// The CPU @p t runs on, or last ran on, or is queued on.
unsigned sched_cpu_of(const Thread* t);

/// The CPU the caller runs on (as of the call).
unsigned sched_this_cpu();

/// thread_create_kernel, restricted to the CPUs of @p affinity from the
/// start (it is queued on one of them).
Thread* thread_create_kernel_on(const char* name, void (*fn)(void*), void* arg, bool preemptible,
                                uint32_t affinity);

} // namespace toll::proc

/// Called right after every context switch on the new thread's stack, and
/// by the ports first thing in a new thread (kernel or user) before it runs
/// anything else: finishes the switch (sched.cpp).
extern "C" void sched_switch_tail();
