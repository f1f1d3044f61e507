// The counter registry: lookup by name and the COUNTER dump at the end of a run.
#include "kernel/kern/counters.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "lib/string.h"

TOLL_SECTION_BOUNDS(toll::Counter, toll_counters);

namespace toll {
namespace {

// Brings every per-CPU counter's value up to its sum over the CPUs.
void refresh()
{
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        if (c->per_cpu_event)
            c->value = cpu_counter_sum(static_cast<CpuEvent>(c->per_cpu_event - 1));
}

} // namespace

Counter* counter_find(const char* name)
{
    refresh();
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        if (strcmp(c->name, name) == 0)
            return c;
    return nullptr;
}

void counters_for_each(void (*visit)(Counter& counter, void* context), void* context)
{
    refresh();
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        visit(*c, context);
}

void counters_dump()
{
    refresh();
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        if (c->value)
            krecord("COUNTER %s %llu", c->name, (unsigned long long)c->value);
}

} // namespace toll
