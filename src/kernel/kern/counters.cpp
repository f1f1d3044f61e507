// The counter registry: lookup by name and the COUNTER dump at the end of a run.
#include "kernel/kern/counters.h"
#include "kernel/kern/console.h"
#include "lib/string.h"

TOLL_SECTION_BOUNDS(toll::Counter, toll_counters);

namespace toll {

Counter* counter_find(const char* name)
{
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        if (strcmp(c->name, name) == 0)
            return c;
    return nullptr;
}

void counters_for_each(void (*visit)(Counter& counter, void* context), void* context)
{
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        visit(*c, context);
}

void counters_dump()
{
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        if (uint64_t value = c->read())
            krecord("COUNTER %s %llu", c->name, (unsigned long long)value);
}

} // namespace toll
