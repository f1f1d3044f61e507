// The memory fault injector behind fail.alloc= (see failpoint.h).
#include "kernel/vm/failpoint.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "kernel/vm/arch.h"

namespace toll::vm {
namespace {

TOLL_PARAM(param_fail_alloc, "fail.alloc",
           "fault injection: make every Nth page or heap allocation for a program fail");
TOLL_PARAM(param_fail_seed, "fail.seed",
           "with fail.alloc=N: fail each allocation with probability 1/N, seeded");
TOLL_COUNTER(g_injected, "vm.fail.injected");
TOLL_COUNTER(g_candidates, "vm.fail.candidates");

bool g_armed;       // booted with fail.alloc=: run-time changes allowed
uint32_t g_every;   // 0: no injection
uint32_t g_random;  // xorshift32 state; 0: every Nth instead of at random
uint32_t g_counted; // candidates since the last change

uint32_t next_random()
{
    g_random ^= g_random << 13;
    g_random ^= g_random >> 17;
    g_random ^= g_random << 5;
    return g_random;
}

} // namespace

bool fail_alloc_now()
{
    // A user address space is active while a program runs or the kernel
    // works for it (and not while an exiting process frees its memory).
    if (g_every == 0 || !pmap_current())
        return false;
    g_candidates.add();
    bool fail = g_random ? next_random() % g_every == 0 : ++g_counted % g_every == 0;
    if (fail)
        g_injected.add();
    return fail;
}

void fail_alloc_init()
{
    g_armed = param_present("fail.alloc");
    if (g_armed)
        fail_alloc_set(static_cast<uint32_t>(param_get_ulong("fail.alloc", 0)),
                       static_cast<uint32_t>(param_get_ulong("fail.seed", 0)));
}

Errno fail_alloc_set(uint32_t every, uint32_t seed)
{
    if (!g_armed)
        return k_eperm;
    g_every = every;
    g_random = seed;
    g_counted = 0;
    return k_ok;
}

} // namespace toll::vm
