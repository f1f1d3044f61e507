// Event counters: named 64-bit counts of the things that cost cycles on real
// hardware (CR3 loads, TLB flushes, traps, FPU saves, ...). Code that pays a
// toll bumps its counter at the place it pays.
//
// On several CPUs two of them may bump one counter at once, and an
// interrupt may bump it between a thread's load and store on one: a plain
// `value += n` (a load, an add, a store) would lose one of the two. Every
// update is the port's counter_add instead (machine/counter_add.h): two
// locked adds on i386, one atomic add on arm64. The hottest counts, bumped
// on every trap or switch, are each CPU's own instead (TOLL_CPU_COUNTER,
// summed when read), which needs no atomic at all.
#pragma once
#include "kernel/arch/counter_add.h"
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
    /// The events counted since boot (for a gauge: the amount it holds now).
    /// Aligned to its size: i386 aligns a uint64_t member to 4 bytes only,
    /// and LOCK CMPXCHG8B across a cache line would be one bus lock each.
    alignas(8) uint64_t value;
    /// For a gauge computed when read: the function that computes it; nullptr
    /// for everything else.
    uint64_t (*compute)() = nullptr;

    /// Counts @p n more events, atomically (no concurrent add is lost).
    void add(uint64_t n = 1) { arch::counter_add(&value, n); }

    /// What the counter says now: its count, or a computed gauge's amount.
    /// (One atomic load: i386 reads the two halves of a 64-bit word apart,
    /// and another CPU's add between them would show a value never held.)
    uint64_t read() const
    {
        return compute ? compute() : __atomic_load_n(&value, __ATOMIC_RELAXED);
    }
};

/// A gauge: a present amount (page tables in use, pages free) or a setting,
/// not a count of events. It sits in the counters' table, so COUNTER records
/// and counter_get report it like any counter, but it moves both ways, only
/// through set(), raise() and lower(). Where the amount can be derived from
/// the data structures, a gauge computes it when read instead
/// (TOLL_GAUGE_COMPUTED, as FreeBSD's sysctl handlers compute
/// vm.reserv.fullpop), so that no bookkeeping can drift from the truth.
struct Gauge : Counter {
    /// Says the level is now @p amount (a size just measured).
    void set(uint64_t amount) { __atomic_store_n(&value, amount, __ATOMIC_RELAXED); }
    /// The level went up by @p n (a page reserved, an object allocated).
    void raise(uint64_t n = 1) { arch::counter_add(&value, n); }
    /// The level went down by @p n; it must not fall below zero.
    void lower(uint64_t n = 1) { arch::counter_add(&value, -n); } // mod 2^64, as the sum wraps
    /// Deleted: a gauge counts no events, so Counter::add would mislead.
    void add(uint64_t) = delete;
};
static_assert(sizeof(Gauge) == sizeof(Counter), "gauges share the counters' table");

/// Defines a counter @p ident with the sysctl-style @p name.
#define TOLL_COUNTER(ident, name)                                                                  \
    TOLL_IN_SECTION(toll_counters) constinit ::toll::Counter ident                                 \
    {                                                                                              \
        name, 0                                                                                    \
    }

/// Defines a gauge @p ident, kept by set(), raise() and lower().
#define TOLL_GAUGE(ident, name)                                                                    \
    TOLL_IN_SECTION(toll_counters) constinit ::toll::Gauge ident                                   \
    {                                                                                              \
        {                                                                                          \
            name, 0                                                                                \
        }                                                                                          \
    }

/// Defines a gauge @p ident whose amount @p compute (uint64_t (*)()) works
/// out each time it is read.
#define TOLL_GAUGE_COMPUTED(ident, name, compute)                                                  \
    TOLL_IN_SECTION(toll_counters) constinit ::toll::Gauge ident                                   \
    {                                                                                              \
        {                                                                                          \
            name, 0, compute                                                                       \
        }                                                                                          \
    }

/// Defines a counter @p ident named @p name whose value is the CpuEvent
/// @p event summed over every CPU when read (kernel/kern/cpu.h, which the
/// defining file includes); code counts it with cpu_count(event), never add().
#define TOLL_CPU_COUNTER(ident, name, event)                                                       \
    TOLL_IN_SECTION(toll_counters) constinit ::toll::Counter ident                                 \
    {                                                                                              \
        name, 0, ::toll::cpu_event_sum<event>                                                      \
    }

/// Finds a counter by its name; nullptr if none has it.
Counter* counter_find(const char* name);

/// Calls @p visit for every counter, in link order.
void counters_for_each(void (*visit)(Counter& counter, void* context), void* context);

/// Prints every counter that is non-zero as a COUNTER record.
void counters_dump();

} // namespace toll
