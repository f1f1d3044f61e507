// PCI on QEMU's virt machine: the PCIe host bridge ("pci-host-ecam-generic")
// in the device tree gives the ECAM window (configuration space as memory,
// 4 KB per function), the bus-address windows ("ranges") the kernel assigns
// BARs from (there is no firmware to do it), and the "interrupt-map" that
// wires each slot's INTA-INTD to GIC SPIs. Device memory is mapped into the
// kernel's half at KERNEL_VA_BASE + its physical address, with page tables
// built on demand. Layouts: PCI Express Base Specification 3.0, 7.2.2
// (ECAM); Devicetree Specification v0.4, 2.4.3 (interrupt-map) and the
// PCI bus binding (IEEE 1275 PCI, 2.2.1: the three-cell addresses).
#include "kernel/arch/pci.h"
#include "arch/arm64/board.h"
#include "arch/arm64/fdt.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/mmu.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::arm64 {
namespace {

// PCIe 3.0, 7.2.2: ECAM offset = bus << 20 | device << 15 | function << 12 | register.
constexpr unsigned k_ecam_bus_shift = 20, k_ecam_device_shift = 15, k_ecam_function_shift = 12;
constexpr uint64_t k_ecam_bus_size = 1u << k_ecam_bus_shift;
// IEEE 1275 PCI binding 2.2.1.1: phys.hi's space code [25:24]: 2 is 32-bit memory.
constexpr unsigned k_space_shift = 24;
constexpr uint32_t k_space_mask = 3, k_space_mem32 = 2;
// A PCI address is 3 cells, an INTx specifier 1 cell; the GIC's
// interrupt specifier is 3 cells, the first 0 for an SPI (GIC binding).
constexpr uint32_t k_pci_address_cells = 3, k_pci_interrupt_cells = 1, k_gic_interrupt_cells = 3;
constexpr uint32_t k_gic_spi = 0;
// GIC IHI 0048B, 2.2.1: SPIs start at INTID 32.
constexpr unsigned k_spi_base = 32;

// What the device tree says about the host bridge.
class HostFinder {
  public:
    uint64_t ecam = 0, ecam_size = 0;
    uint32_t bus_first = 0, bus_last = 0;
    const uint8_t* ranges = nullptr;
    uint32_t ranges_length = 0;
    const uint8_t* map = nullptr;
    uint32_t map_length = 0;
    uint32_t mask[4] = {};
    // The interrupt controllers' phandles and #address-cells.
    static constexpr unsigned k_max_controllers = 4;
    uint32_t controller_phandle[k_max_controllers] = {};
    uint32_t controller_address_cells[k_max_controllers] = {};
    unsigned controllers = 0;

    void begin_node(const char*, int depth)
    {
        if (depth == 1)
            m_host = m_controller = false, m_phandle = 0, m_address_cells = 0;
    }
    void property(const char* name, const uint8_t* value, uint32_t length, int depth)
    {
        if (depth != 1)
            return;
        if (strcmp(name, "compatible") == 0 && contains(value, length, "pci-host-ecam-generic"))
            m_host = true, found = true;
        else if (strcmp(name, "interrupt-controller") == 0)
            m_controller = true;
        else if (strcmp(name, "phandle") == 0 && length == 4)
            m_phandle = fdt_be32(value);
        else if (strcmp(name, "#address-cells") == 0 && length == 4)
            m_address_cells = fdt_be32(value);
        else if (strcmp(name, "reg") == 0 && length >= 16)
            m_reg = fdt_cells(value, 2), m_reg_size = fdt_cells(value + 8, 2);
        else if (strcmp(name, "bus-range") == 0 && length == 8)
            m_bus_first = fdt_be32(value), m_bus_last = fdt_be32(value + 4);
        else if (strcmp(name, "ranges") == 0)
            m_ranges = value, m_ranges_length = length;
        else if (strcmp(name, "interrupt-map") == 0)
            m_map = value, m_map_length = length;
        else if (strcmp(name, "interrupt-map-mask") == 0 && length == 16)
            for (unsigned i = 0; i < 4; ++i)
                m_mask[i] = fdt_be32(value + 4 * i);
    }
    void end_node(int depth)
    {
        if (depth != 1)
            return;
        if (m_controller && m_phandle && controllers < k_max_controllers) {
            controller_phandle[controllers] = m_phandle;
            controller_address_cells[controllers++] = m_address_cells;
        }
        if (m_host && !ecam) {
            ecam = m_reg, ecam_size = m_reg_size;
            bus_first = m_bus_first, bus_last = m_bus_last;
            ranges = m_ranges, ranges_length = m_ranges_length;
            map = m_map, map_length = m_map_length;
            memcpy(mask, m_mask, sizeof mask);
        }
        m_ranges = m_map = nullptr;
        m_ranges_length = m_map_length = 0;
        m_reg = m_reg_size = 0;
        m_bus_first = m_bus_last = 0;
        memset(m_mask, 0, sizeof m_mask);
    }
    bool found = false;

    // The #address-cells of the controller with @p phandle, or -1.
    int address_cells_of(uint32_t phandle) const
    {
        for (unsigned i = 0; i < controllers; ++i)
            if (controller_phandle[i] == phandle)
                return static_cast<int>(controller_address_cells[i]);
        return -1;
    }

  private:
    // True if the string list @p value holds @p what.
    static bool contains(const uint8_t* value, uint32_t length, const char* what)
    {
        size_t n = strlen(what);
        for (uint32_t at = 0; at < length;) {
            auto* s = reinterpret_cast<const char*>(value + at);
            size_t len = strnlen(s, length - at);
            if (len == n && memcmp(s, what, n) == 0)
                return true;
            at += static_cast<uint32_t>(len) + 1;
        }
        return false;
    }
    bool m_host = false, m_controller = false;
    uint32_t m_phandle = 0, m_address_cells = 0;
    uint64_t m_reg = 0, m_reg_size = 0;
    uint32_t m_bus_first = 0, m_bus_last = 0;
    const uint8_t* m_ranges = nullptr;
    uint32_t m_ranges_length = 0;
    const uint8_t* m_map = nullptr;
    uint32_t m_map_length = 0;
    uint32_t m_mask[4] = {};
};

HostFinder g_host;
volatile uint8_t* g_ecam; // bus bus_first's functions, mapped

// Up to four SPIs for PCI devices, each with up to four handlers (INTx is
// shared: four slots share each SPI on virt). gic_set_handler takes a plain
// function: one per SPI slot.
constexpr unsigned k_spis = 4, k_handlers_per_spi = 4;
struct SpiHandlers {
    unsigned intid = 0;
    arch::DeviceIrqHandler handler[k_handlers_per_spi] = {};
    void* arg[k_handlers_per_spi] = {};
};
SpiHandlers g_spis[k_spis];
TOLL_COUNTER(g_pci_irqs, "cpu.irq.pci");

template <unsigned N>
void spi_entry()
{
    g_pci_irqs.add();
    for (unsigned i = 0; i < k_handlers_per_spi; ++i)
        if (g_spis[N].handler[i])
            g_spis[N].handler[i](g_spis[N].arg[i]);
}
constexpr IrqHandler k_spi_entries[k_spis] = {spi_entry<0>, spi_entry<1>, spi_entry<2>,
                                              spi_entry<3>};

// Kernel RAM and devices: neither accessible at EL0 nor executable (as
// mmu_boot.cpp's blocks).
constexpr uint64_t k_device_page = k_desc_page | k_attr_device | k_af | k_uxn | k_pxn;

// The next-level table an entry points to, made (zeroed) if the entry is
// invalid; nullptr when it is a block or no page is left.
uint64_t* next_table(uint64_t* entry)
{
    if (!(*entry & k_desc_valid)) {
        void* page = vm::alloc_page();
        if (!page)
            return nullptr;
        *entry = arch::virt_to_phys(page) | k_desc_table;
    } else if ((*entry & 3) != k_desc_table) {
        return nullptr;
    }
    return static_cast<uint64_t*>(arch::phys_to_virt(*entry & k_desc_address));
}

// Maps the page at physical @p pa as Device memory at KERNEL_VA_BASE + pa.
bool map_device_page(uint64_t pa)
{
    // Indexed by the physical address, as mmu_boot.cpp does: KERNEL_VA_BASE
    // has no bits below the 39 the tables translate, and at 16 KB l1_index
    // would keep bits of it above them.
    auto* l1 = static_cast<uint64_t*>(arch::phys_to_virt(kernel_l1_phys()));
    uint64_t* l2 = next_table(&l1[l1_index(pa)]);
    if (!l2)
        return false;
    uint64_t& l2_entry = l2[l2_index(pa)];
    if ((l2_entry & 3) == k_desc_block)
        return (l2_entry & k_attr_device) != 0; // mmu_boot's devices: already mapped
    uint64_t* l3 = next_table(&l2_entry);
    if (!l3)
        return false;
    l3[l3_index(pa)] = pa | k_device_page;
    return true;
}

} // namespace
} // namespace toll::arm64

namespace toll::arch {

bool pci_init()
{
    using namespace arm64;
    if (!board().dtb)
        return false;
    Fdt fdt(arch::phys_to_virt(board().dtb));
    if (!fdt.walk(g_host) || !g_host.ecam || g_host.ecam_size < k_ecam_bus_size)
        return false;
    // Only the first bus: virt's root bus holds every -device without a
    // bridge, and a bus is 1 MB of ECAM (the whole range is 256 MB).
    g_ecam = static_cast<volatile uint8_t*>(map_device_memory(g_host.ecam, k_ecam_bus_size));
    if (!g_ecam) {
        kprintf("pci: no room to map the ECAM at 0x%llx\n", (unsigned long long)g_host.ecam);
        return false;
    }
    kprintf("pci: ECAM at 0x%llx, bus %u\n", (unsigned long long)g_host.ecam, g_host.bus_first);
    return true;
}

unsigned pci_last_bus()
{
    return 0; // pci_config_* reach the first bus only, renumbered 0
}

uint32_t pci_config_read(PciAddress fn, unsigned offset)
{
    using namespace arm64;
    if (fn.bus != 0)
        return ~0u;
    uintptr_t at = uintptr_t(fn.device & 31) << k_ecam_device_shift |
                   uintptr_t(fn.function & 7) << k_ecam_function_shift | (offset & 0xFFC);
    return *reinterpret_cast<volatile uint32_t*>(g_ecam + at);
}

void pci_config_write(PciAddress fn, unsigned offset, uint32_t value)
{
    using namespace arm64;
    if (fn.bus != 0)
        return;
    uintptr_t at = uintptr_t(fn.device & 31) << k_ecam_device_shift |
                   uintptr_t(fn.function & 7) << k_ecam_function_shift | (offset & 0xFFC);
    *reinterpret_cast<volatile uint32_t*>(g_ecam + at) = value;
    asm volatile("dsb sy" ::: "memory");
}

bool pci_memory_window(uint64_t& base, uint64_t& size, uint64_t& cpu_offset)
{
    using namespace arm64;
    // IEEE 1275 PCI binding: each ranges entry is a 3-cell PCI address, a
    // parent (root: 2-cell) address and a 2-cell size.
    constexpr uint32_t k_entry = 4 * (k_pci_address_cells + 2 + 2);
    for (uint32_t at = 0; g_host.ranges && at + k_entry <= g_host.ranges_length; at += k_entry) {
        const uint8_t* e = g_host.ranges + at;
        if (((fdt_be32(e) >> k_space_shift) & k_space_mask) != k_space_mem32)
            continue;
        base = fdt_cells(e + 4, 2);
        cpu_offset = fdt_cells(e + 12, 2) - base;
        size = fdt_cells(e + 20, 2);
        return true;
    }
    return false;
}

volatile void* map_device_memory(PhysAddr phys, size_t size)
{
    using namespace arm64;
    uint64_t first = phys & ~(k_page_size - 1);
    if (phys + size > (uint64_t(1) << k_va_bits))
        return nullptr; // KERNEL_VA_BASE + phys would leave the upper half
    InterruptsOff off;
    for (uint64_t pa = first; pa < phys + size; pa += k_page_size)
        if (!map_device_page(pa))
            return nullptr;
    // New entries where none were valid: no TLB holds them, so no TLBI
    // (Arm ARM D8.13.1), but the walker must see them before the first access.
    asm volatile("dsb ishst\n isb" ::: "memory");
    return reinterpret_cast<volatile uint8_t*>(KERNEL_VA_BASE + phys);
}

int pci_attach_interrupt(PciAddress fn, unsigned pin, unsigned, DeviceIrqHandler handler, void* arg)
{
    using namespace arm64;
    if (pin < 1 || pin > 4 || !g_host.map)
        return -1;
    // Devicetree 2.4.3: the child's unit address (phys.hi names bus,
    // device, function) and its pin, masked, find the entry; the entry
    // names the parent controller and its specifier.
    uint32_t child[4] = {uint32_t(g_host.bus_first + fn.bus) << 16 | uint32_t(fn.device) << 11 |
                             uint32_t(fn.function) << 8,
                         0, 0, pin};
    for (unsigned i = 0; i < 4; ++i)
        child[i] &= g_host.mask[i];
    uint32_t at = 0, intid = 0;
    while (at + 4 * (k_pci_address_cells + k_pci_interrupt_cells + 1) <= g_host.map_length) {
        const uint8_t* e = g_host.map + at;
        uint32_t phandle = fdt_be32(e + 16);
        int parent_cells = g_host.address_cells_of(phandle);
        if (parent_cells < 0)
            return -1;
        uint32_t length = 4 * (k_pci_address_cells + k_pci_interrupt_cells + 1 +
                               static_cast<uint32_t>(parent_cells) + k_gic_interrupt_cells);
        if (at + length > g_host.map_length)
            return -1;
        bool match = true;
        for (unsigned i = 0; i < 4; ++i)
            match = match && fdt_be32(e + 4 * i) == child[i];
        const uint8_t* spec = e + 20 + 4 * parent_cells;
        if (match && fdt_be32(spec) == k_gic_spi) {
            intid = k_spi_base + fdt_be32(spec + 4);
            break;
        }
        at += length;
    }
    if (intid == 0 || intid >= k_gic_max_irqs)
        return -1;
    InterruptsOff off;
    for (unsigned s = 0; s < k_spis; ++s) {
        SpiHandlers& spi = g_spis[s];
        if (spi.intid != 0 && spi.intid != intid)
            continue;
        for (unsigned i = 0; i < k_handlers_per_spi; ++i)
            if (!spi.handler[i]) {
                spi.handler[i] = handler, spi.arg[i] = arg;
                if (spi.intid == 0) {
                    spi.intid = intid;
                    gic_set_handler(intid, k_spi_entries[s]);
                }
                return static_cast<int>(intid);
            }
        return -1;
    }
    return -1;
}

void dma_write_barrier()
{
    // Arm ARM B2.3.12: a DSB makes the descriptor's stores to Normal memory
    // visible before the store to the Device register that follows.
    asm volatile("dsb st" ::: "memory");
}

void dma_read_barrier()
{
    asm volatile("dsb ld" ::: "memory");
}

} // namespace toll::arch
