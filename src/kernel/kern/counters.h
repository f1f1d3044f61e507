// Event counters: named 64-bit counts of the things that cost cycles on real
// hardware (CR3 loads, TLB flushes, traps, FPU saves, ...). Code that pays a
// toll bumps its counter at the place it pays.
#pragma once
#include "kernel/kern/section.h"
#include <stddef.h>
#include <stdint.h>

namespace toll {

/// One event counter, registered by TOLL_COUNTER in a linker-built table.
/// Named in FreeBSD sysctl style ("cpu.cr3_loads").
struct Counter {
    /// The counter's name, unique, as COUNTER records and counter_find()
    /// spell it.
    const char* name;
    /// The events counted since boot; a few counters are gauges instead and
    /// hold a present amount (vm.pmap.page_tables) or a setting
    /// (vm.copy.fast_max).
    uint64_t value;
    /// For a per-CPU counter (TOLL_CPU_COUNTER): 1 + the CpuEvent it sums,
    /// which counter_find(), counters_for_each() and counters_dump() copy
    /// into value before anyone reads it; 0 for an ordinary counter.
    unsigned per_cpu_event = 0;

    /// Counts @p n more events.
    void add(uint64_t n = 1) { value += n; }
};

/// Defines a counter @p ident with the sysctl-style @p name.
#define TOLL_COUNTER(ident, name)                                                                  \
    TOLL_IN_SECTION(toll_counters) constinit ::toll::Counter ident                                 \
    {                                                                                              \
        name, 0                                                                                    \
    }

/// Defines a counter @p ident named @p name whose value is the CpuEvent
/// @p event summed over every CPU (kernel/kern/cpu.h); code counts it with
/// cpu_count(event), never with add().
#define TOLL_CPU_COUNTER(ident, name, event)                                                       \
    TOLL_IN_SECTION(toll_counters) constinit ::toll::Counter ident                                 \
    {                                                                                              \
        name, 0, 1 + static_cast<unsigned>(event)                                                  \
    }

/// Finds a counter by its name; nullptr if none has it.
Counter* counter_find(const char* name);

/// Calls @p visit for every counter, in link order.
void counters_for_each(void (*visit)(Counter& counter, void* context), void* context);

/// Prints every counter that is non-zero as a COUNTER record.
void counters_dump();

} // namespace toll
