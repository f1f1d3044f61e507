// ASID allocation for arm64 (asid.h), with generations, as Linux's arm64
// allocator works (arch/arm64/mm/context.c): a pmap's context word holds the
// generation its ASID was given in (above bit 16) and the ASID (below).
//
// Within a generation an ASID is handed out once (a bitmap of the ASIDs in
// use) and never to two address spaces. When none is left the generation
// moves on (a rollover): the bitmap is cleared but for the ASIDs the CPUs run
// right now, which stay reserved for the address spaces that hold them, and
// every CPU is marked to empty its own TLB (TLBI VMALLE1, not broadcast) the
// next time it takes a new ASID. So a rollover costs one local flush on each
// CPU, whenever that CPU next switches, and no CPU waits for another.
//
// The switch itself usually takes no lock: a CPU whose active ASID is still
// set and whose next address space has an ASID of this generation swaps its
// active ASID with one atomic compare-exchange. A rollover clears every CPU's
// active ASID (reserving what it was), which sends each CPU's next switch
// through the locked path, where its pending flush happens.
#include "arch/arm64/asid.h"
#include "arch/arm64/mmu.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/param.h"
#include "kernel/kern/spinlock.h"
#include "lib/string.h"

namespace toll::arm64::asid {
namespace {

TOLL_PARAM(g_param_asid, "arm64.asid",
           "on (the default): tag TLB entries with ASIDs; off: flush at every switch");
TOLL_PARAM(g_param_bits, "arm64.asid_bits",
           "use only this many ASID bits (2-16), to force rollovers");
TOLL_PARAM(g_param_check, "arm64.asid_check",
           "1: serialise every switch and check that no two CPUs run different address "
           "spaces under one ASID, and that a CPU flushed since the last rollover "
           "(vm.pmap.asid.conflicts, vm.pmap.asid.unflushed); 0 (the default): off");
TOLL_COUNTER(g_rollovers, "vm.pmap.asid.rollovers");
TOLL_COUNTER(g_tlbi_asid, "vm.pmap.tlbi.asid");
TOLL_COUNTER(g_assigned, "vm.pmap.asid.assigned");
TOLL_COUNTER(g_kept, "vm.pmap.asid.kept");          // same ASID, new generation
TOLL_COUNTER(g_slow, "vm.pmap.asid.slow_switches"); // through the lock
TOLL_COUNTER(g_borrowed, "vm.pmap.asid.borrowed");  // every ASID held by a running CPU
TOLL_COUNTER(g_conflicts, "vm.pmap.asid.conflicts");
TOLL_COUNTER(g_unflushed, "vm.pmap.asid.unflushed");
uint64_t rollover_flushes_now();
uint64_t most_flushes_now();
TOLL_GAUGE_COMPUTED(g_rollover_flushes, "vm.pmap.asid.rollover_flushes", rollover_flushes_now);
TOLL_GAUGE_COMPUTED(g_most_flushes, "vm.pmap.asid.flushes_max_cpu", most_flushes_now);
TOLL_GAUGE(g_bits_gauge, "vm.pmap.asid.bits");   // the width in use (0: ASIDs off)
TOLL_GAUGE(g_checking, "vm.pmap.asid.checking"); // 1 with arm64.asid_check=1

constexpr unsigned k_context_shift = 16;
constexpr uint64_t k_asid_mask = (1u << k_context_shift) - 1;
constexpr unsigned k_max_asids = 1u << k_context_shift;
constexpr unsigned k_word_bits = 64;
// Arm ARM D13.2.64, ID_AA64MMFR0_EL1.ASIDBits [7:4]: 0b0010 = 16 bits,
// 0b0000 = 8 bits. D13.2.120, TCR_EL1.AS [36]: 1 = the ASID is 16 bits wide.
constexpr unsigned k_asidbits_shift = 4;
constexpr uint64_t k_asidbits_16 = 2, k_tcr_as = 1ull << 36;
// A CPU's active word when it runs no address space (the empty table):
// nothing to reserve for it at a rollover. Generation 0 is never current.
constexpr uint64_t k_active_none = 1;
// Two usable ASIDs at least (ASID 0 is the empty table's): with one, a CPU
// could wait for itself.
constexpr unsigned k_min_bits = 2;

bool g_enabled;
bool g_check;
unsigned g_bits = 8;
// Read without the lock by the switch's fast path; written under it.
uint64_t g_generation = 1;
unsigned g_cursor = 1;
uint64_t g_map[k_max_asids / k_word_bits];
Spinlock g_lock("arm64.asid");

// Per CPU: the context it runs (0 after a rollover until its next switch,
// k_active_none on the empty table), the one kept for it at the last
// rollover, whether it still owes the flush of a rollover, and how many such
// flushes it made.
uint64_t g_active[k_max_cpus];
uint64_t g_reserved[k_max_cpus];
bool g_flush_pending[k_max_cpus];
uint64_t g_flushes[k_max_cpus];
// Set while a CPU runs an address space under the borrowed ASID 0 (see
// activate): its TLB must be emptied before it runs anything else.
bool g_on_borrowed[k_max_cpus];
// For arm64.asid_check: what each CPU's TTBR0 holds, and the generation of
// its last flush.
uint64_t g_loaded_table[k_max_cpus];
uint64_t g_loaded_context[k_max_cpus];
uint64_t g_flushed_generation[k_max_cpus];

uint64_t rollover_flushes_now()
{
    uint64_t n = 0;
    for (uint64_t f : g_flushes)
        n += f;
    return n;
}

uint64_t most_flushes_now()
{
    uint64_t most = 0;
    for (uint64_t f : g_flushes)
        most = f > most ? f : most;
    return most;
}

unsigned asid_of(uint64_t context)
{
    return static_cast<unsigned>(context & k_asid_mask);
}

uint64_t generation_of(uint64_t context)
{
    return context >> k_context_shift;
}

uint64_t load(const uint64_t& word)
{
    return __atomic_load_n(&word, __ATOMIC_RELAXED);
}

void store(uint64_t& word, uint64_t value)
{
    __atomic_store_n(&word, value, __ATOMIC_RELAXED);
}

bool test_and_set(unsigned asid)
{
    uint64_t bit = 1ull << (asid % k_word_bits);
    bool was = g_map[asid / k_word_bits] & bit;
    g_map[asid / k_word_bits] |= bit;
    return was;
}

// The first ASID not in use from @p from on, or 0 if none is left.
unsigned find_free(unsigned from)
{
    unsigned limit = 1u << g_bits;
    for (unsigned a = from; a < limit; ++a) {
        if (a % k_word_bits == 0 && g_map[a / k_word_bits] == ~0ull) {
            a += k_word_bits - 1;
            continue;
        }
        if (!(g_map[a / k_word_bits] & (1ull << (a % k_word_bits))))
            return a;
    }
    return 0;
}

// TLBI ASIDE1IS: every non-global entry of one ASID (bits [63:48] of the
// operand), on every CPU.
void invalidate_asid(unsigned asid)
{
    g_tlbi_asid.add();
    invalidate_asid_everywhere(asid);
}

// A new generation (g_lock held): keeps every CPU's running ASID for the
// address space that runs under it, frees the rest, and has every CPU owe
// one local flush.
void rollover()
{
    g_rollovers.add();
    memset(g_map, 0, sizeof g_map);
    g_map[0] = 1; // ASID 0: the empty table's
    for (unsigned c = 0; c < k_max_cpus; ++c) {
        uint64_t was = __atomic_exchange_n(&g_active[c], 0, __ATOMIC_RELAXED);
        // 0: the CPU has not switched since the last rollover; it still
        // runs what was reserved for it then.
        if (was == 0)
            was = g_reserved[c];
        if (was == k_active_none)
            was = 0;
        if (was)
            test_and_set(asid_of(was));
        g_reserved[c] = was;
        g_flush_pending[c] = true;
    }
    __atomic_store_n(&g_generation, g_generation + 1, __ATOMIC_RELEASE);
    g_cursor = 1;
}

// Whether @p context was running on some CPU at the last rollover: if so it
// keeps its ASID in the generation @p fresh names (every CPU's reservation
// of it is updated, since several may run the same address space).
bool keep_reserved(uint64_t context, uint64_t fresh)
{
    bool hit = false;
    for (uint64_t& r : g_reserved)
        if (r == context) {
            r = fresh;
            hit = true;
        }
    return hit;
}

// A context of the current generation for an address space whose context
// is @p old (g_lock held); 0 if every ASID is held by a CPU's running
// address space even after a rollover (only when ASIDs are fewer than CPUs).
// A context with ASID 0 is a borrowed one (activate).
uint64_t new_context(uint64_t old)
{
    uint64_t generation = g_generation;
    if (old) {
        unsigned asid = asid_of(old);
        uint64_t fresh = generation << k_context_shift | asid;
        // Borrowing ASID 0 (see activate) lasts while any CPU may run the
        // space so: the rest of its generation, and the next one if a CPU
        // ran it then.
        if (asid == 0 && generation_of(old) == generation)
            return fresh;
        if (keep_reserved(old, fresh)) {
            g_kept.add();
            return fresh;
        }
        if (asid != 0 && !test_and_set(asid)) { // still free: the same ASID again
            g_kept.add();
            return fresh;
        }
    }
    unsigned asid = find_free(g_cursor);
    if (!asid) {
        rollover();
        generation = g_generation;
        asid = find_free(1);
        if (!asid)
            return 0;
    }
    test_and_set(asid);
    g_cursor = asid;
    g_assigned.add();
    return generation << k_context_shift | asid;
}

// Empties this CPU's TLB if it owes a rollover's flush (g_lock held).
void flush_if_pending(unsigned cpu)
{
    if (!g_flush_pending[cpu])
        return;
    g_flush_pending[cpu] = false;
    ++g_flushes[cpu];
    g_flushed_generation[cpu] = g_generation;
    invalidate_local_all();
}

// arm64.asid_check (g_lock held, every switch serialised): no other CPU runs
// another table under this ASID, and this CPU emptied its TLB since the
// rollover that began this context's generation.
void check(unsigned cpu, uint64_t table, uint64_t context)
{
    g_loaded_table[cpu] = table;
    g_loaded_context[cpu] = context;
    if (!asid_of(context))
        return; // the empty table, or a borrowed ASID 0 (flushed at every switch)
    for (unsigned c = 0; c < k_max_cpus; ++c)
        if (c != cpu && g_loaded_context[c] && asid_of(g_loaded_context[c]) == asid_of(context) &&
            g_loaded_table[c] != table) {
            g_conflicts.add();
            kprintf("asid: cpu%u and cpu%u both run ASID %u for different tables\n", cpu, c,
                    asid_of(context));
        }
    if (g_rollovers.value && g_flushed_generation[cpu] != g_generation) {
        g_unflushed.add();
        kprintf("asid: cpu%u runs ASID %u of generation %llu without a flush since it began\n", cpu,
                asid_of(context), (unsigned long long)g_generation);
    }
}

} // namespace

void init()
{
    static const char* const names[] = {"on", "off"};
    g_enabled = param_get_choice("arm64.asid", names, 0) == 0;
    g_check = param_get_ulong("arm64.asid_check", 0) != 0;
    uint64_t mmfr0, tcr;
    asm volatile("mrs %0, id_aa64mmfr0_el1" : "=r"(mmfr0));
    bool wide = ((mmfr0 >> k_asidbits_shift) & 0xF) == k_asidbits_16;
    unsigned hardware = wide ? 16 : 8;
    unsigned wanted = static_cast<unsigned>(param_get_ulong("arm64.asid_bits", hardware));
    g_bits = wanted >= k_min_bits && wanted <= hardware ? wanted : hardware;
    if (wanted != g_bits)
        kprintf("arm64.asid_bits=%u: the CPU has %u; using %u\n", wanted, hardware, g_bits);
    asm volatile("mrs %0, tcr_el1" : "=r"(tcr));
    tcr = wide ? tcr | k_tcr_as : tcr & ~k_tcr_as;
    asm volatile("msr tcr_el1, %0; isb" ::"r"(tcr) : "memory");
    g_map[0] = 1; // ASID 0: the empty table's
    for (uint64_t& a : g_active)
        a = k_active_none;
    invalidate_all(); // entries cached under the old ASID width
    g_bits_gauge.set(g_enabled ? g_bits : 0);
    g_checking.set(g_check);
    kprintf("asid: %s, %u bits%s\n", g_enabled ? "on" : "off", g_bits,
            g_check ? ", every switch checked" : "");
}

// Leaving an address space that ran under the borrowed ASID 0: its entries
// must not meet the next one's (or the empty table's).
void leave_borrowed(unsigned cpu)
{
    if (g_on_borrowed[cpu]) {
        g_on_borrowed[cpu] = false;
        // Off the table first: a walk of it between the flush and the next
        // load could bring its entries back under ASID 0.
        set_user_table(empty_user_table_phys(), 0, false);
        invalidate_local_all();
    }
}

void activate(arch::PhysAddr l1_phys, uint64_t& context)
{
    if (!g_enabled) {
        set_user_table(l1_phys, 0, true);
        return;
    }
    unsigned cpu = this_cpu().id;
    uint64_t ctx = load(context);
    if (!g_check && !g_on_borrowed[cpu]) {
        // The fast path: this CPU has switched since the last rollover (its
        // active word is set) and the address space has an ASID of this
        // generation. The exchange fails if a rollover cleared the word
        // meanwhile; then the locked path below decides.
        uint64_t active = load(g_active[cpu]);
        if (active != 0 && asid_of(ctx) != 0 &&
            generation_of(ctx) == __atomic_load_n(&g_generation, __ATOMIC_ACQUIRE) &&
            __atomic_compare_exchange_n(&g_active[cpu], &active, ctx, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            set_user_table(l1_phys, asid_of(ctx), false);
            return;
        }
    }
    SpinGuard g(g_lock);
    g_slow.add();
    bool was_borrowed = g_on_borrowed[cpu];
    leave_borrowed(cpu);
    ctx = load(context);
    if (asid_of(ctx) == 0 || generation_of(ctx) != g_generation)
        ctx = new_context(ctx);
    flush_if_pending(cpu);
    if (!ctx)
        ctx = g_generation << k_context_shift;
    if (asid_of(ctx) == 0) {
        // Every ASID is the running one of some CPU (only when there are
        // fewer ASIDs than CPUs: arm64.asid_bits=2 on 4 CPUs). Waiting here
        // for a CPU to switch could wait for ever (this CPU holds its run
        // queue's lock, which that CPU may be spinning on), so the address
        // space borrows ASID 0 on this CPU instead: this CPU's TLB is
        // emptied before it runs and again when it leaves, and its
        // invalidations name ASID 0, which reaches it wherever it runs. Two
        // CPUs may both run under ASID 0 then, each for its own space: no
        // TLB holds both, since each is emptied between.
        g_borrowed.add();
        if (!was_borrowed) // (else leave_borrowed parked and emptied it already)
            invalidate_local_all();
        g_on_borrowed[cpu] = true;
    }
    store(context, ctx);
    store(g_active[cpu], ctx);
    set_user_table(l1_phys, asid_of(ctx), false);
    if (g_check)
        check(cpu, l1_phys, ctx);
}

void activate_none()
{
    if (g_enabled) {
        unsigned cpu = this_cpu().id;
        if (g_on_borrowed[cpu]) {
            SpinGuard g(g_lock);
            set_user_table(empty_user_table_phys(), 0, false);
            leave_borrowed(cpu);
        }
        // Nothing runs here now, so nothing need be kept for this CPU at a
        // rollover. A rollover that cleared the word first reserved what ran.
        uint64_t active = load(g_active[cpu]);
        if (active != 0)
            __atomic_compare_exchange_n(&g_active[cpu], &active, k_active_none, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        if (g_check) {
            SpinGuard g(g_lock);
            set_user_table(empty_user_table_phys(), 0, false);
            check(cpu, 0, 0);
            return;
        }
    }
    set_user_table(empty_user_table_phys(), 0, !g_enabled);
}

unsigned tlb_tag(uint64_t context)
{
    if (!g_enabled)
        return k_tag_any;
    uint64_t ctx = load(context);
    return ctx ? asid_of(ctx) : k_tag_none;
}

void release(uint64_t& context)
{
    uint64_t ctx = load(context);
    if (g_enabled && ctx)
        invalidate_asid(asid_of(ctx));
    store(context, 0);
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
    uint64_t ctx = load(context);
    return ctx && generation_of(ctx) == load(g_generation) ? asid_of(ctx) : 0;
}

uint64_t rollover_flushes_on(unsigned cpu)
{
    return cpu < k_max_cpus ? load(g_flushes[cpu]) : 0;
}

} // namespace toll::arm64::asid
