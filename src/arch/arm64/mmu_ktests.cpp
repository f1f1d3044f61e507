// In-kernel tests of the arm64 MMU: the identity map is live, the pmap maps
// and protects user pages through the real tables, and user copies survive
// bad pointers.
#include "arch/arm64/mmu.h"
#include "kernel/kern/ktest.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmem.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/pmap.h"

namespace toll::arm64 {
namespace {
constexpr uint64_t k_sctlr_m = 1;
constexpr uint64_t k_test_va = 0x00400000;
} // namespace

// cpu_init turned translation on, with the kernel's tables (or a process's,
// which share them) in TTBR0, and the kernel still runs: identity map.
KTEST("arm64.mmu.on_with_kernel_tables")
{
    uint64_t sctlr, ttbr0;
    asm volatile("mrs %0, sctlr_el1" : "=r"(sctlr));
    asm volatile("mrs %0, ttbr0_el1" : "=r"(ttbr0));
    KEXPECT(sctlr & k_sctlr_m);
    vm::Pmap* current = vm::pmap_current();
    uint64_t expected = current ? vm::virt_to_phys(current) : kernel_l1_phys();
    KEXPECT_EQ(ttbr0 & k_desc_address, expected);
    KEXPECT_EQ(vm::user_space_limit(), k_user_limit);
}

// The granule in TCR_EL1.TG0 is the one the kernel was built for (the page
// size of kernel/vm/physmem.h): Arm ARM D13.2.120, 0b00 = 4 KB, 0b10 = 16 KB.
KTEST("arm64.mmu.granule_is_the_page_size")
{
    uint64_t tcr;
    asm volatile("mrs %0, tcr_el1" : "=r"(tcr));
    unsigned tg0 = (tcr >> 14) & 3;
    KEXPECT_EQ(tg0, vm::k_page_size == 16384 ? 2u : 0u);
    KEXPECT(vm::k_page_size == 4096 || vm::k_page_size == 16384);
}

// No process: a fault on a user address cannot be satisfied, so every copy
// fails with EFAULT instead of panicking; kernel addresses are refused.
KTEST("arm64.uaccess.bad_pointers_give_efault")
{
    char buf[8];
    KEXPECT_EQ(sys::copyin(buf, 0x1000, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyin(buf, 0, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyout(k_user_limit - k_page_size, buf, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyin(buf, k_user_limit, sizeof buf), k_efault);     // the GIC
    KEXPECT_EQ(sys::copyin(buf, k_user_limit - 4, sizeof buf), k_efault); // crosses the top
    KEXPECT_EQ(sys::copyin(buf, ~uint64_t(0) - 8, 0x20), k_efault);       // wraps around
    KEXPECT_EQ(sys::copyinstr(buf, 0x2000, sizeof buf), -static_cast<long>(k_efault));
}

// A page entered in a fresh pmap is reachable through TTBR0 once the pmap is
// active, copies through it work, a read-only page refuses copyout, and
// removal leaves nothing mapped.
KTEST("arm64.pmap.live_map_copy_protect_unmap")
{
    size_t free_before = vm::phys_allocator().free_pages();
    vm::Pmap* pmap = vm::pmap_create();
    KEXPECT(pmap != nullptr);
    if (!pmap)
        return;
    vm::PhysAddr page = vm::phys_allocator().alloc(0);
    KEXPECT_EQ(vm::pmap_enter(pmap, k_test_va, page, vm::k_prot_read | vm::k_prot_write), k_ok);
    vm::PhysAddr pa = 0;
    unsigned prot = 0;
    KEXPECT(vm::pmap_extract(pmap, k_test_va + 12, &pa, &prot));
    KEXPECT_EQ(pa, page + 12);
    KEXPECT_EQ(prot, unsigned(vm::k_prot_read | vm::k_prot_write));
    // The kernel's devices are not user pages, whatever the table holds there.
    KEXPECT(!vm::pmap_extract(pmap, k_device_start, nullptr, nullptr));

    vm::Pmap* before = vm::pmap_current();
    vm::pmap_activate(pmap);
    const uint32_t value = 0xC0FFEE;
    Errno out = sys::copyout(k_test_va + 16, &value, sizeof value);
    uint32_t back = 0;
    Errno in = sys::copyin(&back, k_test_va + 16, sizeof back);
    vm::pmap_protect(pmap, k_test_va, k_test_va + k_page_size, vm::k_prot_read);
    Errno out_read_only = sys::copyout(k_test_va, &value, sizeof value);
    vm::pmap_activate(before);

    KEXPECT_EQ(out, k_ok);
    KEXPECT_EQ(in, k_ok);
    KEXPECT_EQ(back, value);
    KEXPECT_EQ(static_cast<uint32_t*>(vm::phys_to_virt(page))[4], value);
    KEXPECT_EQ(out_read_only, k_efault);
    KEXPECT(vm::pmap_extract(pmap, k_test_va, nullptr, &prot));
    KEXPECT_EQ(prot, unsigned(vm::k_prot_read));
    KEXPECT_EQ(vm::pmap_remove_page(pmap, k_test_va), page);
    KEXPECT(!vm::pmap_extract(pmap, k_test_va, nullptr, nullptr));
    vm::phys_allocator().free(page, 0);
    vm::pmap_destroy(pmap);
    KEXPECT_EQ(vm::phys_allocator().free_pages(), free_before); // tables freed too
}

} // namespace toll::arm64
