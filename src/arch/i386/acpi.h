// What the firmware says about the machine's processors: the ACPI MADT, or
// the older MultiProcessor Specification table where there is no ACPI.
#pragma once
#include "kernel/kern/cpu.h"
#include <stdint.h>

namespace toll::i386 {

/// The processors and interrupt controllers the firmware lists.
struct MachineCpus {
    const char* source = "none";  ///< "ACPI MADT", "MP table" or "none"
    unsigned count = 0;           ///< enabled processors listed (may exceed k_max_cpus)
    uint32_t apic_id[k_max_cpus]; ///< the local APIC ids of the first k_max_cpus of them
    uint32_t ioapic_phys = 0;     ///< the first I/O APIC's registers, 0 if none listed
};

/// Reads the MADT (RSDP in the EBDA's first KB or 0xE0000-0xFFFFF, then the
/// RSDT), or failing that the MP floating pointer and configuration table.
/// Only tables inside the kernel's direct map are read.
MachineCpus find_cpus();

} // namespace toll::i386
