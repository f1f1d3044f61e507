// Placement new, for constructing an object in memory already held (a
// kmalloc'ed block, a Result's storage). The freestanding kernel has no
// <new>; the host tests take the standard library's.
#pragma once

#ifdef TOLL_HOST_TEST
#include <new>
#else
inline void* operator new(decltype(sizeof 0), void* where) noexcept
{
    return where;
}
#endif
