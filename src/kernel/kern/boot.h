// What an architecture's boot code hands the core: the command line and the
// physical memory map, whichever way it was found.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll {

/// Types of physical memory, numbered as in the E820/multiboot convention.
enum class MemType : uint32_t {
    usable = 1,
    reserved = 2,
    acpi_reclaimable = 3,
    acpi_nvs = 4,
    bad = 5,
};

/// One range of physical memory.
struct MemRegion {
    uint64_t base;
    uint64_t length;
    MemType type;
};

/// Where the memory map came from.
enum class MemMapSource {
    none,        ///< Nobody told us: a loaderless boot before any probing.
    multiboot,   ///< The multiboot loader's map (QEMU -kernel).
    device_tree, ///< The memory node of the flattened device tree (arm64).
    bios_probe,  ///< The kernel's own BIOS calls (vm86).
};

/// The boot information the core receives from the architecture.
struct BootInfo {
    static constexpr size_t k_max_regions = 64;

    const char* cmdline = "";
    const char* loader = "none";
    MemMapSource source = MemMapSource::none;
    MemRegion regions[k_max_regions] = {};
    size_t region_count = 0;

    /// An extra ramdisk handed over by the loader (a multiboot module, from
    /// `tools/run --add`): its physical range, which vm_init keeps out of the
    /// allocator, and its kernel address. Size 0 when there is none.
    uint64_t extra_ramdisk_phys = 0;
    const uint8_t* extra_ramdisk = nullptr;
    size_t extra_ramdisk_size = 0;

    /// Appends a region; returns false when the table is full.
    bool add_region(uint64_t base, uint64_t length, MemType type)
    {
        if (region_count == k_max_regions)
            return false;
        regions[region_count++] = {base, length, type};
        return true;
    }
};

/// Names a source for the console.
const char* mem_map_source_name(MemMapSource source);

/// The core's entry point, called once by the architecture's boot code with
/// interrupts disabled and the console usable.
[[noreturn]] void kernel_main(BootInfo& info);

} // namespace toll
