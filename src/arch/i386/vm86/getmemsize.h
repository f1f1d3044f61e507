// getmemsize(): how much memory the machine has, from the loader's map when
// there is one, otherwise from the BIOS, asked through the vm86 monitor.
#pragma once
#include "kernel/kern/boot.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::i386 {

/// The ways of asking the BIOS, best first.
enum class ProbeMethod { none, e820, e801, e88, cmos };

/// Names a method for the console and the METRIC records ("e820").
const char* probe_method_name(ProbeMethod method);

/// Which methods a probe may use (vm86.e820=off, vm86.e801=off, vm86.e88=off
/// switch them off to force the older ones).
struct ProbeOptions {
    bool e820 = true, e801 = true, e88 = true;
};

/// The options the command line asks for.
ProbeOptions probe_options_from_cmdline();

/// The cost of one method: BIOS calls made, and their instructions (cycle
/// counter) and #GP traps in total.
struct ProbeCost {
    uint32_t calls = 0;
    uint64_t cycles = 0;
    uint32_t traps = 0;
};

/// What a probe found.
struct ProbeResult {
    ProbeMethod method = ProbeMethod::none;
    uint32_t base_kb = 0; ///< INT 12h: conventional memory, clamped at 640
    MemRegion regions[BootInfo::k_max_regions] = {};
    size_t region_count = 0;          ///< after sanitising
    uint32_t raw_entries = 0;         ///< entries the BIOS returned (E820) before sanitising
    bool truncated = false;           ///< more entries than fit
    ProbeCost int12, e820, e801, e88; ///< per method, as far as it was tried
    uint64_t total_cycles = 0;        ///< the whole probe, monitor and all
};

/// Asks the BIOS: INT 12h, then the E820 loop, falling back to E801, AH=88h
/// and at last the CMOS registers; sanitises the map (kernel/vm/memmap.h).
/// Needs vm86_init; safe before the direct map exists. Returns false if no
/// method said anything.
bool memory_probe(const ProbeOptions& options, ProbeResult& result);

/// One INT 15h E820 walk into @p result (its regions unsanitised); returns
/// the number of entries accepted. Public for the ktests and the lab.
size_t e820_walk(ProbeResult& result);

/// Fills @p info's memory map for the boot: with a loader's map, it is
/// sanitised and used; without one (the loaderless boot), the BIOS is
/// probed. Runs in i386_boot before direct_map_init, which needs the top of
/// memory; it must therefore not touch memory through the direct map.
void getmemsize(BootInfo& info);

/// The half of getmemsize that must wait for the page tables: touches the
/// last page of every usable region (through early_map_page) to check that
/// the memory the BIOS reported answers. Called after direct_map_init.
void getmemsize_verify(const BootInfo& info);

/// The boot's probe, or nullptr if the boot used a loader's map.
const ProbeResult* boot_probe();

/// Usable bytes in the map the kernel booted with (whatever its source).
uint64_t boot_usable_bytes();

} // namespace toll::i386
