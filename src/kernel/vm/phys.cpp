// The buddy allocator of physical pages (see phys.h for the design): free lists
// threaded through the free blocks, a bitmap of free block heads per range.
#include "kernel/vm/phys.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/spinlock.h"
#include "kernel/vm/failpoint.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_allocs, "vm.phys.allocs");
TOLL_COUNTER(g_frees, "vm.phys.frees");
TOLL_COUNTER(g_splits, "vm.phys.splits");
TOLL_COUNTER(g_merges, "vm.phys.merges");
TOLL_COUNTER(g_failures, "vm.phys.failures");
TOLL_COUNTER(g_ranges_ignored, "vm.phys.ranges_ignored");
/// The kernel allocator's free pages now, computed when read.
uint64_t kernel_free_pages()
{
    return phys_allocator().free_pages();
}
TOLL_GAUGE_COMPUTED(g_free_pages, "vm.phys.free_pages", kernel_free_pages);

/// Marks a header as belonging to a free block ("FREE" in ASCII).
constexpr uint32_t k_free_magic = 0x46524545;
constexpr PhysAddr k_page_mask = k_page_size - 1;
/// The highest physical address: where a range that runs off the end is cut.
constexpr PhysAddr k_max_addr = ~PhysAddr(0);
constexpr unsigned k_bits_per_word = 32;

/// The header at the start of every free block. Links are physical addresses,
/// so the lists mean the same whatever the kernel's mappings are.
struct FreeBlock {
    uint32_t magic; ///< k_free_magic while free; wiped when allocated.
    uint32_t order; ///< The block holds 2^order pages.
    PhysAddr self;  ///< The block's own address: a header copied elsewhere is caught.
    PhysAddr next;  ///< Next free block of the same order, or k_nil.
    PhysAddr prev;  ///< Previous free block of the same order, or k_nil.
};
static_assert(sizeof(FreeBlock) <= k_page_size);

constexpr PhysAddr block_bytes(unsigned order)
{
    return PhysAddr(k_page_size) << order;
}

FreeBlock* header_at(PhysAddr pa)
{
    return static_cast<FreeBlock*>(phys_to_virt(pa));
}

bool header_valid(const FreeBlock* h, PhysAddr pa, unsigned order)
{
    return h->magic == k_free_magic && h->order == order && h->self == pa;
}

constinit PhysAllocator g_phys_allocator;

// Guards the free lists and bitmaps of every PhysAllocator (phys.h).
Spinlock g_phys_lock("vm.phys");

} // namespace

PhysAllocator& phys_allocator()
{
    return g_phys_allocator;
}

const PhysAllocator::Range* PhysAllocator::range_of(PhysAddr pa) const
{
    for (size_t i = 0; i < m_range_count; ++i)
        if (pa >= m_ranges[i].start && pa < m_ranges[i].end)
            return &m_ranges[i];
    return nullptr;
}

bool PhysAllocator::is_free_head(const Range& r, PhysAddr pa) const
{
    size_t bit = (pa - r.base) / k_page_size;
    auto* words = static_cast<const uint32_t*>(phys_to_virt(r.base));
    return (words[bit / k_bits_per_word] >> (bit % k_bits_per_word)) & 1;
}

bool PhysAllocator::any_free_head(const Range& r, PhysAddr from, PhysAddr to) const
{
    size_t bit = (from - r.base) / k_page_size;
    size_t end = (to - r.base) / k_page_size;
    auto* words = static_cast<const uint32_t*>(phys_to_virt(r.base));
    while (bit < end) {
        size_t shift = bit % k_bits_per_word;
        size_t count = end - bit < k_bits_per_word - shift ? end - bit : k_bits_per_word - shift;
        uint32_t ones = count == k_bits_per_word ? ~uint32_t(0) : (uint32_t(1) << count) - 1;
        if (words[bit / k_bits_per_word] & (ones << shift))
            return true;
        bit += count;
    }
    return false;
}

void PhysAllocator::set_free_head(const Range& r, PhysAddr pa, bool free)
{
    size_t bit = (pa - r.base) / k_page_size;
    auto* words = static_cast<uint32_t*>(phys_to_virt(r.base));
    uint32_t mask = uint32_t(1) << (bit % k_bits_per_word);
    if (free)
        words[bit / k_bits_per_word] |= mask;
    else
        words[bit / k_bits_per_word] &= ~mask;
}

void PhysAllocator::push(const Range& r, PhysAddr pa, unsigned order)
{
    FreeList& list = m_free[order];
    FreeBlock* h = header_at(pa);
    h->magic = k_free_magic;
    h->order = order;
    h->self = pa;
    h->prev = k_nil;
    h->next = list.head;
    if (list.head != k_nil)
        header_at(list.head)->prev = pa;
    list.head = pa;
    ++list.count;
    m_free_pages += size_t(1) << order;
    set_free_head(r, pa, true);
}

void PhysAllocator::unlink(const Range& r, PhysAddr pa, unsigned order)
{
    FreeBlock* h = header_at(pa);
    // A bad header on a block the bitmap calls free means someone wrote into
    // free memory (a use after free) or the lists are corrupt.
    TOLL_ASSERT(is_free_head(r, pa) && header_valid(h, pa, order));
    FreeList& list = m_free[order];
    if (h->prev != k_nil)
        header_at(h->prev)->next = h->next;
    else
        list.head = h->next;
    if (h->next != k_nil)
        header_at(h->next)->prev = h->prev;
    --list.count;
    m_free_pages -= size_t(1) << order;
    set_free_head(r, pa, false);
    h->magic = 0; // No stale header may stay behind in memory handed out.
    h->self = 0;
}

Optional<PhysAddr> PhysAllocator::free_block_containing(const Range& r, PhysAddr pa,
                                                        unsigned* order) const
{
    // A block containing pa starts at pa rounded down to its own size, so
    // one probe per order finds it.
    for (unsigned o = 0; o <= k_max_order; ++o) {
        PhysAddr head = pa & ~(block_bytes(o) - 1);
        if (head < r.start)
            break; // Blocks never start before their range.
        if (!is_free_head(r, head))
            continue;
        const FreeBlock* h = header_at(head);
        TOLL_ASSERT(h->magic == k_free_magic && h->self == head && h->order <= k_max_order);
        if (pa < head + block_bytes(h->order)) {
            *order = h->order;
            return head;
        }
        // A free block that ends before pa: a bigger one holding pa would
        // start at or below head and hold this one too, and free blocks
        // never overlap. None holds pa.
        break;
    }
    return {};
}

uint64_t PhysAllocator::bitmap_pages(PhysAddr base, PhysAddr end)
{
    uint64_t pages = (end - base) / k_page_size;
    uint64_t words = (pages + k_bits_per_word - 1) / k_bits_per_word;
    return (words * sizeof(uint32_t) + k_page_size - 1) / k_page_size;
}

void PhysAllocator::add_range(PhysAddr base, uint64_t length)
{
    if (base > k_max_addr - k_page_mask)
        return; // Not even one whole page above base.
    PhysAddr end = length > k_max_addr - base ? k_max_addr : base + length;
    PhysAddr first = (base + k_page_mask) & ~k_page_mask;
    PhysAddr last = end & ~k_page_mask;
    if (first >= last)
        return;
    // Memory maps may overlap; add only the parts that are new.
    for (size_t i = 0; i < m_range_count; ++i) {
        PhysAddr r_base = m_ranges[i].base, r_end = m_ranges[i].end;
        if (first < r_end && r_base < last) {
            if (first < r_base)
                add_range(first, r_base - first);
            if (r_end < last)
                add_range(r_end, last - r_end);
            return;
        }
    }
    note_range(first, last);
    if (m_built)
        build_range(m_ranges[m_range_count - 1]);
    else
        recount();
}

void PhysAllocator::note_range(PhysAddr base, PhysAddr end)
{
    if ((end - base) / k_page_size <= bitmap_pages(base, end) || m_range_count == k_max_ranges) {
        g_ranges_ignored.add();
        return;
    }
    m_ranges[m_range_count++] = {base, base + bitmap_pages(base, end) * k_page_size, end};
}

void PhysAllocator::recount()
{
    m_total_pages = 0;
    for (size_t i = 0; i < m_range_count; ++i)
        m_total_pages += (m_ranges[i].end - m_ranges[i].start) / k_page_size;
    m_free_pages = m_total_pages;
}

void PhysAllocator::build()
{
    m_built = true;
    m_total_pages = m_free_pages = 0;
    for (size_t i = 0; i < m_range_count; ++i)
        build_range(m_ranges[i]);
}

void PhysAllocator::build_range(Range& r)
{
    auto* bitmap = static_cast<uint32_t*>(phys_to_virt(r.base));
    uint64_t words = ((r.end - r.base) / k_page_size + k_bits_per_word - 1) / k_bits_per_word;
    for (uint64_t i = 0; i < words; ++i)
        bitmap[i] = 0;
    // Cut the range into the largest naturally aligned blocks that fit. No
    // two of them are buddies, so there is nothing to merge.
    for (PhysAddr pa = r.start; pa < r.end;) {
        unsigned order = k_max_order;
        while ((pa & (block_bytes(order) - 1)) != 0 || r.end - pa < block_bytes(order))
            --order;
        push(r, pa, order);
        pa += block_bytes(order);
    }
    m_total_pages += (r.end - r.start) / k_page_size;
}

void PhysAllocator::reserve(PhysAddr base, uint64_t length)
{
    PhysAddr first = base & ~k_page_mask;
    PhysAddr end = length > k_max_addr - base ? k_max_addr : base + length;
    PhysAddr last = end > k_max_addr - k_page_mask ? k_max_addr & ~k_page_mask
                                                   : (end + k_page_mask) & ~k_page_mask;
    if (!m_built) {
        cut_hole(first, last);
        recount();
        return;
    }
    for (size_t i = 0; i < m_range_count; ++i) {
        const Range& r = m_ranges[i];
        PhysAddr lo = first > r.start ? first : r.start;
        PhysAddr hi = last < r.end ? last : r.end;
        if (lo < hi)
            reserve_in(r, lo, hi);
    }
}

void PhysAllocator::cut_hole(PhysAddr lo, PhysAddr hi)
{
    // Each range the hole touches is replaced, where it stood, by what is
    // left on either side (each piece gets a bitmap of its own): the ranges
    // stay in the order they were added, and so does the build.
    Range before[k_max_ranges];
    size_t count = m_range_count;
    for (size_t i = 0; i < count; ++i)
        before[i] = m_ranges[i];
    m_range_count = 0;
    for (size_t i = 0; i < count; ++i) {
        const Range& r = before[i];
        if (hi <= r.base || lo >= r.end) {
            m_ranges[m_range_count++] = r;
            continue;
        }
        if (r.base < lo)
            note_range(r.base, lo);
        if (hi < r.end)
            note_range(hi, r.end);
    }
}

void PhysAllocator::reserve_in(const Range& r, PhysAddr lo, PhysAddr hi)
{
    for (PhysAddr pa = lo; pa < hi;) {
        unsigned order;
        Optional<PhysAddr> head = free_block_containing(r, pa, &order);
        if (!head) { // Not free: already reserved or allocated.
            pa += k_page_size;
            continue;
        }
        unlink(r, head.value(), order);
        carve(r, head.value(), order, lo, hi);
        pa = head.value() + block_bytes(order);
    }
}

void PhysAllocator::carve(const Range& r, PhysAddr head, unsigned order, PhysAddr lo, PhysAddr hi)
{
    PhysAddr end = head + block_bytes(order);
    if (end <= lo || head >= hi) { // Wholly outside the hole: free again.
        push(r, head, order);
    } else if (head >= lo && end <= hi) { // Wholly inside: gone for good.
        m_total_pages -= size_t(1) << order;
    } else { // Straddles an edge of the hole: split it and look at each half.
        g_splits.add();
        carve(r, head, order - 1, lo, hi);
        carve(r, head + block_bytes(order - 1), order - 1, lo, hi);
    }
}

PhysAddr PhysAllocator::lowest() const
{
    PhysAddr low = m_range_count ? m_ranges[0].start : 0;
    for (size_t i = 1; i < m_range_count; ++i)
        low = m_ranges[i].start < low ? m_ranges[i].start : low;
    return low;
}

PhysAddr PhysAllocator::highest() const
{
    PhysAddr high = 0;
    for (size_t i = 0; i < m_range_count; ++i)
        high = m_ranges[i].end > high ? m_ranges[i].end : high;
    return high;
}

Result<PhysAddr> PhysAllocator::alloc(unsigned order, bool may_reclaim)
{
    if (order > k_max_order)
        return k_einval;
    SpinGuard g(g_phys_lock);
    if (!m_built)
        build();
    if (this == &g_phys_allocator && fail_alloc_now()) {
        g_failures.add();
        return k_enomem;
    }
    unsigned o = order;
    for (;;) {
        while (o <= k_max_order && m_free[o].head == k_nil)
            ++o;
        if (o <= k_max_order)
            break;
        // Out of blocks this big: let the reclaim hook (superpage
        // reservations) give pages back, one reservation at a time, until
        // they coalesce into one or it has nothing left to give.
        if (!may_reclaim || (!m_reclaim && !m_cache_reclaim)) {
            g_failures.add();
            return k_enomem;
        }
        g_phys_lock.unlock(); // the hook frees pages: free() takes the lock
        size_t reclaimed = m_reclaim ? m_reclaim() : 0;
        if (reclaimed == 0 && m_cache_reclaim)
            reclaimed = m_cache_reclaim();
        g_phys_lock.lock();
        if (reclaimed == 0) {
            g_failures.add();
            return k_enomem;
        }
        o = order;
    }
    PhysAddr pa = m_free[o].head;
    const Range* r = range_of(pa);
    TOLL_ASSERT(r != nullptr);
    unlink(*r, pa, o);
    while (o > order) { // Keep the lower half, free the upper one.
        --o;
        push(*r, pa + block_bytes(o), o);
        g_splits.add();
    }
    g_allocs.add();
    return pa;
}

void PhysAllocator::free(PhysAddr pa, unsigned order)
{
    SpinGuard g(g_phys_lock);
    if (!m_built)
        build(); // Then whatever is freed here is found free already.
    TOLL_ASSERT(order <= k_max_order);
    TOLL_ASSERT((pa & (block_bytes(order) - 1)) == 0 && "misaligned block");
    const Range* r = range_of(pa);
    TOLL_ASSERT(r != nullptr && "address not managed by the allocator");
    TOLL_ASSERT(r->end - pa >= block_bytes(order) && "block runs past its range");
    // Double free: some page of the block is already free, either inside a
    // free block that starts at or before pa, or as a free head after it.
    // Costs O(k_max_order) probes plus 2^order bits, read a word at a time.
    unsigned found_order;
    bool inside_free = free_block_containing(*r, pa, &found_order).has_value() ||
                       (order > 0 && any_free_head(*r, pa + k_page_size, pa + block_bytes(order)));
    TOLL_ASSERT(!inside_free && "double free");

    while (order < k_max_order) {
        PhysAddr buddy = pa ^ block_bytes(order);
        if (buddy < r->start || buddy >= r->end || !is_free_head(*r, buddy) ||
            header_at(buddy)->order != order)
            break; // The buddy is (partly) allocated, or outside the range.
        unlink(*r, buddy, order);
        pa = pa < buddy ? pa : buddy;
        ++order;
        g_merges.add();
    }
    push(*r, pa, order);
    g_frees.add();
}

bool PhysAllocator::check() const
{
    if (!m_built) { // Only notes so far: page-aligned, disjoint, in order.
        for (size_t i = 0; i < m_range_count; ++i) {
            const Range& r = m_ranges[i];
            if (((r.base | r.end) & k_page_mask) != 0 ||
                r.start != r.base + bitmap_pages(r.base, r.end) * k_page_size || r.start >= r.end)
                return false;
            for (size_t j = 0; j < i; ++j)
                if (r.base < m_ranges[j].end && m_ranges[j].base < r.end)
                    return false;
        }
        return m_free_pages == m_total_pages;
    }
    size_t pages = 0, blocks = 0;
    for (unsigned o = 0; o <= k_max_order; ++o) {
        size_t count = 0;
        PhysAddr prev = k_nil;
        for (PhysAddr pa = m_free[o].head; pa != k_nil; pa = header_at(pa)->next) {
            const Range* r = range_of(pa);
            if (r == nullptr || count++ > m_total_pages)
                return false; // A wild link, or a cycle.
            if ((pa & (block_bytes(o) - 1)) != 0 || r->end - pa < block_bytes(o))
                return false;
            const FreeBlock* h = header_at(pa);
            if (!is_free_head(*r, pa) || !header_valid(h, pa, o) || h->prev != prev)
                return false;
            // No other free block may start inside this one (no overlaps)...
            for (PhysAddr p = pa + k_page_size; p < pa + block_bytes(o); p += k_page_size)
                if (is_free_head(*r, p))
                    return false;
            // ...and two free buddies of one order should have been merged.
            PhysAddr buddy = pa ^ block_bytes(o);
            if (o < k_max_order && buddy >= r->start && buddy < r->end && is_free_head(*r, buddy) &&
                header_at(buddy)->order == o)
                return false;
            prev = pa;
        }
        if (count != m_free[o].count)
            return false;
        pages += count << o;
        blocks += count;
    }
    if (pages != m_free_pages || m_free_pages > m_total_pages)
        return false;
    // Every bit set in a bitmap must be the head of a listed block.
    size_t heads = 0;
    for (size_t i = 0; i < m_range_count; ++i) {
        const Range& r = m_ranges[i];
        for (PhysAddr pa = r.base; pa < r.end; pa += k_page_size)
            if (is_free_head(r, pa)) {
                if (pa < r.start)
                    return false; // The bitmap's own pages are never free.
                ++heads;
            }
    }
    return heads == blocks;
}

} // namespace toll::vm
