// The page cache's table: a fixed array of slots (sized from memory at the
// first use), a hash of (file system, inode, index) over them, and a clock
// hand that sweeps the array for a victim. The clock ("second chance") was
// chosen over an exact LRU list because a hit then costs one store (the
// slot's referenced bit) and no list surgery under the lock; eviction pays
// for it by sweeping, at most two turns of the hand.
#include "kernel/fs/pagecache.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/spinlock.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmobject.h"
#include "lib/string.h"

namespace toll::fs {
namespace {

TOLL_COUNTER(g_hits, "pagecache.hits");
TOLL_COUNTER(g_misses, "pagecache.misses");
TOLL_COUNTER(g_evictions, "pagecache.evictions");
TOLL_COUNTER(g_writebacks, "pagecache.writebacks");
TOLL_GAUGE(g_pages, "pagecache.pages");

struct Slot {
    const void* owner = nullptr; ///< nullptr: the slot is free
    uint32_t ino = 0, index = 0;
    PhysAddr pa = 0;
    bool referenced = false; ///< used since the hand last passed
    bool writable_shared = false;
    Slot* hash_next = nullptr;
};

// At most this many slots, and never more than an eighth of memory: the
// cache is a guest of the memory programs need.
constexpr size_t k_max_slots = 1024;
constexpr size_t k_buckets = 256;

Spinlock g_lock{"fs.pagecache"};
Slot* g_slots;
size_t g_count;
size_t g_hand;
Slot* g_hash[k_buckets];
bool g_tried;

size_t bucket(const void* owner, uint32_t ino, uint32_t index)
{
    uintptr_t h = reinterpret_cast<uintptr_t>(owner) ^ (uintptr_t(ino) * 2654435761u) ^
                  (uintptr_t(index) * 40503u);
    return (h ^ (h >> 9)) % k_buckets;
}

// Sets the table up at the first use (the allocator is running by then).
bool ready()
{
    if (g_slots || g_tried)
        return g_slots != nullptr;
    g_tried = true;
    size_t n = vm::phys_allocator().total_pages() / 8;
    n = n < k_max_slots ? n : k_max_slots;
    if (n == 0)
        return false;
    g_slots = static_cast<Slot*>(vm::kmalloc(n * sizeof(Slot)));
    if (!g_slots)
        return false;
    for (size_t i = 0; i < n; ++i)
        g_slots[i] = Slot{};
    g_count = n;
    // When memory runs short the allocator asks the cache for pages too.
    vm::phys_allocator().set_cache_reclaim_hook(pc_reclaim);
    return true;
}

Slot* find(const void* owner, uint32_t ino, uint32_t index)
{
    // LAB files BEGIN: walk the chain of the key's bucket (g_hash, hash_next) and return the slot whose owner, ino and index all match, or nullptr
    for (Slot* s = g_hash[bucket(owner, ino, index)]; s; s = s->hash_next)
        if (s->owner == owner && s->ino == ino && s->index == index)
            return s;
    return nullptr;
    // LAB files STUB
    // (void)owner;
    // (void)ino;
    // (void)index;
    // return nullptr;
    // LAB files END
}

void unhash(Slot* s)
{
    Slot** link = &g_hash[bucket(s->owner, s->ino, s->index)];
    while (*link != s)
        link = &(*link)->hash_next;
    *link = s->hash_next;
    s->hash_next = nullptr;
}

// Takes @p s out of the cache; returns its page if the cache held the last
// reference (the caller frees it once the lock is released).
PhysAddr forget(Slot* s)
{
    unhash(s);
    PhysAddr pa = s->pa;
    vm::page_set_writable_shared(pa, false);
    *s = Slot{};
    g_pages.lower();
    return vm::pageref_release(pa) == 0 ? pa : 0;
}

// The clock: a slot in use whose page only the cache holds, not used since
// the hand last passed and not one a mapping may write, is the victim; the
// hand clears the referenced bit of the others it passes. Two turns at
// most. Returns a free slot (after an eviction, or one found free if
// @p free_slot_will_do), or nullptr; *freed is the
// victim's page, to free outside the lock.
Slot* evict_one(PhysAddr* freed, bool free_slot_will_do)
{
    *freed = 0;
    // LAB files BEGIN: sweep from g_hand (advancing it, wrapping at g_count) for at most two turns: a free slot is the answer if free_slot_will_do; skip a slot in use (writable_shared, or a page reference count above the cache's one); clear a set referenced bit and go on; otherwise count g_evictions, forget the slot (its page to *freed) and return it
    // LAB files HINT: vm::pageref_get(pa).value_or(1) is the number of holders; forget() gives back the cache's reference
    for (size_t step = 0; step < 2 * g_count; ++step) {
        Slot* s = &g_slots[g_hand];
        g_hand = (g_hand + 1) % g_count;
        if (!s->owner) {
            if (free_slot_will_do)
                return s;
            continue;
        }
        if (s->writable_shared || vm::pageref_get(s->pa).value_or(1) > 1)
            continue; // mapped or pinned: in use, whatever its bit says
        if (s->referenced) {
            s->referenced = false;
            continue;
        }
        g_evictions.add();
        *freed = forget(s);
        return s;
    }
    return nullptr;
    // LAB files STUB
    // (void)free_slot_will_do;
    // return nullptr;
    // LAB files END
}

void free_page(PhysAddr pa)
{
    if (pa)
        vm::phys_allocator().free(pa, 0);
}

} // namespace

Optional<PhysAddr> pc_find(const void* owner, uint32_t ino, uint32_t index)
{
    SpinGuard g(g_lock);
    if (g_slots)
        if (Slot* s = find(owner, ino, index); s && vm::pageref_share(s->pa)) {
            s->referenced = true;
            g_hits.add();
            return s->pa;
        }
    g_misses.add();
    return {};
}

Result<PhysAddr> pc_alloc()
{
    PhysAddr pa = TRY(vm::phys_allocator().alloc(0));
    vm::pageref_set_one(pa);
    vm::page_set_writable_shared(pa, false); // and not icache-clean: fresh contents
    return pa;
}

void pc_insert(const void* owner, uint32_t ino, uint32_t index, PhysAddr pa)
{
    PhysAddr freed = 0;
    {
        SpinGuard g(g_lock);
        if (!ready() || find(owner, ino, index))
            return; // no table, or another filler was first: the caller's copy goes with its pin
        Slot* s = nullptr;
        for (size_t i = 0; i < g_count && !s; ++i)
            if (!g_slots[(g_hand + i) % g_count].owner)
                s = &g_slots[(g_hand + i) % g_count];
        if (!s)
            s = evict_one(&freed, true);
        if (s && vm::pageref_share(pa)) {
            s->owner = owner;
            s->ino = ino;
            s->index = index;
            s->pa = pa;
            // Not referenced yet: a page read once is the first to go, so
            // that a stream of pages used once cannot push out the pages
            // in steady use (the second lookup sets the bit).
            s->referenced = false;
            size_t b = bucket(owner, ino, index);
            s->hash_next = g_hash[b];
            g_hash[b] = s;
            g_pages.raise();
        }
    }
    free_page(freed);
}

void pc_unpin(PhysAddr pa)
{
    if (vm::pageref_release(pa) == 0)
        free_page(pa);
}

void pc_update(const void* owner, uint32_t ino, uint32_t index, size_t within, const void* src,
               size_t n)
{
    SpinGuard g(g_lock);
    if (!g_slots)
        return;
    if (Slot* s = find(owner, ino, index)) {
        memcpy(static_cast<uint8_t*>(vm::phys_to_virt(s->pa)) + within, src, n);
        vm::page_set_icache_clean(s->pa, false);
    }
}

void pc_invalidate(const void* owner, uint32_t ino, uint32_t from_index)
{
    if (!g_slots)
        return;
    for (size_t i = 0; i < g_count; ++i) {
        PhysAddr freed = 0;
        {
            SpinGuard g(g_lock);
            Slot* s = &g_slots[i];
            if (s->owner == owner && s->ino == ino && s->index >= from_index)
                freed = forget(s);
        }
        free_page(freed);
    }
}

void pc_mark_writable_shared(const void* owner, uint32_t ino, uint32_t index)
{
    SpinGuard g(g_lock);
    if (Slot* s = g_slots ? find(owner, ino, index) : nullptr) {
        s->writable_shared = true;
        vm::page_set_writable_shared(s->pa, true);
    }
}

void pc_writable_pages(const void* owner,
                       void (*visit)(void* context, uint32_t ino, uint32_t index, PhysAddr pa),
                       void* context)
{
    for (size_t i = 0; i < g_count; ++i) {
        uint32_t ino = 0, index = 0;
        PhysAddr pa = 0;
        {
            SpinGuard g(g_lock);
            Slot* s = &g_slots[i];
            if (s->owner != owner || !s->writable_shared || !vm::pageref_share(s->pa))
                continue;
            ino = s->ino;
            index = s->index;
            pa = s->pa;
        }
        visit(context, ino, index, pa);
        {
            // Written back, and mapped by nobody now (the cache's reference
            // and this pin are all): an ordinary page again, evictable.
            SpinGuard g(g_lock);
            Slot* s = &g_slots[i];
            if (s->owner == owner && s->pa == pa && vm::pageref_get(pa).value_or(0) == 2) {
                s->writable_shared = false;
                vm::page_set_writable_shared(pa, false);
            }
        }
        pc_unpin(pa);
    }
}

void pc_count_writeback()
{
    g_writebacks.add();
}

size_t pc_reclaim()
{
    // From an allocation made under this lock: nothing to give from here.
    if (g_lock.held_here() || !g_slots)
        return 0;
    size_t freed_pages = 0;
    for (int i = 0; i < 8; ++i) {
        PhysAddr freed = 0;
        {
            SpinGuard g(g_lock);
            if (!evict_one(&freed, false))
                break;
        }
        if (freed) {
            free_page(freed);
            ++freed_pages;
        }
    }
    return freed_pages;
}

size_t pc_capacity()
{
    SpinGuard g(g_lock);
    return ready() ? g_count : 0;
}

} // namespace toll::fs
