// ASID allocation for arm64 (asid.h). A pmap's context word holds the
// generation its ASID was given in (above bit 16) and the ASID (below). ASID
// 0 is reserved for "no process"; 1 .. 2^bits - 1 are handed out in order,
// and when they run out the generation moves on: every context then looks
// stale and is given a new ASID on its next activation, and one TLBI VMALLE1
// clears everything the old generation left behind.
#include "arch/arm64/asid.h"
#include "arch/arm64/mmu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "lib/string.h"

namespace toll::arm64::asid {
namespace {

TOLL_PARAM(g_param_asid, "arm64.asid",
           "on (the default): tag TLB entries with ASIDs; off: flush at every switch");
TOLL_PARAM(g_param_bits, "arm64.asid_bits",
           "use only this many ASID bits (1-16), to force rollovers");
TOLL_COUNTER(g_rollovers, "vm.pmap.asid.rollovers");
TOLL_COUNTER(g_tlbi_asid, "vm.pmap.tlbi.asid");
TOLL_COUNTER(g_assigned, "vm.pmap.asid.assigned");

constexpr unsigned k_context_shift = 16;
// Set in a live context whose TLB entries may be stale (forget()): the
// entries of its ASID are invalidated before it runs again.
constexpr uint64_t k_stale = 1ull << 63;
constexpr uint64_t k_asid_mask = (1u << k_context_shift) - 1;
// Arm ARM D13.2.64, ID_AA64MMFR0_EL1.ASIDBits [7:4]: 0b0010 = 16 bits,
// 0b0000 = 8 bits. D13.2.120, TCR_EL1.AS [36]: 1 = the ASID is 16 bits wide.
constexpr unsigned k_asidbits_shift = 4;
constexpr uint64_t k_asidbits_16 = 2, k_tcr_as = 1ull << 36;

bool g_enabled;
unsigned g_bits = 8;
uint64_t g_generation = 1;
uint64_t g_next = 1;

unsigned asid_of(uint64_t context)
{
    return static_cast<unsigned>(context & k_asid_mask);
}

bool live(uint64_t context)
{
    return context != 0 && ((context & ~k_stale) >> k_context_shift) == g_generation;
}

// TLBI ASIDE1IS: every non-global entry of one ASID (bits [63:48] of the
// operand), on every CPU.
void invalidate_asid(unsigned asid)
{
    g_tlbi_asid.add();
    asm volatile("dsb ishst\n"
                 "tlbi aside1is, %0\n"
                 "dsb ish\n"
                 "isb" ::"r"(uint64_t(asid) << 48)
                 : "memory");
}

// A new ASID for @p context, starting a new generation if none is left.
void assign(uint64_t& context)
{
    if (g_next >> g_bits) {
        g_rollovers.add();
        ++g_generation;
        g_next = 1;
        // Park TTBR0 on the empty table under the reserved ASID 0 first:
        // until the next load, the old table could still be walked
        // (speculatively) and refill entries under an old ASID that the new
        // generation is about to hand to another process.
        set_user_table(empty_user_table_phys(), 0, false);
        invalidate_all();
    }
    context = (g_generation << k_context_shift) | g_next++;
    g_assigned.add();
}

} // namespace

void init()
{
    static const char* const names[] = {"on", "off"};
    g_enabled = param_get_choice("arm64.asid", names, 0) == 0;
    uint64_t mmfr0, tcr;
    asm volatile("mrs %0, id_aa64mmfr0_el1" : "=r"(mmfr0));
    bool wide = ((mmfr0 >> k_asidbits_shift) & 0xF) == k_asidbits_16;
    unsigned hardware = wide ? 16 : 8;
    unsigned wanted = static_cast<unsigned>(param_get_ulong("arm64.asid_bits", hardware));
    g_bits = wanted >= 1 && wanted <= hardware ? wanted : hardware;
    if (wanted != g_bits)
        kprintf("arm64.asid_bits=%u: the CPU has %u; using %u\n", wanted, hardware, g_bits);
    asm volatile("mrs %0, tcr_el1" : "=r"(tcr));
    tcr = wide ? tcr | k_tcr_as : tcr & ~k_tcr_as;
    asm volatile("msr tcr_el1, %0; isb" ::"r"(tcr) : "memory");
    invalidate_all(); // entries cached under the old ASID width
    kprintf("asid: %s, %u bits\n", g_enabled ? "on" : "off", g_bits);
}

void activate(arch::PhysAddr l1_phys, uint64_t& context)
{
    if (!g_enabled) {
        set_user_table(l1_phys, 0, true);
        return;
    }
    if (!live(context)) {
        assign(context);
    } else if (context & k_stale) {
        context &= ~k_stale;
        invalidate_asid(asid_of(context));
    }
    set_user_table(l1_phys, asid_of(context), false);
}

void activate_none()
{
    set_user_table(empty_user_table_phys(), 0, !g_enabled);
}

void forget(uint64_t& context)
{
    if (live(context))
        context |= k_stale;
}

void release(uint64_t& context)
{
    if (g_enabled && live(context))
        invalidate_asid(asid_of(context));
    context = 0;
}

bool enabled()
{
    return g_enabled;
}

unsigned bits()
{
    return g_bits;
}

unsigned live_asid(uint64_t context)
{
    return live(context) ? asid_of(context) : 0;
}

} // namespace toll::arm64::asid
