// In-kernel tests of the i386 trap machinery and the pmap on the live MMU.
#include "arch/i386/cpu.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/trap.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/ktest.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/phys.h"

namespace toll::i386 {
namespace {

unsigned g_seen_vector;
uint32_t g_seen_eip;

bool record_breakpoint(arch::TrapFrame& f)
{
    g_seen_vector = f.vector;
    g_seen_eip = f.eip;
    return true;
}

} // namespace

KTEST("i386.trap.breakpoint_round_trip")
{
    set_exception_hook(k_vec_breakpoint, record_breakpoint);
    uint32_t after;
    asm volatile("int3\n\t"
                 "1: movl $1b, %0"
                 : "=r"(after));
    set_exception_hook(k_vec_breakpoint, nullptr);
    KEXPECT_EQ(g_seen_vector, k_vec_breakpoint);
    KEXPECT_EQ(g_seen_eip, after); // a trap: eip points after int3
}

KTEST("i386.trap.timer_interrupts_arrive")
{
    Counter* timer = counter_find("cpu.irq.timer");
    KEXPECT(timer != nullptr);
    uint64_t before = timer->value;
    asm volatile("sti");
    for (int i = 0; i < 3; ++i)
        asm volatile("hlt");
    asm volatile("cli");
    KEXPECT(timer->value >= before + 1);
}

KTEST("i386.uaccess.bad_pointers_give_efault")
{
    char buf[8];
    // No process: the fault cannot be satisfied, the copy must fail cleanly.
    KEXPECT_EQ(sys::copyin(buf, 0x1000, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyin(buf, 0, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyout(0xBFFFF000, buf, sizeof buf), k_efault);
    KEXPECT_EQ(sys::copyin(buf, KERNEL_BASE, sizeof buf), k_efault);     // kernel address
    KEXPECT_EQ(sys::copyin(buf, KERNEL_BASE - 4, sizeof buf), k_efault); // crosses the top
    KEXPECT_EQ(sys::copyin(buf, 0xFFFFFFF0u, 0x20), k_efault);           // wraps around
    KEXPECT_EQ(sys::copyinstr(buf, 0x2000, sizeof buf).error(), k_efault);
}

KTEST("i386.pmap.live_map_write_unmap")
{
    arch::Pmap* pmap = arch::pmap_create();
    KEXPECT(pmap != nullptr);
    if (!pmap)
        return;
    Result<arch::PhysAddr> got = vm::phys_allocator().alloc(0);
    KEXPECT(got.ok());
    if (!got) {
        arch::pmap_destroy(pmap);
        return;
    }
    arch::PhysAddr page = got.value();
    constexpr uint32_t k_va = 0x08048000;
    KEXPECT_EQ(arch::pmap_enter(pmap, k_va, page, arch::k_prot_read | arch::k_prot_write), k_ok);
    Optional<arch::Mapping> m = arch::pmap_extract(pmap, k_va + 12);
    KEXPECT(m.has_value());
    KEXPECT_EQ(m.value_or({}).pa, page + 12);
    KEXPECT(m.value_or({}).prot & arch::k_prot_write);
    arch::Pmap* before = arch::pmap_current();
    if (layout() == Layout::split_4_4) {
        // The kernel's own directory must not see the user mapping.
        arch::pmap_activate(pmap);
        uint32_t* kernel_pd =
            static_cast<uint32_t*>(arch::phys_to_virt(kernel_page_directory_phys()));
        KEXPECT_EQ(kernel_pd[pd_index(k_va)], 0u);
        arch::pmap_activate(before);
        static_cast<uint32_t*>(arch::phys_to_virt(page))[4] = 0xC0FFEE;
    } else {
        arch::pmap_activate(pmap);
        *reinterpret_cast<volatile uint32_t*>(k_va + 16) = 0xC0FFEE;
        arch::pmap_activate(before);
    }
    KEXPECT_EQ(static_cast<uint32_t*>(arch::phys_to_virt(page))[4], 0xC0FFEEu);
    arch::pmap_protect(pmap, k_va, k_va + arch::k_page_size, arch::k_prot_read);
    m = arch::pmap_extract(pmap, k_va);
    KEXPECT(m.has_value());
    KEXPECT(!(m.value_or({}).prot & arch::k_prot_write));
    KEXPECT_EQ(arch::pmap_remove_page(pmap, k_va).value_or(0), page);
    KEXPECT(!arch::pmap_extract(pmap, k_va).has_value());
    // The kernel's addresses are never user mappings of the pmap.
    KEXPECT(!arch::pmap_extract(pmap, KERNEL_BASE + 0x100000).has_value());
    vm::phys_allocator().free(page, 0);
    arch::pmap_destroy(pmap);
}

} // namespace toll::i386
