// The world of the host tests that run the real VM core over the arm64
// pmap (test_reserv_arm64.cpp, test_vmspace_arm64.cpp): simulated memory
// wholly given to the allocator, page counts, the kernel heap and
// reservations reset, and address spaces made by vmspace_create. User
// accesses are modelled as the hardware and trap code would make them: a
// read or write of a page not mapped with the rights it needs faults
// through vmspace_fault, then touches the page's memory.
#pragma once
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/levels.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/reserv.h"
#include "kernel/vm/vmspace.h"
#include "pmap_world.h"

namespace pmap_world {

struct VmWorld {
    static constexpr PhysAddr k_mem_base = 0x40000000;
    const size_t size;
    SimulatedMemory mem{k_mem_base, size};
    VmSpace* space = nullptr;
    /// Free pages plus pages held unused (reservations, empty slabs) once
    /// the world is set up and before any address space exists: what every
    /// test must get back.
    size_t available_at_start = 0;

    /// 8 MB of memory at 4 KB, 16 MB at 16 KB unless @p bytes says otherwise.
    explicit VmWorld(size_t bytes = 8 * (size_t(2) << 20) / (k_page == 4096 ? 2 : 1)) : size(bytes)
    {
        phys_allocator() = PhysAllocator();
        phys_allocator().add_range(k_mem_base, size);
        PhysAddr pa = toll::test::allocated(phys_allocator().alloc(0)); // build it now
        phys_allocator().free(pa, 0);
        kmalloc_reset_for_tests();
        REQUIRE(pageref_init(k_mem_base, k_mem_base + size) == toll::k_ok);
        reserv_reset_for_tests(true);
        g_bbm = BbmChecker{g};
        available_at_start = available_pages();
        space = create();
        activate(space);
    }

    ~VmWorld()
    {
        pmap_activate(nullptr);
        reserv_reset_for_tests(false);
        kmalloc_reset_for_tests();
        phys_allocator() = PhysAllocator();
    }

    VmSpace* create()
    {
        VmSpace* s = vmspace_create();
        REQUIRE(s != nullptr);
        g_bbm.watch(l1_of(s->pmap), k_user_limit, false);
        return s;
    }

    void activate(VmSpace* s)
    {
        pmap_activate(s->pmap);
        g_bbm.set_live(l1_of(s->pmap), true);
    }

    /// vmspace_fork of @p parent; the child is not live.
    VmSpace* fork(VmSpace* parent)
    {
        VmSpace* child = vmspace_fork(parent);
        REQUIRE(child != nullptr);
        g_bbm.watch(l1_of(child->pmap), k_user_limit, false);
        return child;
    }

    void destroy(VmSpace* s)
    {
        g_bbm.forget(l1_of(s->pmap));
        if (s == space)
            space = nullptr;
        vmspace_destroy(s);
    }

    /// Maps [start, start + length) read-write, as mmap(MAP_FIXED) would.
    void map(uintptr_t start, size_t length, VmSpace* s = nullptr)
    {
        REQUIRE(vmspace_map(s ? s : space, start, length, k_rw) == toll::k_ok);
    }

    /// The physical page mapped at @p va with its rights, if any.
    static bool lookup(VmSpace* s, uintptr_t va, PhysAddr* pa, unsigned* prot)
    {
        if (!extract_into(pmap_extract(s->pmap, va), pa, prot))
            return false;
        *pa &= ~PhysAddr(k_page - 1);
        return *prot != k_prot_none;
    }

    /// A user write of @p value to the first word of page @p va of @p s:
    /// faults first when the page is absent or read-only. Returns the fault's
    /// answer (k_ok, or why it refused).
    static toll::Errno write(VmSpace* s, uintptr_t va, uint64_t value)
    {
        PhysAddr pa = 0;
        unsigned prot = 0;
        if (!lookup(s, va, &pa, &prot) || !(prot & k_prot_write)) {
            if (toll::Errno e = vmspace_fault(s, va, true); e != toll::k_ok)
                return e;
            REQUIRE(lookup(s, va, &pa, &prot));
            REQUIRE((prot & k_prot_write) != 0);
        }
        *host_words(pa) = value;
        return toll::k_ok;
    }

    /// A user read of the first word of page @p va of @p s (faulting it in).
    static uint64_t read(VmSpace* s, uintptr_t va)
    {
        PhysAddr pa = 0;
        unsigned prot = 0;
        if (!lookup(s, va, &pa, &prot)) {
            REQUIRE(vmspace_fault(s, va, false) == toll::k_ok);
            REQUIRE(lookup(s, va, &pa, &prot));
        }
        return *host_words(pa);
    }

    /// The word every page of the tests holds: its address and a generation.
    static uint64_t pattern(uintptr_t va, unsigned generation = 0)
    {
        return (uint64_t(va) << 8) | generation;
    }

    /// Writes every page of [start, end) of @p s with pattern(va, generation).
    static void fill(VmSpace* s, uintptr_t start, uintptr_t end, unsigned generation = 0)
    {
        for (uintptr_t va = start; va < end; va += k_page)
            REQUIRE(write(s, va, pattern(va, generation)) == toll::k_ok);
    }

    /// Whether every page of [start, end) of @p s reads pattern(va, generation).
    static bool holds(VmSpace* s, uintptr_t start, uintptr_t end, unsigned generation = 0)
    {
        for (uintptr_t va = start; va < end; va += k_page)
            if (read(s, va) != pattern(va, generation))
                return false;
        return true;
    }

    /// The memory that is free or held unused now (vm.phys.available_pages).
    static size_t available() { return available_pages(); }

    /// No break-before-make violation, every table of the live spaces well formed.
    void check(VmSpace* s = nullptr)
    {
        for (const std::string& v : g_bbm.violations())
            FAIL_CHECK("break-before-make: " << v);
        g_bbm.clear_violations();
        VmSpace* which = s ? s : space;
        for (const std::string& w :
             toll::test::check_well_formed(l1_of(which->pmap), k_user_limit, g))
            FAIL_CHECK("malformed: " << w);
    }
};

} // namespace pmap_world
