// In-kernel tests of the vm86 monitor and the BIOS memory probe: what the
// BIOS answers, that a call leaves the CPU as it found it, what each method
// costs, and that the seed's ordering mistake panics instead of faulting.
#include "arch/i386/cpu.h"
#include "arch/i386/fpu/fpu.h"
#include "arch/i386/io.h"
#include "arch/i386/layout.h"
#include "arch/i386/vm86/early_map.h"
#include "arch/i386/vm86/getmemsize.h"
#include "arch/i386/vm86/vm86.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/panic.h"
#include "kernel/vm/memmap.h"
#include "lib/format.h"
#include "lib/string.h"

extern "C" int vm86_catch(void (*body)(void*), void* arg);
extern "C" [[noreturn]] void vm86_throw();

namespace toll::i386 {
namespace {

constexpr uint8_t k_int_base_memory = 0x12;
constexpr uint32_t k_kb = 1024;

struct [[gnu::packed]] TableRegister {
    uint16_t limit;
    uint32_t base;
};

/// Everything a BIOS call must leave as it found it.
struct CpuSnapshot {
    uint32_t cr0, cr3, cr4, pde0, eflags_if;
    uint16_t tr, ds, es, fs, gs, ss, cs;
    TableRegister gdtr, idtr;
    uint8_t tr_access;     ///< the access byte of TR's descriptor (its busy bit)
    const void* fpu_owner; ///< whose registers the FPU holds (fpu/fpu.h)

    static CpuSnapshot take()
    {
        CpuSnapshot s{};
        s.cr0 = read_cr0();
        s.cr3 = read_cr3();
        s.cr4 = read_cr4();
        s.pde0 = reinterpret_cast<const uint32_t*>((s.cr3 & 0xFFFFF000) + KERNEL_BASE)[0];
        s.eflags_if = read_eflags() & k_eflags_if;
        asm volatile("str %0\n\tsgdt %1\n\tsidt %2" : "=r"(s.tr), "=m"(s.gdtr), "=m"(s.idtr));
        asm volatile("movw %%ds, %0\n\tmovw %%es, %1\n\tmovw %%fs, %2\n\tmovw %%gs, %3\n\t"
                     "movw %%ss, %4\n\tmovw %%cs, %5"
                     : "=r"(s.ds), "=r"(s.es), "=r"(s.fs), "=r"(s.gs), "=r"(s.ss), "=r"(s.cs));
        s.fpu_owner = fpu::owner();
        if (s.tr)
            s.tr_access = reinterpret_cast<const SegmentDescriptor*>(s.gdtr.base)[s.tr >> 3].access;
        return s;
    }
};

void expect_same(const CpuSnapshot& a, const CpuSnapshot& b, unsigned call)
{
    auto check = [&](const char* what, uint32_t x, uint32_t y) {
        if (x != y)
            ktest::fail(__FILE__, __LINE__, "call %u changed %s: 0x%x -> 0x%x", call, what, x, y);
    };
    check("CR0 (FPU state bits)", a.cr0, b.cr0);
    check("the FPU owner", reinterpret_cast<uintptr_t>(a.fpu_owner),
          reinterpret_cast<uintptr_t>(b.fpu_owner));
    check("CR3", a.cr3, b.cr3);
    check("CR4", a.cr4, b.cr4);
    check("PDE 0", a.pde0, b.pde0);
    check("IF", a.eflags_if, b.eflags_if);
    check("TR", a.tr, b.tr);
    check("TR's descriptor (busy bit)", a.tr_access, b.tr_access);
    check("GDTR base", a.gdtr.base, b.gdtr.base);
    check("GDTR limit", a.gdtr.limit, b.gdtr.limit);
    check("IDTR base", a.idtr.base, b.idtr.base);
    check("IDTR limit", a.idtr.limit, b.idtr.limit);
    check("DS", a.ds, b.ds);
    check("ES", a.es, b.es);
    check("FS", a.fs, b.fs);
    check("GS", a.gs, b.gs);
    check("SS", a.ss, b.ss);
    check("CS", a.cs, b.cs);
}

uint32_t int12_kb()
{
    Vm86Regs regs;
    if (!vm86_intcall(k_int_base_memory, regs))
        return 0;
    return regs.eax & 0xFFFF;
}

uint64_t usable_kb(const ProbeResult& r)
{
    return vm::memmap_total(r.regions, r.region_count, MemType::usable) / k_kb;
}

// Usable KB above 1 MB and below 4 GB: what E801 and 88h can describe.
uint64_t usable_kb_above_1mb(const ProbeResult& r, uint64_t below)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r.region_count; ++i) {
        const MemRegion& m = r.regions[i];
        uint64_t lo = m.base < (1u << 20) ? (1u << 20) : m.base;
        uint64_t hi = m.base + m.length < below ? m.base + m.length : below;
        if (m.type == MemType::usable && hi > lo)
            total += hi - lo;
    }
    return total / k_kb;
}

char g_panic_message[256];

void catch_panic(const char* message)
{
    lib::snformat(g_panic_message, sizeof g_panic_message, "%s", message);
    vm86_throw();
}

void map_a_page_too_early(void*)
{
    (void)*early_map_page(16u << 20);
}

void report_cost(const char* method, const ProbeCost& cost)
{
    char name[64];
    if (cost.calls == 0)
        return;
    lib::snformat(name, sizeof name, "vm86.%s.calls", method);
    ktest::metric(name, cost.calls, "count");
    lib::snformat(name, sizeof name, "vm86.%s.instr_per_call", method);
    ktest::metric(name, cost.cycles / cost.calls, "instr");
    lib::snformat(name, sizeof name, "vm86.%s.traps_per_call", method);
    ktest::metric(name, cost.traps / cost.calls, "count");
}

} // namespace

KTEST("vm86.int12_base_memory")
{
    uint32_t kb = int12_kb();
    KEXPECT(kb == 639 || kb == 640);
}

KTEST("vm86.invariants_after_many_calls")
{
    constexpr unsigned k_calls = 200;
    Counter* calls = counter_find("vm86.calls");
    KEXPECT(calls != nullptr);
    uint64_t calls_before = calls ? calls->value : 0;
    bool were_on = arch::interrupts_disable();
    for (unsigned i = 0; i < k_calls; ++i) {
        // Half the calls with interrupts on: the call must turn them off for
        // its duration and give them back.
        if (i % 2)
            asm volatile("sti" ::: "memory");
        else
            asm volatile("cli" ::: "memory");
        CpuSnapshot before = CpuSnapshot::take();
        Vm86Regs regs;
        bool ok;
        switch (i % 3) {
        case 0:
            ok = vm86_intcall(k_int_base_memory, regs);
            break;
        case 1: { // the first E820 entry
            ProbeResult r;
            ok = e820_walk(r) > 0;
            break;
        }
        default:
            regs.eax = 0xE801;
            ok = vm86_intcall(0x15, regs);
            break;
        }
        CpuSnapshot after = CpuSnapshot::take();
        asm volatile("cli" ::: "memory");
        if (!ok)
            ktest::fail(__FILE__, __LINE__, "call %u failed", i);
        expect_same(before, after, i);
    }
    arch::interrupts_restore(were_on);
    if (calls)
        KEXPECT(calls->value - calls_before >= k_calls);
}

KTEST("vm86.early_map_before_page_tables_panics")
{
    // The seed's crash: a mapping written through page tables that do not
    // exist yet. Pretend the direct map is not built, and map a page.
    bool was_ready = early_map_set_ready_for_test(false);
    g_panic_message[0] = '\0';
    set_panic_hook(catch_panic);
    int panicked = vm86_catch(map_a_page_too_early, nullptr);
    set_panic_hook(nullptr);
    early_map_set_ready_for_test(was_ready);
    arch::interrupts_restore(true);
    KEXPECT_EQ(panicked, 1);
    const char* expected = "before the page tables exist";
    bool found = false;
    for (const char* p = g_panic_message; *p && !found; ++p)
        found = strncmp(p, expected, strlen(expected)) == 0;
    if (!found)
        ktest::fail(__FILE__, __LINE__, "panic said \"%s\"", g_panic_message);
    // And once they exist the same mapping works.
    KEXPECT(early_map_ready());
    KEXPECT(early_map_page(16u << 20) != nullptr);
}

KTEST("vm86.probe_matches_boot_map")
{
    ProbeResult r;
    KEXPECT(memory_probe(probe_options_from_cmdline(), r));
    uint64_t probed = usable_kb(r), booted = boot_usable_bytes() / k_kb;
    ktest::metric("vm86.probe.usable_kb", probed, "KB");
    ktest::metric("boot.usable_kb", booted, "KB");
    ktest::metric("vm86.int12.base_kb", r.base_kb, "KB");
    KEXPECT(r.base_kb == 639 || r.base_kb == 640);
    // A loader's map and the BIOS's differ only by what the BIOS reserves
    // for itself (its ACPI tables at the top of memory): well under 1 MB.
    constexpr uint64_t k_tolerance_kb = 1024;
    KEXPECT(probed <= booted + k_tolerance_kb && booted <= probed + k_tolerance_kb);
}

KTEST("vm86.methods_agree_and_cost")
{
    ProbeOptions all;
    ProbeResult e820, e801, e88;
    KEXPECT(memory_probe(all, e820));
    KEXPECT_EQ(static_cast<int>(e820.method), static_cast<int>(ProbeMethod::e820));
    ProbeOptions no_e820;
    no_e820.e820 = false;
    KEXPECT(memory_probe(no_e820, e801));
    KEXPECT_EQ(static_cast<int>(e801.method), static_cast<int>(ProbeMethod::e801));
    ProbeOptions only_88 = no_e820;
    only_88.e801 = false;
    KEXPECT(memory_probe(only_88, e88));
    KEXPECT_EQ(static_cast<int>(e88.method), static_cast<int>(ProbeMethod::e88));

    // E801 sees memory below 4 GB, up to the BIOS's own reservations; 88h
    // at most 64 MB - 1 KB above 1 MB (many BIOSes say less).
    constexpr uint64_t k_tolerance_kb = 1024, k_e88_max_kb = 0xFFFF;
    uint64_t e820_low = usable_kb_above_1mb(e820, uint64_t(1) << 32);
    uint64_t e801_low = usable_kb_above_1mb(e801, uint64_t(1) << 32);
    uint64_t e88_low = usable_kb_above_1mb(e88, uint64_t(1) << 32);
    ktest::metric("vm86.e820.usable_above_1mb_kb", e820_low, "KB");
    ktest::metric("vm86.e801.usable_above_1mb_kb", e801_low, "KB");
    ktest::metric("vm86.e88.usable_above_1mb_kb", e88_low, "KB");
    KEXPECT(e801_low <= e820_low + k_tolerance_kb && e820_low <= e801_low + k_tolerance_kb);
    KEXPECT(e88_low <= k_e88_max_kb && e88_low <= e820_low + k_tolerance_kb);
    KEXPECT(e88_low > 0);

    report_cost("int12", e820.int12);
    report_cost("e820", e820.e820);
    report_cost("e801", e801.e801);
    report_cost("e88", e88.e88);
    ktest::metric("vm86.probe.instr", e820.total_cycles, "instr");
    if (const ProbeResult* boot = boot_probe())
        ktest::metric("vm86.boot_probe.instr", boot->total_cycles, "instr");
}

} // namespace toll::i386
