// In-kernel tests of the arm64 MMU: the kernel lives in TTBR1, the pmap maps
// and protects user pages through the real tables, and user copies survive
// bad pointers.
#include "arch/arm64/asid.h"
#include "arch/arm64/mmu.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/ktest.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/phys.h"
#include "lib/string.h"

namespace toll::arm64 {
namespace {
constexpr uint64_t k_sctlr_m = 1;
constexpr uint64_t k_test_va = 0x00400000;
} // namespace

// entry.S turned translation on with the kernel's tables in TTBR1, and
// cpu_init left TTBR0 to user space: a process's table, or the empty one.
KTEST("arm64.mmu.on_with_kernel_tables")
{
    uint64_t sctlr, ttbr0, ttbr1;
    asm volatile("mrs %0, sctlr_el1" : "=r"(sctlr));
    asm volatile("mrs %0, ttbr0_el1" : "=r"(ttbr0));
    asm volatile("mrs %0, ttbr1_el1" : "=r"(ttbr1));
    KEXPECT(sctlr & k_sctlr_m);
    arch::Pmap* current = arch::pmap_current();
    uint64_t expected = current ? arch::virt_to_phys(current) : empty_user_table_phys();
    KEXPECT_EQ(ttbr0 & k_desc_address, expected);
    KEXPECT_EQ(ttbr1 & k_desc_address, kernel_l1_phys());
    KEXPECT_EQ(arch::user_space_limit(), k_user_limit);
    KEXPECT(arch::user_space_limit() >= (1ull << 30)); // at least a gigabyte of user space
}

// The split is the hardware's: an address translation as EL0 (AT S1E0R)
// of kernel memory fails, as EL1 (AT S1E1R) it gives the physical address;
// and the low identity map the boot needed is gone. PAR_EL1 (Arm ARM
// D13.2.99): F [0] set means the translation faulted; PA in [47:12].
KTEST("arm64.mmu.kernel_only_in_the_upper_half")
{
    auto translate = [](uint64_t va, bool as_el0) {
        if (as_el0)
            asm volatile("at s1e0r, %0; isb" ::"r"(va));
        else
            asm volatile("at s1e1r, %0; isb" ::"r"(va));
        uint64_t par;
        asm volatile("mrs %0, par_el1" : "=r"(par));
        return par;
    };
    constexpr uint64_t k_par_fault = 1, k_par_pa = 0x0000FFFFFFFFF000ull;
    static uint64_t probe;
    auto va = reinterpret_cast<uint64_t>(&probe);
    KEXPECT(va >= k_kernel_base);
    uint64_t par = translate(va, false);
    KEXPECT(!(par & k_par_fault));
    KEXPECT_EQ((par & k_par_pa) | (va & 0xFFF), arch::virt_to_phys(&probe));
    KEXPECT(translate(va, true) & k_par_fault);
    KEXPECT(translate(arch::virt_to_phys(&probe), false) & k_par_fault); // no identity map
}

// The granule in TCR_EL1.TG0 is the one the kernel was built for (the page
// size of kernel/arch/physmem.h): Arm ARM D13.2.120, 0b00 = 4 KB, 0b10 = 16 KB.
KTEST("arm64.mmu.granule_is_the_page_size")
{
    uint64_t tcr;
    asm volatile("mrs %0, tcr_el1" : "=r"(tcr));
    unsigned tg0 = (tcr >> 14) & 3;
    KEXPECT_EQ(tg0, arch::k_page_size == 16384 ? 2u : 0u);
    KEXPECT(arch::k_page_size == 4096 || arch::k_page_size == 16384);
}

// No process: a fault on a user address cannot be satisfied, so every copy
// fails with EFAULT instead of panicking; kernel addresses are refused.
KTEST("arm64.uaccess.bad_pointers_give_efault")
{
    char buf[8];
    KEXPECT_EQ(sys::copyin(buf, 0x1000, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyin(buf, 0, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyout(k_user_limit - k_page_size, buf, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyin(buf, k_user_limit, sizeof buf), k_efault);     // TTBR0's end
    KEXPECT_EQ(sys::copyin(buf, k_user_limit - 4, sizeof buf), k_efault); // crosses the top
    KEXPECT_EQ(sys::copyin(buf, ~uint64_t(0) - 8, 0x20), k_efault);       // wraps around
    KEXPECT_EQ(sys::copyinstr(buf, 0x2000, sizeof buf).error(), k_efault);
}

// The top of user space: the last page below the limit needs a level-1 entry
// of its own (the last one TTBR0 reaches) and tables under it. Copies that
// end exactly at the limit work; one byte further, or starting at the limit,
// gives EFAULT; and destroying the pmap frees every table it made.
KTEST("arm64.uaccess.top_of_user_space")
{
    size_t free_before = vm::phys_allocator().free_pages();
    arch::Pmap* pmap = arch::pmap_create();
    KEXPECT(pmap != nullptr);
    if (!pmap)
        return;
    const uintptr_t top = k_user_limit - k_page_size;
    arch::PhysAddr page = vm::phys_allocator().alloc(0).value(); // a fresh boot has plenty
    KEXPECT_EQ(arch::pmap_enter(pmap, top, page, arch::k_prot_read | arch::k_prot_write), k_ok);
    arch::Pmap* before = arch::pmap_current();
    arch::pmap_activate(pmap);
    const char text[8] = "at top";
    char back[8] = {};
    Errno out = sys::copyout(k_user_limit - sizeof text, text, sizeof text);
    Errno in = sys::copyin(back, k_user_limit - sizeof back, sizeof back);
    Errno out_over = sys::copyout(k_user_limit - sizeof text + 1, text, sizeof text);
    Errno in_over = sys::copyin(back, k_user_limit - 1, 2);
    Errno at_limit = sys::copyout(k_user_limit, text, 1);
    Result<size_t> str = sys::copyinstr(back, k_user_limit - sizeof text, sizeof back);
    arch::pmap_activate(before);
    KEXPECT_EQ(out, k_ok);
    KEXPECT_EQ(in, k_ok);
    KEXPECT(memcmp(back, text, sizeof text) == 0);
    KEXPECT_EQ(out_over, k_efault);
    KEXPECT_EQ(in_over, k_efault);
    KEXPECT_EQ(at_limit, k_efault);
    KEXPECT(str.ok() && str.value() == 6);
    KEXPECT_EQ(arch::pmap_remove_page(pmap, top).value_or(0), page);
    vm::phys_allocator().free(page, 0);
    arch::pmap_destroy(pmap);
    KEXPECT_EQ(vm::phys_allocator().free_pages(), free_before);
}

// A page entered in a fresh pmap is reachable through TTBR0 once the pmap is
// active, copies through it work, a read-only page refuses copyout, and
// removal leaves nothing mapped.
KTEST("arm64.pmap.live_map_copy_protect_unmap")
{
    size_t free_before = vm::phys_allocator().free_pages();
    arch::Pmap* pmap = arch::pmap_create();
    KEXPECT(pmap != nullptr);
    if (!pmap)
        return;
    arch::PhysAddr page = vm::phys_allocator().alloc(0).value(); // a fresh boot has plenty
    KEXPECT_EQ(arch::pmap_enter(pmap, k_test_va, page, arch::k_prot_read | arch::k_prot_write),
               k_ok);
    Optional<arch::Mapping> m = arch::pmap_extract(pmap, k_test_va + 12);
    KEXPECT(m.has_value());
    KEXPECT_EQ(m.value_or({}).pa, page + 12);
    KEXPECT_EQ(m.value_or({}).prot, unsigned(arch::k_prot_read | arch::k_prot_write));
    // The kernel's devices are not user pages, whatever the table holds there.
    KEXPECT(!arch::pmap_extract(pmap, k_device_start).has_value());

    arch::Pmap* before = arch::pmap_current();
    arch::pmap_activate(pmap);
    const uint32_t value = 0xC0FFEE;
    Errno out = sys::copyout(k_test_va + 16, &value, sizeof value);
    uint32_t back = 0;
    Errno in = sys::copyin(&back, k_test_va + 16, sizeof back);
    arch::pmap_protect(pmap, k_test_va, k_test_va + k_page_size, arch::k_prot_read);
    Errno out_read_only = sys::copyout(k_test_va, &value, sizeof value);
    arch::pmap_activate(before);

    KEXPECT_EQ(out, k_ok);
    KEXPECT_EQ(in, k_ok);
    KEXPECT_EQ(back, value);
    KEXPECT_EQ(static_cast<uint32_t*>(arch::phys_to_virt(page))[4], value);
    KEXPECT_EQ(out_read_only, k_efault);
    m = arch::pmap_extract(pmap, k_test_va);
    KEXPECT(m.has_value());
    KEXPECT_EQ(m.value_or({}).prot, unsigned(arch::k_prot_read));
    KEXPECT_EQ(arch::pmap_remove_page(pmap, k_test_va).value_or(0), page);
    KEXPECT(!arch::pmap_extract(pmap, k_test_va).has_value());
    vm::phys_allocator().free(page, 0);
    arch::pmap_destroy(pmap);
    KEXPECT_EQ(vm::phys_allocator().free_pages(), free_before); // tables freed too
}

} // namespace toll::arm64

namespace toll::arm64 {
namespace {
uint64_t count(const char* name)
{
    Counter* c = counter_find(name);
    return c ? c->value : ~uint64_t(0);
}
} // namespace

// Each cost is counted where it is paid: a descriptor store, a
// page-table page, a TTBR0 load (with a full TLB flush only when ASIDs are
// off), a TLBI by page for a live mapping that changes, an icache sync for a
// page that becomes executable, an abort (the arm64 page fault) in a user
// copy, and a TLBI by ASID when the pmap is destroyed (ASIDs on).
KTEST("arm64.pmap.counters_count_the_work")
{
    const char* names[] = {"vm.pmap.pte_stores",   "vm.pmap.ptp_allocs",     "vm.pmap.ttbr0_loads",
                           "vm.pmap.tlbi.all",     "vm.pmap.tlbi.page",      "vm.pmap.icache_syncs",
                           "cpu.traps.page_fault", "arm64.traps.data_abort", "vm.pmap.tlbi.asid"};
    constexpr size_t k_n = sizeof names / sizeof names[0];
    uint64_t before[k_n], after[k_n];
    for (size_t i = 0; i < k_n; ++i)
        before[i] = count(names[i]);
    arch::Pmap* pmap = arch::pmap_create(); // the level-1 table: one page-table page
    KEXPECT(pmap != nullptr);
    if (!pmap)
        return;
    arch::PhysAddr page = vm::phys_allocator().alloc(0).value(); // a fresh boot has plenty
    arch::Pmap* previous = arch::pmap_current();
    arch::pmap_activate(pmap); // a TTBR0 load (and again on the way back)
    KEXPECT_EQ(arch::pmap_enter(pmap, k_test_va, page, arch::k_prot_read),
               k_ok); // 2 tables, 3 stores
    arch::pmap_protect(pmap, k_test_va, k_test_va + k_page_size,
                       arch::k_prot_read | arch::k_prot_exec); // 1 store, 1 TLBI, 1 sync
    KEXPECT_EQ(arch::pmap_remove_page(pmap, k_test_va).value_or(0), page); // 2 stores, 1 TLBI
    char buf[4];
    KEXPECT_EQ(sys::copyin(buf, k_test_va, sizeof buf), k_efault); // 1 data abort
    arch::pmap_activate(previous);
    vm::phys_allocator().free(page, 0);
    arch::pmap_destroy(pmap);
    for (size_t i = 0; i < k_n; ++i)
        after[i] = count(names[i]);
    // 6 descriptor stores: 4 leaf (enter, protect, and the removal's two:
    // invalid first, cleared after the shootdown), 2 table (level 2, level
    // 3); two activations.
    const uint64_t flushes = asid::enabled() ? 0 : 2, by_asid = asid::enabled() ? 1 : 0;
    const uint64_t expected[k_n] = {6, 3, 2, flushes, 2, 1, 1, 1, by_asid};
    for (size_t i = 0; i < k_n; ++i)
        KEXPECT_EQ(after[i] - before[i], expected[i]);
}

} // namespace toll::arm64

namespace toll::arm64 {

// ASIDs: two live pmaps get distinct non-zero ASIDs, which TTBR0 carries; a
// pmap changed while another runs here keeps its ASID, and the change is
// invalidated at once by address under that ASID on every CPU (it may run
// on another), not by a TLBI ASIDE1 when it next runs here.
KTEST("arm64.asid.distinct_tagged_and_renewed")
{
    if (!asid::enabled())
        return;
    arch::Pmap* a = arch::pmap_create();
    arch::Pmap* b = arch::pmap_create();
    KEXPECT(a && b);
    if (!a || !b)
        return;
    arch::PhysAddr page = vm::phys_allocator().alloc(0).value(); // a fresh boot has plenty
    arch::Pmap* previous = arch::pmap_current();
    auto ttbr_asid = [] {
        uint64_t ttbr0;
        asm volatile("mrs %0, ttbr0_el1" : "=r"(ttbr0));
        return unsigned(ttbr0 >> 48);
    };
    arch::pmap_activate(a);
    unsigned asid_a = ttbr_asid();
    KEXPECT_EQ(arch::pmap_enter(a, k_test_va, page, arch::k_prot_read | arch::k_prot_write), k_ok);
    arch::pmap_activate(b);
    unsigned asid_b = ttbr_asid();
    // A change to a's valid entry while b is live: the TLB may hold the old one.
    uint64_t by_page = count("vm.pmap.tlbi.page");
    arch::pmap_protect(a, k_test_va, k_test_va + k_page_size, arch::k_prot_read);
    by_page = count("vm.pmap.tlbi.page") - by_page;
    uint64_t by_asid = count("vm.pmap.tlbi.asid");
    arch::pmap_activate(a);
    by_asid = count("vm.pmap.tlbi.asid") - by_asid;
    unsigned asid_a2 = ttbr_asid();
    arch::pmap_activate(previous);
    KEXPECT(asid_a != 0 && asid_b != 0 && asid_a != asid_b);
    KEXPECT_EQ(asid_a2, asid_a);
    KEXPECT_EQ(by_page, 1u);
    KEXPECT_EQ(by_asid, 0u);
    KEXPECT_EQ(arch::pmap_remove_page(a, k_test_va).value_or(0), page);
    vm::phys_allocator().free(page, 0);
    arch::pmap_destroy(a);
    arch::pmap_destroy(b);
}

} // namespace toll::arm64
