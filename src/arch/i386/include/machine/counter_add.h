// i386's add to a 64-bit event counter, inline (counters are bumped on the
// hottest paths). A LOCK CMPXCHG8B loop would make the add one atomic step
// but costs a load of both halves, the sum, the exchange and a branch: some
// eight instructions where the counters' budget is two. Two locked adds do
// as well for a count: LOCK ADD of the low half sets CF from this CPU's own
// sum, and the LOCK ADC that follows puts that carry in the high half, so
// however the two CPUs' pairs interleave, every add arrives whole (Intel
// SDM Vol. 3, 9.1.2.2: a LOCK prefix makes one read-modify-write atomic).
// Only a reader between a pair can see the low half's wrap without its
// carry, once in 2^32 adds.
#pragma once
#include <stdint.h>

namespace toll::arch {

inline void counter_add(uint64_t* word, uint64_t n)
{
    auto* halves = reinterpret_cast<uint32_t*>(word);
    asm volatile("lock addl %2, %0\n\t"
                 "lock adcl %3, %1"
                 : "+m"(halves[0]), "+m"(halves[1])
                 : "ri"(static_cast<uint32_t>(n)), "ri"(static_cast<uint32_t>(n >> 32))
                 : "cc", "memory");
}

} // namespace toll::arch
