// The hardware half of the arm64 MMU code, stubbed for the host tests:
// every descriptor store, TLB invalidation, TTBR0 load and instruction-cache
// sync is logged (pmap_world.h's g_log) and fed to the break-before-make
// checker; interrupt masking is recorded so that a store made with
// interrupts on inside a break-before-make sequence shows.
#include "pmap_world.h"
#include "arch/arm64/asid.h"

namespace pmap_world {

Log g_log;
BbmChecker g_bbm{g};

} // namespace pmap_world

using namespace pmap_world;

namespace toll::arm64 {

PhysAddr empty_user_table_phys()
{
    return k_empty_user_table;
}

void set_user_table(PhysAddr)
{
    ++g_log.ttbr_loads;
    g_bbm.on_tlbi_all(); // no ASIDs: a TTBR0 load empties the TLB
}

void invalidate_page(uint64_t va)
{
    ++g_log.tlbi_pages;
    g_bbm.on_tlbi(va);
}

void store_entry(uint64_t* slot, uint64_t value)
{
    ++g_log.stores;
    g_bbm.on_store(slot, value);
    *slot = value;
}

// One shootdown: a single page counts as a TLBI by page, anything longer as
// a range (the real one may turn it into a whole-ASID flush, which covers it).
void invalidate_range(unsigned, uint64_t va, uint64_t length, bool)
{
    if (length == k_page) {
        ++g_log.tlbi_pages;
        g_bbm.on_tlbi(va);
        return;
    }
    ++g_log.tlbi_ranges;
    g_bbm.on_tlbi_range(va, length);
}

size_t shootdown_ceiling()
{
    return 64;
}

void sync_icache_range(const void* start, size_t length)
{
    g_log.icache.emplace_back(virt_to_phys(start), length);
}

} // namespace toll::arm64

// ASIDs (arch/arm64/asid.h), modelled conservatively: every activation
// empties the TLB, as a switch without ASIDs does, and a pmap that ran once
// has its entries invalidated whenever they change, live or not.
namespace toll::arm64::asid {

void activate(PhysAddr l1_phys, uint64_t& context)
{
    context = 1;
    set_user_table(l1_phys);
}

unsigned tlb_tag(uint64_t context)
{
    return context ? 1 : k_tag_none;
}

void activate_none()
{
    set_user_table(k_empty_user_table);
}

void release(uint64_t& context)
{
    context = 0;
}

} // namespace toll::arm64::asid

namespace toll::arch {

bool interrupts_disable()
{
    bool were = g_log.interrupts_on;
    g_log.interrupts_on = false;
    return were;
}

void interrupts_restore(bool were_enabled)
{
    g_log.interrupts_on = were_enabled;
}

} // namespace toll::arch

namespace toll {
// The kernel reads vm.superpages and vm.fork from the command line; the
// host has none, so every parameter takes its default.
unsigned long param_get_ulong(const char*, unsigned long fallback)
{
    return fallback;
}

size_t param_get_choice(const char*, const char* const*, size_t, size_t fallback)
{
    return fallback;
}
} // namespace toll
