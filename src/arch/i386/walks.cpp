// vm.walks=count: counting page walks through the accessed bits.
//
// Intel SDM Vol. 3, 4.8: the processor sets the accessed flag (bit 5) of every
// paging-structure entry it uses to translate an address, when it walks the
// tables; a translation it finds in the TLB sets nothing. QEMU and Bochs do
// the same in their emulated walks. Without PCID (32-bit paging has none) a
// CR3 load flushes every non-global translation (4.10.4.1), so after the load
// the accessed bits that get set are exactly the walks of that stretch of
// execution, each entry counted once however often it is walked again.
#include "arch/i386/walks.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "lib/string.h"

extern "C" {
bool i386_walks_counting = false;
}

namespace toll::i386 {
namespace {

TOLL_PARAM(g_param_walks, "vm.walks",
           "count: count page walks between CR3 loads (slow; measuring)");
TOLL_COUNTER(g_walk_entries, "vm.walks.entries");
TOLL_COUNTER(g_walk_translations, "vm.walks.translations");
TOLL_COUNTER(g_walk_harvests, "vm.walks.harvests");

uint32_t* directory_at(uint32_t phys)
{
    return static_cast<uint32_t*>(arch::phys_to_virt(phys));
}

// Counts and clears the accessed bits of @p dir and of the tables it points
// to. A 4 MB entry is a translation; a table entry counts as one entry walked
// and its page table's accessed entries as translations.
void harvest_directory(uint32_t* dir)
{
    for (unsigned i = 0; i < k_entries; ++i) {
        uint32_t pde = dir[i];
        if (!(pde & k_pte_present))
            continue;
        if (pde & k_pte_accessed) {
            dir[i] = pde & ~k_pte_accessed;
            g_walk_entries.add();
            if (pde & k_pde_large)
                g_walk_translations.add();
        }
        if (pde & k_pde_large)
            continue;
        uint32_t* pt = directory_at(pde & k_pte_frame);
        for (unsigned j = 0; j < k_entries; ++j) {
            if ((pt[j] & (k_pte_present | k_pte_accessed)) == (k_pte_present | k_pte_accessed)) {
                pt[j] &= ~k_pte_accessed;
                g_walk_entries.add();
                g_walk_translations.add();
            }
        }
    }
}

} // namespace

void walks_init()
{
    static const char* const names[] = {"off", "count"};
    if (param_get_choice("vm.walks", names, 0) != 1)
        return;
    i386_walks_counting = true;
    kprintf("vm: counting page walks between CR3 loads (vm.walks=count)\n");
}

extern "C" void i386_walks_harvest()
{
    if (!i386_walks_counting)
        return;
    g_walk_harvests.add();
    arch::Pmap* pmap = arch::pmap_current();
    // The kernel's view: the process's full directory, or under 4/4 (and
    // with no process) the kernel's own.
    uint32_t kernel_view = pmap && layout() != Layout::split_4_4
                               ? static_cast<uint32_t>(arch::virt_to_phys(pmap))
                               : kernel_page_directory_phys();
    harvest_directory(directory_at(kernel_view));
    // The user's view under the isolated layouts: user tables (shared with
    // the kernel's view under 3/1-pti, counted once) and the trampoline.
    if (layout_isolated())
        harvest_directory(
            directory_at(pmap ? pmap_user_directory_phys(pmap) : empty_user_directory_phys()));
}

} // namespace toll::i386
