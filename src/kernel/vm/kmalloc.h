// The kernel heap: small objects from size classes carved out of slab pages
// (given back to the page allocator when empty), large ones as page runs.
#pragma once
#include "kernel/kern/placement_new.h"
#include <stddef.h>

namespace toll::vm {

/// Allocates @p size bytes of zeroed kernel memory, aligned to 16 bytes.
/// Returns nullptr when memory is short (or fail.alloc= injected a failure).
[[nodiscard]] void* kmalloc(size_t size);

/// kmalloc without the zeroing, for a big object that is written before it
/// is read (exec's argument buffers: zeroing 64 KB would cost more than the
/// rest of exec).
[[nodiscard]] void* kmalloc_unzeroed(size_t size);

/// Frees memory from kmalloc. nullptr is ignored.
void kfree(void* p);

/// Empty slab pages the heap keeps back: at most one per size class, the
/// class's last page with room, so that allocating and freeing one object
/// over and over does not take and give back a page each time.
size_t kmalloc_empty_pages();

/// For the host tests: forget every slab (the test's allocator, which held
/// them, is gone), so that the next test starts from an empty heap.
void kmalloc_reset_for_tests();

/// Allocates and zeroes one physical page, returning its kernel address.
[[nodiscard]] void* alloc_page();

/// Frees a page from alloc_page().
void free_page(void* page);

/// Allocates 2^@p order physical pages, contiguous, left as they were (not
/// zeroed: for memory whose every byte is written before it is read, such as
/// a kernel stack), returning their kernel address; nullptr when memory is
/// short (or the fault injector says so, as for kmalloc).
[[nodiscard]] void* alloc_pages_unzeroed(unsigned order);

/// Frees pages from alloc_pages_unzeroed(@p order).
void free_pages(void* pages, unsigned order);

} // namespace toll::vm

namespace toll {
/// Allocates and constructs a T on the kernel heap; nullptr when memory is short.
template <typename T, typename... Args>
T* make(Args&&... args)
{
    void* p = vm::kmalloc(sizeof(T));
    return p ? new (p) T(static_cast<Args&&>(args)...) : nullptr;
}

/// make() on memory that is not zeroed first: the members without an
/// initializer hold whatever was there (kmalloc_unzeroed).
template <typename T, typename... Args>
T* make_unzeroed(Args&&... args)
{
    void* p = vm::kmalloc_unzeroed(sizeof(T));
    if (!p)
        return nullptr;
    // Default-initialized (`new T`, not `new T()`, which would zero it all).
    if constexpr (sizeof...(Args) == 0)
        return new (p) T;
    else
        return new (p) T(static_cast<Args&&>(args)...);
}

/// Destroys and frees an object from make() or make_unzeroed().
template <typename T>
void destroy(T* p)
{
    if (p) {
        p->~T();
        vm::kfree(p);
    }
}
} // namespace toll
