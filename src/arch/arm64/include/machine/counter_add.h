// arm64's add to a 64-bit event counter, inline (counters are bumped on the
// hottest paths): one atomic read-modify-write, an LDXR/ADD/STXR loop (or
// LDADD where the compiler may assume the LSE atomics of Armv8.1), relaxed,
// since a count orders nothing else.
#pragma once
#include <stdint.h>

namespace toll::arch {

inline void counter_add(uint64_t* word, uint64_t n)
{
    __atomic_fetch_add(word, n, __ATOMIC_RELAXED);
}

} // namespace toll::arch
