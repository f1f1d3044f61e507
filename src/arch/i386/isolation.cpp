// The isolation self-check: walks the directory user mode runs on and counts
// entries it must not have. Under 3/1-pti and 4/4 that directory may hold only
// user page tables and the trampoline slot; under 3/1 its kernel quarter must
// equal the kernel's own. Used by a ktest and by Toll's system call 1003,
// which checks every live process.
#include "arch/i386/isolation.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/console.h"
#include "kernel/proc/process.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"

namespace toll::i386 {

DirectoryCheck check_user_directory(arch::Pmap* pmap)
{
    auto* dir =
        static_cast<const uint32_t*>(arch::phys_to_virt(arch::pmap_user_directory_phys(pmap)));
    auto* kernel = static_cast<const uint32_t*>(arch::phys_to_virt(kernel_page_directory_phys()));
    DirectoryCheck result{};
    unsigned user_slots = arch::user_space_limit() >> 22;
    auto violation = [&](unsigned i, uint32_t e, const char* why) {
        if (result.violations++ == 0)
            kprintf("isolation: directory entry %u (0x%08x) %s\n", i, e, why);
    };
    for (unsigned i = 0; i < k_entries; ++i) {
        uint32_t e = dir[i];
        if (!(e & k_pte_present))
            continue;
        if (i < user_slots) {
            if (!(e & k_pte_user) || (e & k_pde_large))
                violation(i, e, "in user space is not a user page table");
            else
                ++result.user_tables;
        } else if (i == k_entries - 1) {
            if (e != trampoline_pde())
                violation(i, e, "is not the trampoline");
        } else if (layout_isolated()) {
            violation(i, e, "maps kernel memory into user mode's directory");
        } else if (e != kernel[i]) {
            violation(i, e, "differs from the kernel's own");
        }
    }
    return result;
}

} // namespace toll::i386

namespace toll::sys {

// Toll's call 1003: check_isolation(unsigned* directories). Walks the user
// directory of every live process; returns the number of bad entries found
// and stores how many directories it checked.
long sys_check_isolation(const SyscallArgs& a)
{
    struct Tally {
        unsigned directories = 0;
        unsigned violations = 0;
    } tally;
    proc::for_each_process(
        [](proc::Process& p, void* context) {
            auto* t = static_cast<Tally*>(context);
            if (!p.vm)
                return;
            ++t->directories;
            t->violations += i386::check_user_directory(p.vm->pmap).violations;
        },
        &tally);
    if (a.a[0] && copyout(a.a[0], &tally.directories, sizeof tally.directories) != k_ok)
        return -k_efault;
    return tally.violations;
}

} // namespace toll::sys
