// What the arm64 boot code learnt about the machine, for the rest of the port:
// where the device tree is, how to power off, and the BootInfo it built.
#pragma once
#include "kernel/kern/boot.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::arm64 {

/// How PSCI calls reach the firmware (the /psci node's "method" property).
enum class PsciConduit { none, hvc, smc };

/// Facts about the board, filled in once by arm64_boot().
struct Board {
    uintptr_t dtb = 0;          ///< Physical address of the device tree blob, 0 if none.
    uint32_t dtb_size = 0;      ///< Its size in bytes (the header's totalsize).
    uint32_t address_cells = 0; ///< The root's #address-cells.
    uint32_t size_cells = 0;    ///< The root's #size-cells.
    PsciConduit psci = PsciConduit::none;
    /// The `/cpus/cpu@N` nodes' reg values (MPIDR_EL1 affinity), in tree order.
    uint64_t cpu_mpidr[8] = {};
    unsigned cpu_count = 0; ///< how many of cpu_mpidr are filled (at most 8)
};

/// The board as arm64_boot() found it.
const Board& board();

/// The BootInfo arm64_boot() handed to kernel_main, for the port's ktests.
const BootInfo& boot_info();

/// Reads the device tree at kernel address @p dtb into @p board and @p info: the command
/// line (/chosen bootargs, copied into @p cmdline of @p cmdline_size bytes),
/// the memory nodes' reg ranges as usable memory (less the blob itself,
/// reported reserved) and the PSCI conduit. Returns false if the header is
/// not a device tree's (then @p info is untouched) or the structure block is
/// malformed (then @p info keeps what was read before the bad token).
bool read_device_tree(uintptr_t dtb, Board& board, BootInfo& info, char* cmdline,
                      size_t cmdline_size);

} // namespace toll::arm64
