// The page cache's table on its own (the files lab, labs/lab-files): pages
// filed under a made-up file system, found again, and evicted by the clock
// when the table overflows, while a pinned page and a page in steady use
// stay. No disk is needed: the pages are filled by hand.
#include "kernel/fs/pagecache.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/ktest.h"
#include "lib/string.h"

namespace toll::fs {
namespace {

// The file system the tests file their pages under: any unique address.
const char g_owner = 0;
constexpr uint32_t k_ino = 7;

uint64_t count(const char* name)
{
    Counter* c = counter_find(name);
    return c ? c->read() : 0;
}

// Files page @p index, its first word the index; nothing holds it but the cache.
bool add(uint32_t index)
{
    Result<PhysAddr> pa = pc_alloc();
    if (!pa)
        return false;
    *static_cast<uint32_t*>(vm::phys_to_virt(pa.value())) = index;
    pc_insert(&g_owner, k_ino, index, pa.value());
    pc_unpin(pa.value());
    return true;
}

// Whether page @p index is cached with the right contents.
bool cached(uint32_t index)
{
    Optional<PhysAddr> pa = pc_find(&g_owner, k_ino, index);
    if (!pa)
        return false;
    bool right = *static_cast<uint32_t*>(vm::phys_to_virt(pa.value())) == index;
    pc_unpin(pa.value());
    return right;
}

KTEST("lab.files.lookup")
{
    KEXPECT(pc_capacity() > 0);
    for (uint32_t i = 0; i < 40; ++i)
        KEXPECT(add(i * 3));
    for (uint32_t i = 0; i < 40; ++i)
        KEXPECT(cached(i * 3));
    KEXPECT(!cached(1));                       // never filed
    KEXPECT(!pc_find(&g_owner, k_ino + 1, 3)); // another file's page 3
    KEXPECT(!pc_find(&g_owner + 1, k_ino, 3)); // another file system's
    pc_invalidate(&g_owner, k_ino, 60);        // a truncate to page 60
    KEXPECT(cached(57));
    KEXPECT(!cached(60) && !cached(117));
    pc_invalidate(&g_owner, k_ino, 0);
    KEXPECT(!cached(0));
}

KTEST("lab.files.clock_evicts")
{
    size_t capacity = pc_capacity();
    KEXPECT(capacity > 8);
    // A page held by someone (a mapping, a read in progress) is never evicted.
    KEXPECT(add(0));
    Optional<PhysAddr> pinned = pc_find(&g_owner, k_ino, 0);
    KEXPECT(pinned.has_value());
    uint64_t evictions = count("pagecache.evictions");
    for (uint32_t i = 1; i < 2 * capacity; ++i)
        KEXPECT(add(i));
    KEXPECT(count("pagecache.evictions") - evictions >= capacity - 1);
    KEXPECT(cached(0));                          // the pinned page stays
    KEXPECT(cached(uint32_t(2 * capacity - 1))); // the newest page is in
    KEXPECT(!cached(1));                         // the oldest unpinned one is gone
    if (pinned)
        pc_unpin(pinned.value());
    pc_invalidate(&g_owner, k_ino, 0);
}

// A hot set in steady use beside a stream of pages used once: the clock
// gives the hot pages a second chance at every pass of its hand, so they
// stay, where first-in first-out would throw them out with the stream.
KTEST("lab.files.bench.hot_set")
{
    size_t capacity = pc_capacity();
    constexpr uint32_t k_hot = 16, k_stream = 256, k_stream_base = 1u << 20;
    for (uint32_t h = 0; h < k_hot; ++h)
        KEXPECT(add(h));
    uint64_t lookups = 0, hits = 0;
    uint32_t next = k_stream_base;
    for (size_t round = 0; round < 16 * capacity / k_stream; ++round) {
        for (uint32_t h = 0; h < k_hot; ++h, ++lookups)
            if (cached(h))
                ++hits;
            else
                (void)add(h);
        for (uint32_t s = 0; s < k_stream; ++s)
            (void)add(next++);
    }
    ktest::metric("lab.files.hot_hits", hits * 1000 / lookups, "per1000");
    KEXPECT(hits * 10 >= lookups * 9); // nine in ten at least
    pc_invalidate(&g_owner, k_ino, 0);
}

} // namespace
} // namespace toll::fs
