// The add to a 64-bit event counter (kern/counters.h), inline in the port's
// include/machine/counter_add.h:
//   void counter_add(uint64_t* word, uint64_t n);  adds @p n to *@p word so
//   that no other CPU's add, and no interrupt's, is lost (an atomic add, or
//   adds whose carries cannot be undone by another CPU's)
#pragma once
#include <stdint.h>
#ifdef TOLL_HOST_TEST
namespace toll::arch {
inline void counter_add(uint64_t* word, uint64_t n) // the host's own atomic
{
    __atomic_fetch_add(word, n, __ATOMIC_RELAXED);
}
} // namespace toll::arch
#else
#include "machine/counter_add.h"
#endif
