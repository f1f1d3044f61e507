// getmemsize(): the loader's memory map if there is one; otherwise the BIOS's
// answers to INT 12h and INT 15h (E820, E801, AH=88h), or the CMOS, asked
// through the vm86 monitor. Ralf Brown's Interrupt List and the ACPI
// specification (3.0, 14.1 "INT 15H, E820H") document the calls.
#include "arch/i386/vm86/getmemsize.h"
#include "arch/i386/e820.h"
#include "arch/i386/io.h"
#include "arch/i386/vm86/early_map.h"
#include "arch/i386/vm86/vm86.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/console.h"
#include "kernel/kern/param.h"
#include "kernel/vm/memmap.h"
#include "lib/string.h"

namespace toll::i386 {

TOLL_PARAM(param_e820, "vm86.e820", "off: do not ask the BIOS for an E820 map");
TOLL_PARAM(param_e801, "vm86.e801", "off: do not ask the BIOS with INT 15h AX=E801h");
TOLL_PARAM(param_e88, "vm86.e88", "off: do not ask the BIOS with INT 15h AH=88h");

namespace {

constexpr uint8_t k_int_base_memory = 0x12, k_int_system = 0x15;
constexpr uint32_t k_fn_e820 = 0xE820, k_fn_e801 = 0xE801, k_fn_88 = 0x8800;
/// 'SMAP': the signature E820 wants in EDX and returns in EAX.
constexpr uint32_t k_smap = 0x534D4150;
/// ACPI 3.0, table 14-4: extended attributes of a 24-byte entry.
constexpr uint32_t k_e820_attr_enabled = 1u << 0, k_e820_attr_nonvolatile = 1u << 1;
constexpr uint32_t k_e820_min_entry = 20;
/// Entries a walk accepts before deciding the BIOS is looping.
constexpr unsigned k_e820_max_calls = 128;
constexpr uint32_t k_kb = 1024, k_conventional_kb = 640;
constexpr uint64_t k_one_mb = 1u << 20, k_sixteen_mb = 16u << 20, k_block_64k = 64u << 10;
// CMOS (MC146818 and the PC/AT's use of it; QEMU and Bochs add 0x34/0x35):
// extended memory in KB at 0x30/0x31, 64 KB blocks above 16 MB at 0x34/0x35.
constexpr uint16_t k_cmos_index = 0x70, k_cmos_data = 0x71;
constexpr uint8_t k_cmos_nmi_off = 0x80, k_cmos_ext_low = 0x30, k_cmos_ext_high = 0x31,
                  k_cmos_high_low = 0x34, k_cmos_high_high = 0x35;

/// One E820 entry as the BIOS writes it (24 bytes with ACPI 3 attributes).
struct [[gnu::packed]] E820Entry {
    uint64_t base;
    uint64_t length;
    uint32_t type;
    uint32_t attributes;
};

ProbeResult g_boot_probe;
bool g_probed_at_boot;
uint64_t g_boot_usable;

void add(ProbeResult& r, uint64_t base, uint64_t length, MemType type)
{
    if (length == 0)
        return;
    if (r.region_count == BootInfo::k_max_regions) {
        r.truncated = true;
        return;
    }
    r.regions[r.region_count++] = MemRegion{base, length, type};
}

void account(ProbeCost& cost, const Vm86CallCost& call)
{
    ++cost.calls;
    cost.cycles += call.cycles;
    cost.traps += call.traps;
}

bool is_off(const char* key)
{
    static const char* const names[] = {"on", "off"};
    return param_get_choice(key, names, 0) == 1;
}

uint32_t int12(ProbeResult& r)
{
    Vm86Regs regs;
    Vm86CallCost cost;
    if (!vm86_intcall(k_int_base_memory, regs, &cost))
        return 0;
    account(r.int12, cost);
    uint32_t kb = regs.eax & 0xFFFF;
    return kb > k_conventional_kb ? k_conventional_kb : kb;
}

// INT 15h AX=E801h: KB between 1 and 16 MB in AX (or CX), 64 KB blocks above
// 16 MB in BX (or DX). Some BIOSes answer in one pair, some in the other.
bool e801(ProbeResult& r)
{
    Vm86Regs regs;
    regs.eax = k_fn_e801;
    Vm86CallCost cost;
    if (!vm86_intcall(k_int_system, regs, &cost))
        return false;
    account(r.e801, cost);
    if (regs.eflags & k_eflags_cf)
        return false;
    uint32_t low_kb = regs.ecx & 0xFFFF, blocks = regs.edx & 0xFFFF;
    if (low_kb == 0 && blocks == 0)
        low_kb = regs.eax & 0xFFFF, blocks = regs.ebx & 0xFFFF;
    if (low_kb == 0)
        return false;
    add(r, k_one_mb, uint64_t(low_kb) * k_kb, MemType::usable);
    add(r, k_sixteen_mb, uint64_t(blocks) * k_block_64k, MemType::usable);
    return true;
}

// INT 15h AH=88h: KB above 1 MB in AX, at most 64 MB - 1 KB.
bool e88(ProbeResult& r)
{
    Vm86Regs regs;
    regs.eax = k_fn_88;
    Vm86CallCost cost;
    if (!vm86_intcall(k_int_system, regs, &cost))
        return false;
    account(r.e88, cost);
    uint32_t kb = regs.eax & 0xFFFF;
    if ((regs.eflags & k_eflags_cf) || kb == 0)
        return false;
    add(r, k_one_mb, uint64_t(kb) * k_kb, MemType::usable);
    return true;
}

uint8_t cmos_read(uint8_t reg)
{
    outb(k_cmos_index, k_cmos_nmi_off | reg);
    return inb(k_cmos_data);
}

bool cmos(ProbeResult& r)
{
    uint32_t ext_kb = cmos_read(k_cmos_ext_low) | cmos_read(k_cmos_ext_high) << 8;
    uint32_t blocks = cmos_read(k_cmos_high_low) | cmos_read(k_cmos_high_high) << 8;
    if (ext_kb == 0)
        return false;
    if (blocks != 0 && ext_kb >= (k_sixteen_mb - k_one_mb) / k_kb) {
        add(r, k_one_mb, k_sixteen_mb - k_one_mb, MemType::usable);
        add(r, k_sixteen_mb, uint64_t(blocks) * k_block_64k, MemType::usable);
    } else {
        add(r, k_one_mb, uint64_t(ext_kb) * k_kb, MemType::usable);
    }
    return true;
}

} // namespace

const char* probe_method_name(ProbeMethod method)
{
    switch (method) {
    case ProbeMethod::e820:
        return "e820";
    case ProbeMethod::e801:
        return "e801";
    case ProbeMethod::e88:
        return "e88";
    case ProbeMethod::cmos:
        return "cmos";
    default:
        return "none";
    }
}

ProbeOptions probe_options_from_cmdline()
{
    ProbeOptions o;
    o.e820 = !is_off("vm86.e820");
    o.e801 = !is_off("vm86.e801");
    o.e88 = !is_off("vm86.e88");
    return o;
}

size_t e820_walk(ProbeResult& r)
{
    size_t accepted = 0;
    // LAB vm86 BEGIN: call INT 15h AX=E820h until the BIOS says stop (CF, EAX != 'SMAP' or
    // LAB vm86 HINT: EBX = 0), adding each enabled entry with add(); count the calls with
    // LAB vm86 HINT: account(r.e820, cost)
    uint32_t continuation = 0;
    for (unsigned call = 0; call < k_e820_max_calls; ++call) {
        auto* entry = reinterpret_cast<E820Entry*>(vm86_buffer());
        memset(entry, 0, sizeof *entry);
        // ACPI 3.0: set the enabled bit first, so that a BIOS that writes
        // only 20 bytes leaves the entry enabled.
        entry->attributes = k_e820_attr_enabled;
        Vm86Regs regs;
        regs.eax = k_fn_e820;
        regs.ebx = continuation;
        regs.ecx = sizeof(E820Entry);
        regs.edx = k_smap;
        regs.es = k_vm86_buffer_segment;
        regs.edi = 0;
        Vm86CallCost cost;
        if (!vm86_intcall(k_int_system, regs, &cost))
            break;
        account(r.e820, cost);
        // CF on the first call: no E820. CF later: some BIOSes end the list so.
        if ((regs.eflags & k_eflags_cf) || regs.eax != k_smap ||
            (regs.ecx & 0xFF) < k_e820_min_entry)
            break;
        ++r.raw_entries;
        bool has_attributes = (regs.ecx & 0xFF) >= sizeof(E820Entry);
        if (!has_attributes || (entry->attributes & k_e820_attr_enabled)) {
            MemType type = mem_type_from_e820(entry->type);
            if (has_attributes && (entry->attributes & k_e820_attr_nonvolatile))
                type = MemType::reserved;
            add(r, entry->base, entry->length, type);
            ++accepted;
        }
        continuation = regs.ebx;
        if (continuation == 0)
            break;
    }
    // LAB vm86 STUB
    // (void)r;
    // LAB vm86 END
    return accepted;
}

bool memory_probe(const ProbeOptions& options, ProbeResult& r)
{
    r = ProbeResult{};
    uint64_t start = rdtsc();
    r.base_kb = int12(r);
    if (options.e820 && e820_walk(r) > 0) {
        r.method = ProbeMethod::e820;
    } else {
        r.region_count = 0;
        r.truncated = false;
        if (options.e801 && e801(r))
            r.method = ProbeMethod::e801;
        else if (options.e88 && e88(r))
            r.method = ProbeMethod::e88;
        else if (cmos(r))
            r.method = ProbeMethod::cmos;
        if (r.method != ProbeMethod::none)
            add(r, 0, uint64_t(r.base_kb) * k_kb, MemType::usable);
    }
    size_t n = vm::memmap_sanitise(r.regions, r.region_count, BootInfo::k_max_regions);
    if (n > BootInfo::k_max_regions) {
        r.truncated = true;
        n = BootInfo::k_max_regions;
    }
    r.region_count = n;
    r.total_cycles = rdtsc() - start;
    return r.method != ProbeMethod::none;
}

void getmemsize(BootInfo& info)
{
    if (info.source == nullptr || info.region_count == 0) {
        // No loader: ask the BIOS. Only BIOS calls and the boot mapping of
        // low memory here; the direct map does not exist yet.
        g_probed_at_boot = true;
        ProbeResult& r = g_boot_probe;
        if (!memory_probe(probe_options_from_cmdline(), r)) {
            kprintf("vm86: the BIOS reported no memory\n");
            return;
        }
        info.region_count = 0;
        for (size_t i = 0; i < r.region_count; ++i)
            info.add_region(r.regions[i].base, r.regions[i].length, r.regions[i].type);
        info.source = "BIOS probe";
        kprintf("vm86: memory probed by %s: INT 12h says %u KB, %u BIOS calls, %llu cycles%s\n",
                probe_method_name(r.method), r.base_kb,
                r.int12.calls + r.e820.calls + r.e801.calls + r.e88.calls,
                (unsigned long long)r.total_cycles, r.truncated ? " (map truncated)" : "");
    } else {
        // A loader's map: used as given, after the same sanitising.
        size_t n = vm::memmap_sanitise(info.regions, info.region_count, BootInfo::k_max_regions);
        info.region_count = n > BootInfo::k_max_regions ? BootInfo::k_max_regions : n;
    }
    g_boot_usable = vm::memmap_total(info.regions, info.region_count, MemType::usable);
}

void getmemsize_verify(const BootInfo& info)
{
    // A memory test of one word per region: the last page of each usable
    // region must keep what is written to it. (FreeBSD's getmemsize tests
    // every page, through pmap_kenter: the call that crashed in seed 000.)
    constexpr uint32_t k_pattern = 0x5A5AA5A5;
    for (size_t i = 0; i < info.region_count; ++i) {
        const MemRegion& r = info.regions[i];
        uint64_t last = (r.base + r.length - 1) & ~uint64_t(0xFFF);
        if (r.type != MemType::usable || last < k_one_mb || last >= arch::direct_map_limit())
            continue;
        volatile uint32_t* word = early_map_page(last);
        uint32_t saved = *word;
        *word = k_pattern;
        bool ok = *word == k_pattern;
        *word = saved;
        if (!ok)
            kprintf("vm86: memory at 0x%llx does not answer\n", (unsigned long long)last);
    }
}

const ProbeResult* boot_probe()
{
    return g_probed_at_boot ? &g_boot_probe : nullptr;
}

uint64_t boot_usable_bytes()
{
    return g_boot_usable;
}

} // namespace toll::i386
