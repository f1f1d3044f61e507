// Kernel heap. Every block starts with an 8-byte header naming its size class
// (or its page order, for large blocks), so kfree needs no size argument.
#include "kernel/vm/kmalloc.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_kmalloc_calls, "vm.kmalloc.calls");

constexpr unsigned k_min_shift = 5;  // 32-byte blocks, header included
constexpr unsigned k_max_shift = 11; // 2048-byte blocks; larger come from pages
constexpr unsigned k_classes = k_max_shift - k_min_shift + 1;
constexpr uint32_t k_magic = 0x6b6d616c; // "kmal"

struct Header {
    uint32_t magic;
    uint16_t large; ///< 1: whole pages of this order; 0: a size class
    uint16_t shift; ///< log2 of the block size, or the page order
};
static_assert(sizeof(Header) == 8);

struct FreeBlock {
    FreeBlock* next;
};
FreeBlock* g_free[k_classes];

unsigned order_for(size_t bytes)
{
    unsigned order = 0;
    while ((k_page_size << order) < bytes)
        ++order;
    return order;
}

} // namespace

void* alloc_page()
{
    PhysAddr pa = phys_allocator().alloc(0);
    if (pa == PhysAllocator::k_none)
        return nullptr;
    void* p = phys_to_virt(pa);
    memset(p, 0, k_page_size);
    return p;
}

void free_page(void* page)
{
    phys_allocator().free(virt_to_phys(page), 0);
}

void* kmalloc(size_t size)
{
    g_kmalloc_calls.add();
    size_t need = size + sizeof(Header);
    if (need > (1u << k_max_shift)) {
        // Large: whole pages; the header takes the first 8 bytes, so the object
        // is not page aligned. Objects needing a page alignment use alloc_page.
        unsigned order = order_for(need);
        PhysAddr pa = phys_allocator().alloc(order);
        if (pa == PhysAllocator::k_none)
            return nullptr;
        auto* h = static_cast<Header*>(phys_to_virt(pa));
        memset(h, 0, k_page_size << order);
        *h = {k_magic, 1, static_cast<uint16_t>(order)};
        return h + 1;
    }
    unsigned shift = k_min_shift;
    while ((1u << shift) < need)
        ++shift;
    unsigned c = shift - k_min_shift;
    if (!g_free[c]) {
        auto* page = static_cast<uint8_t*>(alloc_page());
        if (!page)
            return nullptr;
        for (size_t off = 0; off < k_page_size; off += 1u << shift) {
            auto* b = reinterpret_cast<FreeBlock*>(page + off);
            b->next = g_free[c];
            g_free[c] = b;
        }
    }
    FreeBlock* b = g_free[c];
    g_free[c] = b->next;
    auto* h = reinterpret_cast<Header*>(b);
    memset(h, 0, 1u << shift);
    *h = {k_magic, 0, static_cast<uint16_t>(shift)};
    return h + 1;
}

void kfree(void* p)
{
    if (!p)
        return;
    Header* h = static_cast<Header*>(p) - 1;
    TOLL_ASSERT(h->magic == k_magic);
    h->magic = 0;
    if (h->large) {
        phys_allocator().free(virt_to_phys(h), h->shift);
        return;
    }
    unsigned c = h->shift - k_min_shift;
    TOLL_ASSERT(c < k_classes);
    auto* b = reinterpret_cast<FreeBlock*>(h);
    b->next = g_free[c];
    g_free[c] = b;
}

} // namespace toll::vm
