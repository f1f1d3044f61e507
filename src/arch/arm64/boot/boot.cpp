// arm64_boot(): finds the device tree QEMU left in RAM, turns it into the
// core's BootInfo, and calls kernel_main. Runs in the upper half, with the
// MMU on (entry.S).
#include "arch/arm64/board.h"
#include "arch/arm64/fdt.h"
#include "arch/arm64/layout.h"
#include "arch/arm64/mmu.h"
#include "arch/arm64/uart.h"
#include "kernel/arch/physmem.h"
#include "kernel/kern/console.h"
#include "kernel/kern/param.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll::arm64 {
namespace {

TOLL_PARAM(param_ramdisk, "arm64.ramdisk",
           "where tools/run --add loaded the extra ramdisk: ADDRESS,BYTES");

constexpr size_t k_cmdline_size = 512;
char g_cmdline[k_cmdline_size];
char g_loader[96];
Board g_board;
BootInfo g_boot_info;

/// Where the device tree is (its physical address). A Linux-style boot
/// passes it in x0; QEMU's ELF boot leaves x0 zero and places the blob at
/// the start of RAM instead. Sets @p how to say which way it was found.
uintptr_t find_device_tree(uint64_t x0, const char*& how)
{
    if (x0 >= k_ram_map_start && x0 < k_ram_map_end && x0 % 8 == 0 &&
        fdt_be32(arch::phys_to_virt(x0)) == k_fdt_magic) {
        how = "passed in x0";
        return x0;
    }
    how = "found at the start of RAM";
    if (fdt_be32(arch::phys_to_virt(VIRT_DTB_ADDRESS)) == k_fdt_magic)
        return VIRT_DTB_ADDRESS;
    return 0;
}

// arm64.ramdisk=ADDRESS,BYTES: where tools/run --add had QEMU's generic
// loader put the extra ramdisk (QEMU loads -initrd only for Linux images,
// not for an ELF kernel like Toll's). It must lie in mapped RAM.
void find_extra_ramdisk(const char* cmdline, BootInfo& info)
{
    uint64_t base, size;
    bool found;
    if (!lib::find_range(cmdline, param_ramdisk.key, base, size, found) || base < k_ram_map_start ||
        base > k_ram_map_end || size > k_ram_map_end - base) {
        if (found)
            kprintf("arm64.ramdisk: ignored, not ADDRESS,BYTES inside RAM\n");
        return;
    }
    info.extra_ramdisk_phys = base;
    info.extra_ramdisk = static_cast<const uint8_t*>(arch::phys_to_virt(base));
    info.extra_ramdisk_size = size;
}

} // namespace

const Board& board()
{
    return g_board;
}

const BootInfo& boot_info()
{
    return g_boot_info;
}

} // namespace toll::arm64

/// Called by entry.S at EL1 with the MMU off, .bss zeroed and the boot stack
/// in use; @p x0 is what the loader left in x0.
extern "C" [[noreturn]] void arm64_boot(uint64_t x0)
{
    using namespace toll;
    using namespace toll::arm64;
    uart_init();
    BootInfo& info = g_boot_info;
    const char* how = "";
    uintptr_t dtb = find_device_tree(x0, how);
    if (dtb && read_device_tree(reinterpret_cast<uintptr_t>(arch::phys_to_virt(dtb)), g_board, info,
                                g_cmdline, k_cmdline_size)) {
        lib::snformat(g_loader, sizeof g_loader, "QEMU -kernel (device tree at 0x%llx, %s)",
                      (unsigned long long)dtb, how);
        info.loader = g_loader;
    } else {
        info.loader = "a loader without a device tree";
    }
    info.cmdline = g_cmdline;
    find_extra_ramdisk(g_cmdline, info);
    kernel_main(info);
}
