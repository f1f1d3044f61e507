// i386_boot(): turns what the loader (or Toll's boot sector) handed over into
// the core's BootInfo, then calls kernel_main.
#include "kernel/kern/boot.h"
#include "arch/i386/e820.h"
#include "arch/i386/layout.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/uart.h"
#include "arch/i386/vm86/early_map.h"
#include "arch/i386/vm86/getmemsize.h"
#include "arch/i386/vm86/vm86.h"
#include "kernel/kern/console.h"
#include "kernel/kern/param.h"
#include "lib/cmdline.h"
#include "lib/string.h"

namespace toll::i386 {
namespace {

TOLL_PARAM(param_ramdisk, "i386.ramdisk",
           "where tools/run --add put the extra ramdisk on the boot disk: ADDRESS,BYTES");

// Multiboot specification 0.6.96, 3.3: the boot information structure.
struct MultibootInfo {
    uint32_t flags;
    uint32_t mem_lower, mem_upper;
    uint32_t boot_device;
    uint32_t cmdline;
    uint32_t mods_count, mods_addr;
    uint32_t syms[4];
    uint32_t mmap_length, mmap_addr;
};
constexpr uint32_t k_mbi_mem = 1u << 0, k_mbi_cmdline = 1u << 2, k_mbi_mods = 1u << 3,
                   k_mbi_mmap = 1u << 6;

// Multiboot 0.6.96, 3.3: one boot module.
struct MultibootModule {
    uint32_t start, end, cmdline, reserved;
};

struct [[gnu::packed]] MultibootMmapEntry {
    uint32_t size; // of the rest of the entry, not counting this field
    uint64_t base;
    uint64_t length;
    uint32_t type;
};

// The loader's structures live in low physical memory, which the boot page
// directory maps at KERNEL_BASE as well.
template <typename T>
T* phys_to_virt(uint32_t phys)
{
    return reinterpret_cast<T*>(phys + KERNEL_BASE);
}

constexpr size_t k_cmdline_size = 512;
char g_cmdline[k_cmdline_size];
BootInfo g_boot_info;

void copy_cmdline(const char* source)
{
    size_t n = strnlen(source, k_cmdline_size - 1);
    memcpy(g_cmdline, source, n);
    g_cmdline[n] = '\0';
}

void from_multiboot(const MultibootInfo& mbi, BootInfo& info)
{
    info.loader = "a multiboot loader";
    if (mbi.flags & k_mbi_cmdline) {
        // Multiboot loaders (GRUB, QEMU -kernel) put the kernel's own path
        // first; the parameters follow the first space.
        const char* line = phys_to_virt<const char>(mbi.cmdline);
        const char* space = strchr(line, ' ');
        copy_cmdline(space ? space + 1 : "");
    }
    if ((mbi.flags & k_mbi_mods) && mbi.mods_count) {
        // The first module is an extra ramdisk (tools/run --add).
        auto* m = phys_to_virt<const MultibootModule>(mbi.mods_addr);
        if (m->end > m->start && m->end <= (BOOT_MAPPED_MB << 20)) {
            info.extra_ramdisk_phys = m->start;
            info.extra_ramdisk = phys_to_virt<const uint8_t>(m->start);
            info.extra_ramdisk_size = m->end - m->start;
        }
    }
    if (mbi.flags & k_mbi_mmap) {
        info.source = "multiboot";
        uint32_t at = mbi.mmap_addr, end = mbi.mmap_addr + mbi.mmap_length;
        while (at < end) {
            auto* e = phys_to_virt<const MultibootMmapEntry>(at);
            info.add_region(e->base, e->length, mem_type_from_e820(e->type));
            at += e->size + sizeof e->size;
        }
    } else if (mbi.flags & k_mbi_mem) {
        info.source = "multiboot";
        info.add_region(0, uint64_t(mbi.mem_lower) * 1024, MemType::usable);
        info.add_region(0x100000, uint64_t(mbi.mem_upper) * 1024, MemType::usable);
    }
}

// i386.ramdisk=ADDRESS,BYTES: where the Toll boot sector loaded the extra
// ramdisk that tools/run --add appended to the disk, past the kernel's
// memory (mkdisk.py records how far that reaches). A multiboot loader hands
// it over as a module instead. It must lie above the kernel's load address
// and inside the memory the boot page tables map.
void find_extra_ramdisk(BootInfo& info)
{
    uint64_t base, size;
    bool found;
    constexpr uint64_t k_boot_mapped = uint64_t(BOOT_MAPPED_MB) << 20;
    if (!lib::find_range(g_cmdline, param_ramdisk.key, base, size, found) ||
        base < KERNEL_LOAD_PHYS || base > k_boot_mapped || size > k_boot_mapped - base) {
        if (found)
            kprintf("i386.ramdisk: ignored, not ADDRESS,BYTES inside the boot map\n");
        return;
    }
    info.extra_ramdisk_phys = base;
    info.extra_ramdisk = phys_to_virt<const uint8_t>(static_cast<uint32_t>(base));
    info.extra_ramdisk_size = static_cast<size_t>(size);
}

} // namespace
} // namespace toll::i386

/// Called by entry.S with paging on and the boot stack in use.
extern "C" [[noreturn]] void i386_boot(uint32_t magic, uint32_t pointer)
{
    using namespace toll;
    using namespace toll::i386;
    uart_init();
    BootInfo& info = g_boot_info;
    if (magic == MULTIBOOT_LOADER_MAGIC) {
        from_multiboot(*phys_to_virt<const MultibootInfo>(pointer), info);
    } else if (magic == TOLL_BOOTSECT_MAGIC) {
        info.loader = "the Toll boot sector";
        copy_cmdline(phys_to_virt<const char>(pointer));
        find_extra_ramdisk(info);
    } else {
        info.loader = "an unknown loader";
    }
    info.cmdline = g_cmdline;
    // The order is the lesson of seed 000 (vm86/early_map.h): the memory map
    // (BIOS calls through the vm86 monitor, which brings its own descriptor
    // tables, when no loader gave one) sizes the direct map; the direct map
    // comes next, and only then anything that maps memory beyond the boot map.
    param_init(g_cmdline); // the vm86.* keys are read before kernel_main
    vm86_init();
    getmemsize(info);
    uint64_t top = 0;
    for (size_t i = 0; i < info.region_count; ++i)
        if (info.regions[i].type == MemType::usable &&
            info.regions[i].base + info.regions[i].length > top)
            top = info.regions[i].base + info.regions[i].length;
    layout_init();
    direct_map_init(top);
    early_map_enable();
    getmemsize_verify(info);
    kernel_main(info);
}
