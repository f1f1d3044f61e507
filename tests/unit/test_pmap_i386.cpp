// Host tests of the i386 pmap (src/arch/i386/pmap.cpp) over simulated physical
// memory, with CR3 loads and invlpg replaced by stubs that record each call.
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "host_kernel_stubs.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/phys.h"
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>
#include <vector>

using toll::arch::k_page_size;
using toll::arch::PhysAddr;
using toll::arch::Pmap;
using toll::test::SimulatedMemory;
using toll::vm::PhysAllocator;
using namespace toll::vm;
using toll::Result;
using toll::test::allocated;
using toll::test::extract_into;
using toll::test::failure;

namespace {

// Intel SDM Vol. 3, 4.3 (tables 4-5, 4-6): bits of a 32-bit PDE/PTE. Spelled
// out here rather than taken from mmu.h, so that a wrong constant there shows.
constexpr uint32_t k_sdm_present = 1u << 0;
constexpr uint32_t k_sdm_write = 1u << 1;
constexpr uint32_t k_sdm_user = 1u << 2;
constexpr uint32_t k_sdm_page_size = 1u << 7; // PDE: maps a 4 MB page
constexpr uint32_t k_sdm_global = 1u << 8;
constexpr uint32_t k_sdm_frame = 0xFFFFF000u;
constexpr unsigned k_pd_entries = 1024;
constexpr unsigned k_pd_shift = 22; // each PDE covers 4 MB
constexpr unsigned k_pt_shift = 12;
constexpr unsigned k_pt_mask = 0x3FF;
/// The first PDE of the kernel's quarter (0xC0000000 >> 22).
constexpr unsigned k_kernel_first = 768;
constexpr uint32_t k_page = k_page_size;
constexpr uint32_t k_last_user_page = 0xBFFFF000u;

// Simulated memory: 4 MB at 2 MB. Its first page is the kernel page directory
// and its second a kernel page table; neither is given to the allocator.
constexpr PhysAddr k_base = 0x200000;
constexpr size_t k_memory_size = 4 << 20;
constexpr PhysAddr k_kernel_pd = k_base;
constexpr PhysAddr k_kernel_pt = k_base + k_page;
constexpr PhysAddr k_managed = k_base + 2 * k_page;

// What the stubs of the kernel-only half of the MMU code (mmu.cpp) record.
std::vector<uint32_t> g_cr3_loads;
std::vector<uint32_t> g_invlpg;

/// A recognisable kernel PDE for slot @p i: large pages of a direct map,
/// except one slot that points at a kernel page table.
constexpr unsigned k_kernel_pt_slot = 1000;
uint32_t kernel_pde(unsigned i)
{
    if (i == k_kernel_pt_slot)
        return static_cast<uint32_t>(k_kernel_pt) | k_sdm_present | k_sdm_write;
    return ((i - k_kernel_first) << k_pd_shift) | k_sdm_present | k_sdm_write | k_sdm_page_size |
           k_sdm_global;
}

/// What the user quarter of the kernel directory holds: junk a pmap must not copy.
uint32_t kernel_junk(unsigned i)
{
    return 0xDEAD0000u | (i << k_pt_shift) | k_sdm_present;
}

uint32_t* words(PhysAddr pa)
{
    return static_cast<uint32_t*>(phys_to_virt(pa));
}

uint32_t* directory(Pmap* pmap)
{
    return reinterpret_cast<uint32_t*>(pmap);
}

/// The raw PDE of @p va in @p pmap.
uint32_t raw_pde(Pmap* pmap, uint32_t va)
{
    return directory(pmap)[va >> k_pd_shift];
}

/// The raw PTE of @p va in @p pmap, walked by hand; fails if no page table.
uint32_t raw_pte(Pmap* pmap, uint32_t va)
{
    uint32_t pde = raw_pde(pmap, va);
    REQUIRE((pde & k_sdm_present));
    REQUIRE(!(pde & k_sdm_page_size));
    return words(pde & k_sdm_frame)[(va >> k_pt_shift) & k_pt_mask];
}

uint64_t counter(const char* name)
{
    return toll::test::counter_named(name).read();
}

/// A fresh allocator over the simulated memory, the kernel directory filled
/// in, and the call logs cleared; leaves no pmap current behind it.
struct PmapWorld {
    SimulatedMemory mem{k_base, k_memory_size};
    size_t free_at_start;

    PmapWorld()
    {
        phys_allocator() = PhysAllocator();
        phys_allocator().add_range(k_managed, k_memory_size - (k_managed - k_base));
        // Build the allocator now so that free_pages() is its final value.
        PhysAddr pa = allocated(phys_allocator().alloc(0));
        phys_allocator().free(pa, 0);
        free_at_start = phys_allocator().free_pages();
        uint32_t* pd = words(k_kernel_pd);
        for (unsigned i = 0; i < k_pd_entries; ++i)
            pd[i] = i < k_kernel_first ? kernel_junk(i) : kernel_pde(i);
        std::memset(words(k_kernel_pt), 0, k_page);
        g_cr3_loads.clear();
        g_invlpg.clear();
    }

    ~PmapWorld()
    {
        pmap_activate(nullptr);
        phys_allocator() = PhysAllocator();
    }

    Pmap* create()
    {
        Pmap* pmap = pmap_create();
        REQUIRE(pmap != nullptr);
        return pmap;
    }
};

} // namespace

// The stubs of the kernel-only i386 MMU operations (mmu.cpp in the kernel).
namespace toll::i386 {

void load_cr3(uint32_t page_directory_phys)
{
    g_cr3_loads.push_back(page_directory_phys);
}

void invalidate_page(uint32_t va)
{
    g_invlpg.push_back(va);
}

uint32_t kernel_page_directory_phys()
{
    return static_cast<uint32_t>(k_kernel_pd);
}

constexpr uint32_t k_fake_trampoline_pde = 0x00ABC000 | 0x3;

uint32_t trampoline_pde()
{
    return k_fake_trampoline_pde;
}

uint32_t empty_user_directory_phys()
{
    return 0x00EEE000; // only ever loaded into the (stubbed) trampoline
}

void shootdown_leave(toll::arch::Pmap*)
{
} // one CPU: nobody else has it loaded

} // namespace toll::i386

// The kernel's shootdown (shootdown.cpp) on one CPU: invlpg each page of the
// range when the space is loaded, except under 4/4, whose kernel directory
// holds no user entries; every call is recorded.
std::vector<std::pair<uintptr_t, uintptr_t>> g_shootdowns;

namespace toll::arch {

void pmap_tlb_shootdown(Pmap* pmap, uintptr_t start, uintptr_t end)
{
    if (start >= end)
        return;
    g_shootdowns.emplace_back(start, end);
    if (pmap == pmap_current() && toll::i386::layout() != toll::i386::Layout::split_4_4)
        for (uintptr_t va = start; va < end; va += k_page_size)
            toll::i386::invalidate_page(static_cast<uint32_t>(va));
}

} // namespace toll::arch

namespace toll::i386 {

} // namespace toll::i386

extern "C" {
toll::i386::TrampolineCpu trampoline_cpus[TRAMPOLINE_CPUS]{};
uint32_t i386_layout = 0; // 3/1 unless a test says otherwise
}

// Runs the rest of a test under @p layout, restoring 3/1 afterwards.
struct LayoutScope {
    explicit LayoutScope(toll::i386::Layout l) { i386_layout = static_cast<uint32_t>(l); }
    ~LayoutScope() { i386_layout = 0; }
};

TEST_CASE("pmap i386: 3/1-pti keeps user entries in both directories, the kernel only in one")
{
    LayoutScope scope(toll::i386::Layout::split_3_1_pti);
    PmapWorld world;
    Pmap* pmap = world.create();
    auto* kernel_view = static_cast<uint32_t*>(static_cast<void*>(pmap));
    uint32_t* user_view = kernel_view + 1024;
    CHECK(phys_allocator().free_pages() == world.free_at_start - 2); // two directories
    REQUIRE(pmap_enter(pmap, 0x08048000, PhysAddr(k_managed), k_prot_read) == toll::k_ok);
    unsigned slot = 0x08048000u >> 22;
    CHECK(kernel_view[slot] != 0);
    CHECK(kernel_view[slot] == user_view[slot]); // one shared page table
    for (unsigned i = 768; i < 1023; ++i)
        CHECK(user_view[i] == 0); // no kernel in the user directory
    CHECK(user_view[1023] == toll::i386::k_fake_trampoline_pde);
    CHECK(kernel_view[768] != 0);
    pmap_destroy(pmap);
    CHECK(phys_allocator().free_pages() == world.free_at_start);
}

TEST_CASE("pmap i386: 4/4 maps user space up to the trampoline, in the user directory only")
{
    LayoutScope scope(toll::i386::Layout::split_4_4);
    PmapWorld world;
    Pmap* pmap = world.create();
    auto* kernel_view = static_cast<uint32_t*>(static_cast<void*>(pmap));
    uint32_t* user_view = kernel_view + 1024;
    CHECK(user_space_limit() == 0xFFC00000u);
    // An address that is kernel text in the kernel's space is user space here.
    REQUIRE(pmap_enter(pmap, 0xC0100000, PhysAddr(k_managed), k_prot_read | k_prot_write) ==
            toll::k_ok);
    REQUIRE(pmap_enter(pmap, 0xFFBFF000, PhysAddr(k_managed), k_prot_read) == toll::k_ok);
    CHECK(pmap_extract(pmap, 0xC0100000).has_value());
    CHECK(user_view[0xC0100000u >> 22] != 0);
    CHECK(user_view[1023] == toll::i386::k_fake_trampoline_pde);
    // The trampoline slot is not user space.
    CHECK(pmap_enter(pmap, 0xFFC00000, PhysAddr(k_managed), k_prot_read) == toll::k_enomem);
    // Changing a mapping of the active pmap needs no invlpg under 4/4.
    g_invlpg.clear();
    pmap_activate(pmap);
    pmap_protect(pmap, 0xC0100000, 0xC0100000 + k_page_size, k_prot_read);
    CHECK(g_invlpg.empty());
    pmap_activate(nullptr);
    pmap_destroy(pmap);
    CHECK(phys_allocator().free_pages() == world.free_at_start);
}

TEST_CASE("pmap i386: create copies exactly the kernel quarter and clears the user part")
{
    PmapWorld world;
    Pmap* pmap = world.create();
    CHECK(phys_allocator().free_pages() == world.free_at_start - 1);
    PhysAddr pd = virt_to_phys(pmap);
    CHECK(pd % k_page == 0);
    CHECK(pd >= k_managed);
    unsigned user_nonzero = 0, kernel_wrong = 0;
    for (unsigned i = 0; i < k_kernel_first; ++i)
        user_nonzero += directory(pmap)[i] != 0;
    for (unsigned i = k_kernel_first; i < k_pd_entries; ++i)
        kernel_wrong += directory(pmap)[i] != kernel_pde(i);
    CHECK(user_nonzero == 0);
    CHECK(kernel_wrong == 0);
    CHECK(user_space_limit() == 0xC0000000u);
    pmap_destroy(pmap);
    // The kernel's own directory is read, never written.
    for (unsigned i = 0; i < k_pd_entries; ++i)
        REQUIRE(words(k_kernel_pd)[i] == (i < k_kernel_first ? kernel_junk(i) : kernel_pde(i)));
    CHECK(phys_allocator().free_pages() == world.free_at_start);
}

TEST_CASE("pmap i386: enter and extract round trip at the edges of page tables and user space")
{
    PmapWorld world;
    Pmap* pmap = world.create();
    const std::vector<uint32_t> vas = {0x00000000, 0x00001000, 0x003FF000,
                                       0x00400000, 0x00401000, 0x08048000,
                                       0x7FFFF000, 0xBFC00000, k_last_user_page};
    // Frames with high bits set, all different: a lost frame bit shows.
    auto frame_of = [](size_t i) { return PhysAddr(0xFFFFF000u - i * 0x11000u); };
    for (size_t i = 0; i < vas.size(); ++i)
        REQUIRE(pmap_enter(pmap, vas[i], frame_of(i), k_prot_read | k_prot_write) == toll::k_ok);
    for (size_t i = 0; i < vas.size(); ++i) {
        INFO("va " << std::hex << vas[i]);
        for (uint32_t offset : {0u, 1u, 0x7FFu, 0xFFFu}) {
            PhysAddr pa = 0;
            unsigned prot = 0;
            REQUIRE(extract_into(pmap_extract(pmap, vas[i] + offset), &pa, &prot));
            CHECK(pa == (frame_of(i) | offset));
            CHECK(prot == (k_prot_read | k_prot_write | k_prot_exec));
        }
        CHECK((raw_pte(pmap, vas[i]) & k_sdm_frame) == frame_of(i));
        // Extract may be asked for the frame only, or for nothing.
        PhysAddr pa = 0;
        CHECK(extract_into(pmap_extract(pmap, vas[i]), &pa, nullptr));
        CHECK(pa == frame_of(i));
        CHECK(pmap_extract(pmap, vas[i]).has_value());
    }
    // Neighbours that were not entered stay unmapped.
    for (uint32_t va :
         {0x00002000u, 0x003FE000u, 0x00402000u, 0x08047000u, 0xBFFFE000u, 0x00800000u})
        CHECK_FALSE(pmap_extract(pmap, va).has_value());
    // The kernel quarter is untouched by user mappings.
    for (unsigned i = k_kernel_first; i < k_pd_entries; ++i)
        REQUIRE(directory(pmap)[i] == kernel_pde(i));
    pmap_destroy(pmap);
    CHECK(phys_allocator().free_pages() == world.free_at_start);
}

TEST_CASE("pmap i386: many random mappings agree with a model through replace and remove")
{
    PmapWorld world;
    Pmap* pmap = world.create();
    std::mt19937 rng(4242);
    std::uniform_int_distribution<uint32_t> page(0, k_last_user_page / k_page);
    std::map<uint32_t, PhysAddr> model;
    for (unsigned n = 0; n < 300; ++n) {
        uint32_t va = page(rng) * k_page;
        PhysAddr pa = PhysAddr(rng() & k_sdm_frame);
        REQUIRE(pmap_enter(pmap, va, pa, k_prot_read) == toll::k_ok);
        model[va] = pa; // a repeat replaces the mapping
    }
    for (auto [va, pa] : model) {
        PhysAddr got = 0;
        REQUIRE(extract_into(pmap_extract(pmap, va), &got, nullptr));
        REQUIRE(got == pa);
    }
    unsigned n = 0;
    for (auto it = model.begin(); it != model.end(); ++n) {
        if (n % 2) {
            REQUIRE(allocated(pmap_remove_page(pmap, it->first)) == it->second);
            it = model.erase(it);
        } else {
            ++it;
        }
    }
    for (auto [va, pa] : model) {
        PhysAddr got = 0;
        REQUIRE(extract_into(pmap_extract(pmap, va), &got, nullptr));
        REQUIRE(got == pa);
    }
    for (unsigned i = 0; i < 200; ++i) {
        uint32_t va = page(rng) * k_page;
        if (!model.count(va))
            REQUIRE_FALSE(pmap_extract(pmap, va).has_value());
    }
    pmap_destroy(pmap);
    CHECK(phys_allocator().free_pages() == world.free_at_start);
}

TEST_CASE("pmap i386: rights are the PTE's present, R/W and U/S bits")
{
    PmapWorld world;
    Pmap* pmap = world.create();
    constexpr uint32_t va = 0x08049000;
    constexpr PhysAddr frame = 0x12345000;

    REQUIRE(pmap_enter(pmap, va, frame, k_prot_read) == toll::k_ok);
    uint32_t pte = raw_pte(pmap, va);
    CHECK((pte & k_sdm_frame) == frame);
    CHECK((pte & k_sdm_present));
    CHECK((pte & k_sdm_user));
    CHECK_FALSE((pte & k_sdm_write));
    unsigned prot = 0;
    REQUIRE(extract_into(pmap_extract(pmap, va), nullptr, &prot));
    CHECK((prot & k_prot_read));
    CHECK_FALSE((prot & k_prot_write));

    // The page directory entry must let user code through too (Intel SDM
    // Vol. 3, 4.6: rights are the combination of both levels).
    uint32_t pde = raw_pde(pmap, va);
    CHECK((pde & k_sdm_present));
    CHECK((pde & k_sdm_user));
    CHECK((pde & k_sdm_write));

    SECTION("write access sets R/W")
    {
        REQUIRE(pmap_enter(pmap, va, frame, k_prot_read | k_prot_write) == toll::k_ok);
        pte = raw_pte(pmap, va);
        CHECK((pte & (k_sdm_present | k_sdm_write | k_sdm_user)) ==
              (k_sdm_present | k_sdm_write | k_sdm_user));
        REQUIRE(extract_into(pmap_extract(pmap, va), nullptr, &prot));
        CHECK((prot & k_prot_write));
    }
    SECTION("PROT_NONE keeps the frame in a not-present entry")
    {
        REQUIRE(pmap_enter(pmap, va, frame, k_prot_none) == toll::k_ok);
        pte = raw_pte(pmap, va);
        CHECK_FALSE((pte & k_sdm_present));
        CHECK((pte & k_sdm_frame) == frame);
        PhysAddr pa = 0;
        prot = 99;
        REQUIRE(extract_into(pmap_extract(pmap, va), &pa, &prot));
        CHECK(pa == frame);
        CHECK(prot == k_prot_none);
    }
    SECTION("protect changes the bits and keeps the frame")
    {
        pmap_protect(pmap, va, va + k_page_size, k_prot_read | k_prot_write);
        pte = raw_pte(pmap, va);
        CHECK((pte & k_sdm_frame) == frame);
        CHECK((pte & k_sdm_present));
        CHECK((pte & k_sdm_write));

        pmap_protect(pmap, va, va + k_page_size, k_prot_none);
        pte = raw_pte(pmap, va);
        CHECK((pte & k_sdm_frame) == frame);
        CHECK_FALSE((pte & k_sdm_present));
        PhysAddr pa = 0;
        REQUIRE(extract_into(pmap_extract(pmap, va), &pa, &prot));
        CHECK(pa == frame);
        CHECK(prot == k_prot_none);

        // Back from PROT_NONE: the same frame, read-only.
        pmap_protect(pmap, va, va + k_page_size, k_prot_read);
        pte = raw_pte(pmap, va);
        CHECK((pte & k_sdm_frame) == frame);
        CHECK((pte & k_sdm_present));
        CHECK((pte & k_sdm_user));
        CHECK_FALSE((pte & k_sdm_write));
    }
    SECTION("protect of an unmapped page maps nothing and allocates nothing")
    {
        size_t free_before = phys_allocator().free_pages();
        pmap_protect(pmap, va + k_page, va + k_page + k_page_size, k_prot_read | k_prot_write);
        CHECK_FALSE(pmap_extract(pmap, va + k_page).has_value());
        pmap_protect(pmap, 0x40000000, 0x40000000 + k_page_size, k_prot_read | k_prot_write);
        CHECK_FALSE(pmap_extract(pmap, 0x40000000).has_value());
        CHECK(raw_pde(pmap, 0x40000000) == 0);
        CHECK(phys_allocator().free_pages() == free_before);
    }
    pmap_destroy(pmap);
}

TEST_CASE("pmap i386: remove returns the frame and leaves no mapping")
{
    PmapWorld world;
    Pmap* pmap = world.create();
    constexpr uint32_t va = 0x00400000;
    constexpr PhysAddr frame = 0xABCDE000;
    REQUIRE(pmap_enter(pmap, va, frame, k_prot_read | k_prot_write) == toll::k_ok);
    REQUIRE(pmap_enter(pmap, va + k_page, frame + k_page, k_prot_none) == toll::k_ok);

    CHECK(allocated(pmap_remove_page(pmap, va)) == frame);
    CHECK_FALSE(pmap_extract(pmap, va).has_value());
    CHECK(raw_pte(pmap, va) == 0);
    CHECK(failure(pmap_remove_page(pmap, va)) == toll::k_enoent);
    // A PROT_NONE page is still a mapping: remove hands its frame back.
    CHECK(allocated(pmap_remove_page(pmap, va + k_page)) == frame + k_page);
    CHECK_FALSE(pmap_extract(pmap, va + k_page).has_value());
    // Unmapped, with and without a page table.
    CHECK(failure(pmap_remove_page(pmap, va + 2 * k_page)) == toll::k_enoent);
    CHECK(failure(pmap_remove_page(pmap, 0x80000000)) == toll::k_enoent);
    CHECK(raw_pde(pmap, 0x80000000) == 0);
    pmap_destroy(pmap);
}

TEST_CASE("pmap i386: page tables come one per 4 MB on demand and go with the pmap")
{
    PmapWorld world;
    uint64_t tables_at_start = counter("vm.pmap.page_tables");
    Pmap* pmap = world.create();
    size_t after_create = phys_allocator().free_pages();
    CHECK(after_create == world.free_at_start - 1);
    auto tables = [&] { return after_create - phys_allocator().free_pages(); };

    // Frames really allocated, to see that destroy leaves them alone.
    std::vector<PhysAddr> frames;
    auto enter = [&](uint32_t va) {
        PhysAddr pa = allocated(phys_allocator().alloc(0));
        frames.push_back(pa);
        REQUIRE(pmap_enter(pmap, va, pa, k_prot_read) == toll::k_ok);
    };
    auto tables_now = [&] { return tables() - frames.size(); };

    enter(0x00001000);
    CHECK(tables_now() == 1);
    enter(0x00002000);
    enter(0x003FF000);
    CHECK(tables_now() == 1);
    enter(0x00400000);
    CHECK(tables_now() == 2);
    enter(k_last_user_page);
    enter(0xBFC00000);
    CHECK(tables_now() == 3);
    CHECK(counter("vm.pmap.page_tables") == tables_at_start + 3);
    // A new page table holds no stale entries (allocated memory is garbage).
    CHECK_FALSE(pmap_extract(pmap, 0x00000000).has_value());
    CHECK_FALSE(pmap_extract(pmap, 0x00401000).has_value());
    CHECK_FALSE(pmap_extract(pmap, 0xBFC01000).has_value());

    pmap_destroy(pmap);
    CHECK(counter("vm.pmap.page_tables") == tables_at_start);
    // The directory and the tables are back; the mapped frames are not the pmap's.
    CHECK(phys_allocator().free_pages() == world.free_at_start - frames.size());
    for (PhysAddr pa : frames)
        phys_allocator().free(pa, 0);
    CHECK(phys_allocator().free_pages() == world.free_at_start);
    CHECK(phys_allocator().check());
}

TEST_CASE("pmap i386: only the current pmap's changes invalidate TLB entries")
{
    PmapWorld world;
    Pmap* a = world.create();
    Pmap* b = world.create();
    constexpr uint32_t va = 0x08048000;

    // Nothing is current: no change needs a flush.
    REQUIRE(pmap_enter(a, va, 0x100000, k_prot_read) == toll::k_ok);
    REQUIRE(pmap_enter(a, va, 0x101000, k_prot_read) == toll::k_ok);
    pmap_protect(a, va, va + k_page_size, k_prot_read | k_prot_write);
    CHECK(allocated(pmap_remove_page(a, va)) == 0x101000);
    CHECK(g_invlpg.empty());
    CHECK(g_cr3_loads.empty());

    pmap_activate(a);
    CHECK(pmap_current() == a);
    REQUIRE(g_cr3_loads.size() == 1);
    CHECK(g_cr3_loads[0] == virt_to_phys(a));
    pmap_activate(a);
    CHECK(g_cr3_loads.size() == 1); // same address space: CR3 is not reloaded

    REQUIRE(pmap_enter(a, va, 0x102000, k_prot_read | k_prot_write) == toll::k_ok);
    g_invlpg.clear(); // a new mapping may or may not flush; changes must
    REQUIRE(pmap_enter(a, va, 0x103000, k_prot_read | k_prot_write) == toll::k_ok);
    CHECK(g_invlpg == std::vector<uint32_t>{va});
    pmap_protect(a, va, va + k_page_size, k_prot_read);
    CHECK(g_invlpg == std::vector<uint32_t>{va, va});
    pmap_protect(a, va, va + k_page_size, k_prot_none);
    CHECK(g_invlpg == std::vector<uint32_t>{va, va, va});
    CHECK(allocated(pmap_remove_page(a, va)) == 0x103000);
    CHECK(g_invlpg == std::vector<uint32_t>{va, va, va, va});

    // Changes to a pmap that is not active flush nothing.
    g_invlpg.clear();
    REQUIRE(pmap_enter(b, va, 0x104000, k_prot_read) == toll::k_ok);
    REQUIRE(pmap_enter(b, va, 0x105000, k_prot_read) == toll::k_ok);
    pmap_protect(b, va, va + k_page_size, k_prot_none);
    CHECK(allocated(pmap_remove_page(b, va)) == 0x105000);
    CHECK(g_invlpg.empty());

    pmap_activate(b);
    REQUIRE(g_cr3_loads.size() == 2);
    CHECK(g_cr3_loads[1] == virt_to_phys(b));
    // Destroying the current pmap switches to the kernel's directory first.
    pmap_destroy(b);
    CHECK(pmap_current() == nullptr);
    REQUIRE(g_cr3_loads.size() == 3);
    CHECK(g_cr3_loads[2] == k_kernel_pd);
    pmap_destroy(a);
    CHECK(g_cr3_loads.size() == 3);
    CHECK(phys_allocator().free_pages() == world.free_at_start);
}

TEST_CASE("pmap i386: enter fails with ENOMEM when no page table can be had")
{
    PmapWorld world;
    Pmap* pmap = world.create();
    REQUIRE(pmap_enter(pmap, 0x1000, 0x200000, k_prot_read) == toll::k_ok);
    std::vector<PhysAddr> hoard;
    for (Result<PhysAddr> pa = phys_allocator().alloc(0); pa; pa = phys_allocator().alloc(0))
        hoard.push_back(pa.value());
    REQUIRE(phys_allocator().free_pages() == 0);
    CHECK(failure(phys_allocator().alloc(0)) == toll::k_enomem); // a reason, not an address

    CHECK(pmap_create() == nullptr);
    CHECK(pmap_enter(pmap, 0x00400000, 0x300000, k_prot_read) == toll::k_enomem);
    CHECK(raw_pde(pmap, 0x00400000) == 0); // no half-made page table
    CHECK_FALSE(pmap_extract(pmap, 0x00400000).has_value());
    // Where the page table exists, no memory is needed.
    CHECK(pmap_enter(pmap, 0x2000, 0x201000, k_prot_read) == toll::k_ok);
    PhysAddr pa = 0;
    CHECK(extract_into(pmap_extract(pmap, 0x1000), &pa, nullptr));
    CHECK(pa == 0x200000);

    // With one page back, the same enter succeeds.
    phys_allocator().free(hoard.back(), 0);
    hoard.pop_back();
    CHECK(pmap_enter(pmap, 0x00400000, 0x300000, k_prot_read) == toll::k_ok);
    CHECK(extract_into(pmap_extract(pmap, 0x00400000), &pa, nullptr));
    CHECK(pa == 0x300000);

    pmap_destroy(pmap);
    for (PhysAddr page : hoard)
        phys_allocator().free(page, 0);
    CHECK(phys_allocator().free_pages() == world.free_at_start);
    CHECK(phys_allocator().check());
}
