// In-kernel tests of the address-space layouts: what a user page directory
// may hold, the double fault's clean PANIC, and the 4/4 direct map.
#include "arch/i386/cpu.h"
#include "arch/i386/isolation.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/ktest.h"
#include "kernel/proc/thread.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmspace.h"

namespace toll::i386 {

KTEST("i386.layout.user_directory_holds_only_user_and_trampoline")
{
    vm::VmSpace* space = vm::vmspace_create();
    KEXPECT(space != nullptr);
    if (!space)
        return;
    constexpr uintptr_t k_low = 0x08048000, k_high = 0xBF000000;
    KEXPECT_EQ(vm::vmspace_map(space, k_low, 8192, arch::k_prot_read | arch::k_prot_write), k_ok);
    KEXPECT_EQ(vm::vmspace_map(space, k_high, 4096, arch::k_prot_read), k_ok);
    KEXPECT(vm::vmspace_fault(space, k_low, true) == k_ok);
    KEXPECT(vm::vmspace_fault(space, k_high, false) == k_ok);
    DirectoryCheck check = check_user_directory(space->pmap);
    KEXPECT_EQ(check.user_tables, 2u);
    KEXPECT_EQ(check.violations, 0u);
    vm::vmspace_destroy(space);
    ktest::metric("vm.user_limit_mb", arch::user_space_limit() >> 20, "MB");
}

KTEST("i386.layout.direct_map_covers_managed_memory")
{
    // Every page the allocator hands out is reachable through the direct map;
    // under 4/4 the map reaches past 896 MB when the machine has more.
    arch::PhysAddr limit = arch::direct_map_limit();
    ktest::metric("vm.direct_map_mb", limit >> 20, "MB");
    Result<arch::PhysAddr> page = vm::phys_allocator().alloc(0);
    KEXPECT(page.ok());
    if (!page)
        return;
    arch::PhysAddr pa = page.value();
    KEXPECT(pa < limit);
    auto* p = static_cast<volatile uint32_t*>(arch::phys_to_virt(pa));
    *p = 0x5AFE;
    KEXPECT_EQ(*p, 0x5AFEu);
    KEXPECT_EQ(arch::virt_to_phys(const_cast<uint32_t*>(p)), pa);
    vm::phys_allocator().free(pa, 0);
}

namespace {

// Recurses until the stack runs into its guard page.
[[gnu::noinline]] unsigned dive(unsigned depth)
{
    volatile char frame[512];
    frame[0] = static_cast<char>(depth);
    // 16 KB of stack is gone long before a billion frames.
    return depth < 1000000000u ? dive(depth + 1) + frame[0] : 0;
}

void overflow(void*)
{
    dive(0);
}

} // namespace

// Runs a kernel thread on a 16 KB stack with an unmapped guard page below it
// (in the kernel-window area) and lets it recurse. The run must end with a
// clean PANIC from the double-fault task, in every layout.
KTEST("destructive.i386.kernel_stack_overflow_panics_cleanly")
{
    constexpr unsigned k_guard = 15, k_pages = 4;
    for (unsigned i = 0; i < k_pages; ++i) {
        arch::PhysAddr pa = vm::phys_allocator().alloc(0).value(); // a fresh boot has plenty
        *kernel_window_pte(k_guard + 1 + i) =
            static_cast<uint32_t>(pa) | k_pte_present | k_pte_write;
    }
    *kernel_window_pte(k_guard) = 0; // the guard
    uintptr_t top = KERNEL_WINDOW_BASE + (k_guard + 1 + k_pages) * 4096;
    proc::Thread* t = proc::thread_alloc("overflow");
    KEXPECT(t != nullptr);
    arch::context_init_kernel(t->context, top, overflow, nullptr);
    proc::make_runnable(t);
    proc::yield();
    ktest::fail(__FILE__, __LINE__, "the overflowing thread came back");
}

} // namespace toll::i386
