// What an architecture's boot code hands the core: the command line and the
// physical memory map, whichever way it was found.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll {

/// Types of physical memory. A port translates its firmware's numbering
/// (the PC's E820 types, a device tree's reservations) into these.
enum class MemType : uint32_t {
    usable,
    reserved,
    acpi_reclaimable,
    acpi_nvs,
    bad,
};

/// One range of physical memory.
struct MemRegion {
    uint64_t base;
    uint64_t length;
    MemType type;
};

/// The boot information the core receives from the architecture.
struct BootInfo {
    /// How many entries the memory map can hold.
    static constexpr size_t k_max_regions = 64;

    const char* cmdline = ""; ///< the kernel command line ("" when none)
    /// What loaded the kernel, in words for the console ("a multiboot
    /// loader", "the Toll boot sector", ...).
    const char* loader = "none";
    /// Where the memory map came from, named by the port for the console
    /// ("multiboot", "device tree", "BIOS probe"); nullptr while nobody has
    /// said (a loaderless boot before any probing).
    const char* source = nullptr;
    MemRegion regions[k_max_regions] = {}; ///< the memory map: region_count entries
    size_t region_count = 0;               ///< entries of regions in use

    /// An extra ramdisk handed over by the loader (a multiboot module, from
    /// `tools/run --add`): its physical address. vm_init keeps its pages out
    /// of the allocator.
    uint64_t extra_ramdisk_phys = 0;
    const uint8_t* extra_ramdisk = nullptr; ///< the extra ramdisk's kernel address
    size_t extra_ramdisk_size = 0;          ///< its size in bytes; 0 when there is none

    /// Appends a region; returns false when the table is full.
    bool add_region(uint64_t base, uint64_t length, MemType type)
    {
        if (region_count == k_max_regions)
            return false;
        regions[region_count++] = {base, length, type};
        return true;
    }
};

/// The core's entry point, called once by the architecture's boot code with
/// interrupts disabled and the console usable.
[[noreturn]] void kernel_main(BootInfo& info);

} // namespace toll
