// The PC's numbering of physical memory types, which the BIOS's INT 15h E820
// call and the multiboot memory map share, translated into the core's MemType.
#pragma once
#include "kernel/kern/boot.h"
#include <stdint.h>

namespace toll::i386 {

// ACPI 6.4, 15.1, Table 15.1 "Address Range Types" (the E820 types).
constexpr uint32_t k_e820_usable = 1, k_e820_reserved = 2, k_e820_acpi_reclaimable = 3,
                   k_e820_acpi_nvs = 4, k_e820_bad = 5;

/// The core's MemType for E820 type @p type; an unknown type is reserved.
inline MemType mem_type_from_e820(uint32_t type)
{
    switch (type) {
    case k_e820_usable:
        return MemType::usable;
    case k_e820_acpi_reclaimable:
        return MemType::acpi_reclaimable;
    case k_e820_acpi_nvs:
        return MemType::acpi_nvs;
    case k_e820_bad:
        return MemType::bad;
    default:
        return MemType::reserved;
    }
}

} // namespace toll::i386
