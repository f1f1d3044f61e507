// TLB shootdown on i386, by IPI. An x86 TLB entry can be dropped only by the
// CPU that holds it (invlpg, a CR3 load), so a change to a page table that
// other CPUs may have cached must ask each of them, and wait until each has
// done it, before the old translation may be trusted to be gone (before a
// page is freed, before mprotect returns). The initiator asks only the CPUs
// that have the space loaded (pmap_loaded_on, each CPU's published "active"
// space, kept lazily: a CPU that runs a kernel thread keeps the last space
// loaded, and is asked too); each takes the request in its IPI handler, or
// while it spins with interrupts off (ipi_poll), and acknowledges by clearing
// its bit in the request.
//
// What each CPU invalidates follows from the layout, since i386 without PAE
// has no PCID and every CR3 load drops every non-global entry:
//  - 3/1: the one directory's entries, by invlpg (or one CR3 reload for a
//    range above the ceiling);
//  - 3/1-pti: the same on the kernel's directory, which the handler runs on;
//    the user directory's entries went with the entry's CR3 load, which the
//    interrupt itself made if the CPU was in user mode;
//  - 4/4: nothing but the interrupt: the kernel's directory holds no user
//    entries, and taking the IPI from user mode loaded the kernel's CR3.
#include "arch/i386/cpu.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"

namespace toll::i386 {
namespace {

TOLL_COUNTER(g_ranges, "vm.tlb.shootdown.ranges");           // calls with at least one page
TOLL_COUNTER(g_pages, "vm.tlb.shootdown.pages");             // pages in them
TOLL_COUNTER(g_full, "vm.tlb.shootdown.full");               // ranges flushed as a whole space
TOLL_COUNTER(g_ipis, "vm.tlb.shootdown.ipis");               // IPIs sent (one per target CPU)
TOLL_COUNTER(g_wait_cycles, "vm.tlb.shootdown.wait_cycles"); // initiators' wait, in cycles
TOLL_PARAM(param_ceiling, "vm.tlb.ceiling",
           "pages a TLB shootdown invalidates one by one; above, a full flush (default 32)");

// The ceiling's default. Under QEMU's deterministic mode one invlpg costs
// one instruction and its loop two more, on the initiator and on every
// target, while a full flush costs one CR3 load and, afterwards, one page
// walk per translation the CPU uses again (vm.walks=count counts them).
// The address-space chapter measures both for munmap of 1 to 512 pages
// (tools/bench, tlb_shootdown); 32 pages is where the walks a flush costs a
// small process begin to be fewer than the invlpgs it saves, and Linux's
// tlb_single_page_flush_ceiling (33) stands at about the same place.
constexpr size_t k_default_ceiling = 32;

// One initiator's request, by its Cpu::id: written only while no target
// still owes it an acknowledgement (pending == 0), read by the targets.
struct alignas(64) Request {
    arch::Pmap* pmap;
    uint32_t start, end;
    bool full;        ///< flush the whole space rather than [start, end)
    bool leave;       ///< the space is going: a target that has it loaded leaves it
    unsigned pending; ///< the targets that have not yet acknowledged (bits by Cpu::id)
};
Request g_request[k_max_cpus];

// By target: the initiators whose request it has not yet taken (bits).
struct alignas(64) Asked {
    unsigned from;
};
Asked g_asked[k_max_cpus];

size_t g_ceiling = k_default_ceiling;

// How long an initiator waits before it reports a CPU that never answers
// (one that spins with interrupts off elsewhere than in a spinlock), in turns:
// far beyond any real wait, as the spinlocks' watchdog is.
constexpr uint64_t k_wait_spins_max = uint64_t(1) << 26;

unsigned self_id()
{
    return static_cast<unsigned>(arch::cpu_local_word<offsetof(Cpu, id)>());
}

// This CPU's part of a shootdown of @p pmap, which it has loaded.
void invalidate_here(uint32_t start, uint32_t end, bool full)
{
    if (layout() == Layout::split_4_4)
        return; // no user entries under the kernel's directory (see the top)
    if (full) {
        load_cr3(read_cr3()); // drops every non-global entry
        return;
    }
    for (uint32_t va = start; va < end; va += arch::k_page_size)
        invalidate_page(va);
}

// Takes every request waiting for this CPU (the IPI's handler, and
// ipi_poll's): interrupts off.
void take_requests()
{
    unsigned self = self_id();
    unsigned from = __atomic_exchange_n(&g_asked[self].from, 0u, __ATOMIC_ACQUIRE);
    while (from) {
        unsigned i = static_cast<unsigned>(__builtin_ctz(from));
        from &= from - 1;
        Request& r = g_request[i];
        arch::Pmap* loaded = arch::pmap_loaded_on(self);
        // A CPU that has switched away since holds nothing of the space: its
        // CR3 load dropped it.
        if (r.pmap == loaded) {
            if (r.leave)
                arch::pmap_activate(nullptr);
            else
                invalidate_here(r.start, r.end, r.full);
        }
        // Release: the invalidation is done before the initiator sees it.
        __atomic_and_fetch(&r.pending, ~(1u << self), __ATOMIC_RELEASE);
    }
}

// Asks every other CPU that has @p pmap loaded to do @p r's work, and waits
// until each has. Interrupts off (the request is this CPU's).
void ask_others(arch::Pmap* pmap, Request& r, unsigned self)
{
    // The tables' stores before the reads of which CPU has which space: a
    // CPU that loads the space after this read walks the new tables
    // (pmap_activate publishes before its CR3 load).
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    unsigned targets = 0;
    for (unsigned c = 0; c < k_max_cpus; ++c)
        if (c != self && cpu_by_id(c).online && arch::pmap_loaded_on(c) == pmap)
            targets |= 1u << c;
    if (!targets)
        return;
    __atomic_store_n(&r.pending, targets, __ATOMIC_RELEASE);
    for (unsigned t = targets; t; t &= t - 1) {
        unsigned c = static_cast<unsigned>(__builtin_ctz(t));
        __atomic_or_fetch(&g_asked[c].from, 1u << self, __ATOMIC_RELEASE);
        ipi_send(c, IpiReason::tlb);
        g_ipis.add();
    }
    uint64_t began = arch::cycle_counter();
    // A target may itself be waiting for this CPU (its own shootdown, or a
    // spinlock this CPU holds): take what it asks meanwhile.
    for (uint64_t spins = 0; __atomic_load_n(&r.pending, __ATOMIC_ACQUIRE); ++spins) {
        ipi_poll();
        arch::cpu_relax();
        if (spins == k_wait_spins_max)
            panic("tlb shootdown: cpu%u waited %llu turns for cpus 0x%x to acknowledge", self,
                  static_cast<unsigned long long>(spins),
                  __atomic_load_n(&r.pending, __ATOMIC_RELAXED));
    }
    g_wait_cycles.add(arch::cycle_counter() - began);
}

} // namespace

void shootdown_init()
{
    g_ceiling = param_get_ulong("vm.tlb.ceiling", k_default_ceiling);
    ipi_set_tlb_handler(take_requests);
}

void shootdown_leave(arch::Pmap* pmap)
{
    arch::InterruptsOff off;
    unsigned self = self_id();
    Request& r = g_request[self];
    r.pmap = pmap;
    r.start = r.end = 0;
    r.full = false;
    r.leave = true;
    ask_others(pmap, r, self);
}

} // namespace toll::i386

namespace toll::arch {

size_t pmap_shootdown_ceiling()
{
    return i386::g_ceiling;
}

void pmap_tlb_shootdown(Pmap* pmap, uintptr_t start, uintptr_t end)
{
    using namespace toll::i386;
    if (start >= end)
        return;
    size_t pages = (end - start) / k_page_size;
    bool full = pages > g_ceiling;
    g_ranges.add();
    g_pages.add(pages);
    if (full)
        g_full.add();
    InterruptsOff off; // this CPU's request, and its idea of which CPU it is
    unsigned self = self_id();
    if (pmap_loaded_on(self) == pmap)
        invalidate_here(static_cast<uint32_t>(start), static_cast<uint32_t>(end), full);
    // One CPU: nobody else to ask (fork write-protects page by page, so
    // this path is taken for every page of the parent).
    if (cpus_online() == 1)
        return;
    Request& r = g_request[self];
    r.pmap = pmap;
    r.start = static_cast<uint32_t>(start);
    r.end = static_cast<uint32_t>(end);
    r.full = full;
    r.leave = false;
    ask_others(pmap, r, self);
}

} // namespace toll::arch
