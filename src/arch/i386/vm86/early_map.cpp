// Early mappings and the ordering they depend on (early_map.h).
#include "arch/i386/vm86/early_map.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/physmem.h"
#include "kernel/kern/panic.h"

namespace toll::i386 {
namespace {
bool g_ready;
} // namespace

void early_map_enable()
{
    g_ready = true;
}

bool early_map_ready()
{
    return g_ready;
}

volatile uint32_t* early_map_page(uint64_t pa)
{
    // The ordering the seed's kernel broke: the mapping must exist before
    // anything writes through it.
    if (!g_ready)
        panic("early mapping of physical 0x%llx before the page tables exist: "
              "i386_boot must call direct_map_init first",
              (unsigned long long)pa);
    if (pa >= arch::direct_map_limit())
        panic("early mapping of physical 0x%llx beyond the direct map (0x%llx)",
              (unsigned long long)pa, (unsigned long long)arch::direct_map_limit());
    return static_cast<volatile uint32_t*>(
        arch::phys_to_virt(pa & ~uint64_t(arch::k_page_size - 1)));
}

bool early_map_set_ready_for_test(bool ready)
{
    bool old = g_ready;
    g_ready = ready;
    return old;
}

} // namespace toll::i386
