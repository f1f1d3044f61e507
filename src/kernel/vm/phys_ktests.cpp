// In-kernel tests of the physical allocator the boot code fed from the real
// memory map: blocks are aligned, usable through the direct map, and given back.
#include "kernel/arch/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/vm/phys.h"

namespace toll::vm {
namespace {

constexpr unsigned k_probe_blocks = 8;
constexpr uint32_t k_stamp = 0x7011f4ee;
/// 2 MB: the superpage size of i386 PAE and of an arm64 L2 block.
constexpr unsigned k_superpage_order = 9;

/// Fills a block with words derived from its address; returns false if any
/// word read back differs (the memory is not really there, or two blocks alias).
bool stamp_block(PhysAddr pa, unsigned order, bool verify)
{
    auto* words = static_cast<volatile uint32_t*>(phys_to_virt(pa));
    size_t count = (k_page_size << order) / sizeof(uint32_t);
    for (size_t i = 0; i < count; ++i) {
        uint32_t expect = k_stamp ^ uint32_t(pa >> 12) ^ uint32_t(i);
        if (verify && words[i] != expect)
            return false;
        if (!verify)
            words[i] = expect;
    }
    return true;
}

/// Fails the running test unless the boot code gave the allocator memory:
/// every test below would otherwise pass over an empty allocator.
bool fed(const PhysAllocator& phys)
{
    if (phys.total_pages() == 0)
        ktest::fail(__FILE__, __LINE__, "the allocator has no memory: boot did not feed it");
    return phys.total_pages() != 0;
}

} // namespace

KTEST("vm.phys.alloc_free")
{
    PhysAllocator& phys = phys_allocator();
    if (!fed(phys))
        return;
    KEXPECT(phys.check());
    size_t before = phys.free_pages();

    PhysAddr blocks[k_probe_blocks];
    for (unsigned i = 0; i < k_probe_blocks; ++i) {
        unsigned order = i % 3; // 1, 2 and 4 pages.
        Result<PhysAddr> block = phys.alloc(order);
        KEXPECT(block.ok());
        if (!block)
            return;
        blocks[i] = block.value();
        KEXPECT_EQ(blocks[i] % (k_page_size << order), 0u);
        stamp_block(blocks[i], order, false);
    }
    // Each block still holds its own stamp: none overlaps another.
    for (unsigned i = 0; i < k_probe_blocks; ++i)
        KEXPECT(stamp_block(blocks[i], i % 3, true));
    for (unsigned i = 0; i < k_probe_blocks; ++i)
        phys.free(blocks[i], i % 3);
    KEXPECT_EQ(phys.free_pages(), before);
    KEXPECT(phys.check());
}

KTEST("vm.phys.superpage_block")
{
    PhysAllocator& phys = phys_allocator();
    if (!fed(phys))
        return;
    size_t before = phys.free_pages();
    uint64_t start = arch::cycle_counter();
    Result<PhysAddr> block = phys.alloc(k_superpage_order);
    uint64_t end = arch::cycle_counter();
    KEXPECT(block.ok());
    if (!block)
        return;
    PhysAddr pa = block.value();
    KEXPECT_EQ(pa % (k_page_size << k_superpage_order), 0u);
    KEXPECT_EQ(phys.free_pages(), before - (size_t(1) << k_superpage_order));
    phys.free(pa, k_superpage_order);
    KEXPECT_EQ(phys.free_pages(), before);
    KEXPECT(phys.check());
    ktest::metric("vm.phys.alloc_2mb", end - start, "cycles");
}

KTEST("vm.phys.exhaust_and_refill")
{
    // Take every free page, chained through the pages themselves, then give
    // them all back: the allocator must end where it started, coalesced.
    PhysAllocator& phys = phys_allocator();
    if (!fed(phys))
        return;
    size_t before = phys.free_pages();
    // The chain's links are (address + 1): 0 ends it, and page 0 is a page.
    PhysAddr chain = 0;
    size_t taken = 0;
    uint64_t start = arch::cycle_counter();
    Result<PhysAddr> pa = phys.alloc(0);
    for (; pa.ok(); pa = phys.alloc(0), ++taken) {
        *static_cast<PhysAddr*>(phys_to_virt(pa.value())) = chain;
        chain = pa.value() + 1;
    }
    uint64_t middle = arch::cycle_counter();
    KEXPECT_EQ(pa.error(), k_enomem); // the end of memory is reported as such
    KEXPECT_EQ(taken, before);
    KEXPECT_EQ(phys.free_pages(), 0u);
    while (chain != 0) {
        PhysAddr next = *static_cast<PhysAddr*>(phys_to_virt(chain - 1));
        phys.free(chain - 1);
        chain = next;
    }
    uint64_t end = arch::cycle_counter();
    KEXPECT_EQ(phys.free_pages(), before);
    KEXPECT(phys.check());
    if (taken != 0) {
        ktest::metric("vm.phys.alloc_page", (middle - start) / taken, "cycles");
        ktest::metric("vm.phys.free_page", (end - middle) / taken, "cycles");
    }
}

} // namespace toll::vm
