// The counting profiler (profile.h): a table of kernel instruction addresses
// and how often each executed, filled by the arch's step trap while counting
// is on, printed when it stops.
#include "kernel/kern/profile.h"
#include "kernel/kern/console.h"
#include "kernel/kern/errno.h"
#include "kernel/kern/param.h"

namespace toll {
namespace {

TOLL_PARAM(g_param_profile, "profile",
           "count: count every kernel instruction of a profiled span (tools/bench --profile)");

// Open addressing over the addresses seen: a path of a few hundred thousand
// instructions runs a few thousand distinct ones.
constexpr unsigned k_slots = 16384;
static_assert((k_slots & (k_slots - 1)) == 0, "the probe wraps with a mask");

struct Slot {
    uintptr_t pc; // 0: empty
    uint32_t count;
};

Slot g_slots[k_slots];

// The calls seen, by (callee, return address): who calls memset, and how often.
constexpr unsigned k_call_slots = 4096;
struct CallSlot {
    uintptr_t callee; // 0: empty
    uintptr_t return_address;
    uint32_t count;
};
CallSlot g_calls[k_call_slots];
uint32_t g_dropped; // counts that found the table full
int g_booted = -1;  // -1: not read yet

} // namespace

bool g_profile_counting;

bool profile_booted()
{
    if (g_booted < 0) {
        char value[8];
        g_booted = param_get("profile", value, sizeof value) && value[0] == 'c';
    }
    return g_booted;
}

void profile_count(uintptr_t pc)
{
    unsigned i = static_cast<unsigned>(pc * 2654435761u) & (k_slots - 1);
    for (unsigned probes = 0; probes < k_slots; ++probes, i = (i + 1) & (k_slots - 1)) {
        uintptr_t seen = __atomic_load_n(&g_slots[i].pc, __ATOMIC_RELAXED);
        if (seen == 0) {
            uintptr_t expected = 0;
            if (__atomic_compare_exchange_n(&g_slots[i].pc, &expected, pc, false, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                seen = pc;
            else
                seen = expected;
        }
        if (seen == pc) {
            __atomic_fetch_add(&g_slots[i].count, 1u, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_fetch_add(&g_dropped, 1u, __ATOMIC_RELAXED);
}

void profile_count_call(uintptr_t callee, uintptr_t return_address)
{
    unsigned i =
        static_cast<unsigned>((callee ^ (return_address << 7)) * 2654435761u) & (k_call_slots - 1);
    for (unsigned probes = 0; probes < k_call_slots; ++probes, i = (i + 1) & (k_call_slots - 1)) {
        CallSlot& c = g_calls[i];
        if (c.callee == 0) {
            // Stepping is per CPU but the table is shared: the first to
            // claim a slot names it.
            uintptr_t expected = 0;
            if (!__atomic_compare_exchange_n(&c.callee, &expected, callee, false, __ATOMIC_RELAXED,
                                             __ATOMIC_RELAXED) &&
                expected != callee)
                continue;
            if (expected == 0)
                c.return_address = return_address;
        }
        if (c.callee == callee && c.return_address == return_address) {
            __atomic_fetch_add(&c.count, 1u, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_fetch_add(&g_dropped, 1u, __ATOMIC_RELAXED);
}

long profile_control(bool on)
{
    if (!profile_booted() || !arch::profile_can_step())
        return -k_enodev;

    if (on) {
        __atomic_store_n(&g_profile_counting, false, __ATOMIC_RELAXED);
        for (Slot& s : g_slots)
            s = Slot{0, 0};
        for (CallSlot& c : g_calls)
            c = CallSlot{0, 0, 0};
        g_dropped = 0;
        __atomic_store_n(&g_profile_counting, true, __ATOMIC_RELAXED);
        return 0;
    }
    __atomic_store_n(&g_profile_counting, false, __ATOMIC_RELAXED);
    arch::profile_step_stop();
    uint64_t total = g_dropped;
    for (const Slot& s : g_slots) {
        if (s.pc) {
            kprintf("PROFILE %lx %u\n", static_cast<unsigned long>(s.pc), s.count);
            total += s.count;
        }
    }
    for (const CallSlot& c : g_calls)
        if (c.callee)
            kprintf("PROFILE call %lx %lx %u\n", static_cast<unsigned long>(c.callee),
                    static_cast<unsigned long>(c.return_address), c.count);
    kprintf("PROFILE dropped %u\nPROFILE total %llu\n", g_dropped,
            static_cast<unsigned long long>(total));
    return 0;
}

} // namespace toll
