// Kernel heap. Small objects come from slabs: pages cut into blocks of one
// size class, each page with a header counting its blocks in use, so that a
// page whose last block is freed goes back to the page allocator. Large
// objects are whole runs of pages with a header naming their order.
//
// The slabs' lists and counts are the heap lock's ("vm.heap", a spinlock:
// interrupt handlers may allocate); a slab's page comes from the page
// allocator under it (vm.heap, then vm.phys). A large object needs only
// the page allocator's lock.
#include "kernel/vm/kmalloc.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/spinlock.h"
#include "kernel/vm/arch.h"
#include "kernel/vm/failpoint.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_kmalloc_calls, "vm.kmalloc.calls");
TOLL_COUNTER(g_kmalloc_failures, "vm.kmalloc.failures");
TOLL_COUNTER(g_slab_pages_freed, "vm.kmalloc.slab_frees");
/// Pages the heap holds now (slabs and large blocks).
TOLL_GAUGE(g_heap_pages, "vm.kmalloc.pages");
/// Blocks kmalloc has handed out and kfree has not taken back, small and
/// large: a leak test compares it before and after a workload.
TOLL_GAUGE(g_heap_objects, "vm.kmalloc.objects");

constexpr uint32_t k_slab_magic = 0x736c6162;  // "slab"
constexpr uint32_t k_large_magic = 0x6c617267; // "larg"
constexpr uintptr_t k_page_mask = k_page_size - 1;
constexpr size_t k_align = 16;

/// Block sizes. The larger ones are cut so that a page holds a whole number
/// of blocks after its header (4, 2 and 1 block): no page is half wasted.
constexpr size_t k_class_sizes[] = {16, 32, 64, 128, 256, 496, 1008, 2016, 4032};
constexpr size_t k_classes = sizeof k_class_sizes / sizeof k_class_sizes[0];

struct FreeBlock {
    FreeBlock* next;
};

/// The first bytes of every slab page.
struct Slab {
    uint32_t magic;
    uint16_t size_class;
    uint16_t in_use;   ///< blocks handed out
    uint16_t capacity; ///< blocks the page holds
    uint16_t carved;   ///< blocks ever handed out; those above are untouched
    FreeBlock* free;   ///< freed blocks of this page
    Slab* next;        ///< the class's pages with a free block
    Slab* prev;
};
constexpr size_t k_slab_header = (sizeof(Slab) + k_align - 1) & ~(k_align - 1);
static_assert(k_slab_header <= 64 && k_slab_header + k_class_sizes[k_classes - 1] <= k_page_size);

/// The first bytes of a large block.
struct Large {
    uint32_t magic;
    uint32_t order;
};
constexpr size_t k_large_header = k_align;

/// Guards the slabs: g_partial, g_empty_pages and every Slab header.
Spinlock g_heap_lock("vm.heap");

/// Per class: the pages that still have a free block.
Slab* g_partial[k_classes];

/// Empty slab pages kept back (at most one per class, see kfree).
size_t g_empty_pages;

uint8_t* block_at(Slab* s, unsigned i)
{
    return reinterpret_cast<uint8_t*>(s) + k_slab_header + i * k_class_sizes[s->size_class];
}

void link_partial(Slab* s)
{
    Slab*& head = g_partial[s->size_class];
    s->prev = nullptr;
    s->next = head;
    if (head)
        head->prev = s;
    head = s;
}

void unlink_partial(Slab* s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        g_partial[s->size_class] = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = nullptr;
}

void* alloc_large(size_t size, bool zero)
{
    size_t need = size + k_large_header;
    if (need < size)
        return nullptr;
    unsigned order = PhysAllocator::order_for(need);
    Result<PhysAddr> pa = phys_allocator().alloc(order);
    if (!pa)
        return nullptr;
    {
        SpinGuard g(g_heap_lock); // the gauges are plain words: one writer at a time
        g_heap_pages.raise(size_t(1) << order);
        g_heap_objects.raise();
    }
    auto* h = static_cast<Large*>(phys_to_virt(pa.value()));
    if (zero) // the bytes asked for; the rest of the last 2^order block is never handed out
        memset(h, 0, k_large_header + size);
    *h = {k_large_magic, order};
    return reinterpret_cast<uint8_t*>(h) + k_large_header;
}

Slab* new_slab(unsigned c)
{
    Result<PhysAddr> pa = phys_allocator().alloc(0);
    if (!pa)
        return nullptr;
    g_heap_pages.raise();
    auto* s = static_cast<Slab*>(phys_to_virt(pa.value()));
    *s = Slab{k_slab_magic,
              static_cast<uint16_t>(c),
              0,
              static_cast<uint16_t>((k_page_size - k_slab_header) / k_class_sizes[c]),
              0,
              nullptr,
              nullptr,
              nullptr};
    link_partial(s);
    ++g_empty_pages; // empty until kmalloc takes its first block
    return s;
}

} // namespace

size_t kmalloc_empty_pages()
{
    return g_empty_pages;
}

void* alloc_page()
{
    Result<PhysAddr> pa = phys_allocator().alloc(0);
    if (!pa)
        return nullptr;
    void* p = phys_to_virt(pa.value());
    memset(p, 0, k_page_size);
    return p;
}

void free_page(void* page)
{
    phys_allocator().free(virt_to_phys(page), 0);
}

void* alloc_pages_unzeroed(unsigned order)
{
    if (fail_alloc_now())
        return nullptr;
    Result<PhysAddr> pa = phys_allocator().alloc(order);
    return pa ? phys_to_virt(pa.value()) : nullptr;
}

void free_pages(void* pages, unsigned order)
{
    phys_allocator().free(virt_to_phys(pages), order);
}

namespace {
void* allocate(size_t size, bool zero)
{
    g_kmalloc_calls.add();
    if (fail_alloc_now()) {
        g_kmalloc_failures.add();
        return nullptr;
    }
    unsigned c = 0;
    while (c < k_classes && k_class_sizes[c] < size)
        ++c;
    if (c == k_classes) {
        void* p = alloc_large(size, zero);
        if (!p)
            g_kmalloc_failures.add();
        return p;
    }
    uint8_t* block;
    {
        SpinGuard g(g_heap_lock);
        Slab* s = g_partial[c];
        if (!s && !(s = new_slab(c))) {
            g_kmalloc_failures.add();
            return nullptr;
        }
        if (s->free) {
            block = reinterpret_cast<uint8_t*>(s->free);
            s->free = s->free->next;
        } else {
            block = block_at(s, s->carved++);
        }
        if (s->in_use == 0)
            --g_empty_pages; // the class's kept empty page is in use again
        if (++s->in_use == s->capacity)
            unlink_partial(s);
        g_heap_objects.raise();
    }
    if (zero)
        memset(block, 0, k_class_sizes[c]); // ours alone now: no lock needed
    return block;
}
} // namespace

void* kmalloc(size_t size)
{
    return allocate(size, true);
}

void* kmalloc_unzeroed(size_t size)
{
    return allocate(size, false);
}

void kfree(void* p)
{
    if (!p)
        return;
    auto address = reinterpret_cast<uintptr_t>(p);
    if ((address & k_page_mask) == k_large_header &&
        reinterpret_cast<Large*>(address - k_large_header)->magic == k_large_magic) {
        auto* h = reinterpret_cast<Large*>(address - k_large_header);
        unsigned order = h->order;
        h->magic = 0;
        {
            SpinGuard g(g_heap_lock);
            g_heap_pages.lower(size_t(1) << order);
            g_heap_objects.lower();
        }
        phys_allocator().free(virt_to_phys(h), order);
        return;
    }
    auto* s = reinterpret_cast<Slab*>(address & ~k_page_mask);
    SpinGuard g(g_heap_lock);
    TOLL_ASSERT(s->magic == k_slab_magic && s->size_class < k_classes);
    size_t offset = address - reinterpret_cast<uintptr_t>(s) - k_slab_header;
    TOLL_ASSERT(offset % k_class_sizes[s->size_class] == 0 && s->in_use > 0 &&
                "kfree of a pointer kmalloc did not return");
    g_heap_objects.lower();
    if (s->in_use-- == s->capacity)
        link_partial(s); // it was full: it has a free block again
    if (s->in_use == 0 && !s->next && g_partial[s->size_class] == s) {
        // The class's only page with room: keep it, empty, so that a
        // steady alloc/free of one object does not cost a page each time.
        ++g_empty_pages;
    } else if (s->in_use == 0) {
        // The page's last block: the page goes back to the page allocator.
        unlink_partial(s);
        s->magic = 0;
        g_heap_pages.lower();
        g_slab_pages_freed.add();
        phys_allocator().free(virt_to_phys(s), 0);
        return;
    }
    auto* b = reinterpret_cast<FreeBlock*>(p);
    b->next = s->free;
    s->free = b;
}

void kmalloc_reset_for_tests()
{
    for (Slab*& head : g_partial)
        head = nullptr;
    g_empty_pages = 0;
    g_heap_pages.set(0);
    g_heap_objects.set(0);
}

} // namespace toll::vm
