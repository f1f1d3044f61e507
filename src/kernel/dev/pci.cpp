// PCI enumeration: see pci.h.
#include "kernel/dev/pci.h"
#include "kernel/kern/console.h"

namespace toll::dev {
namespace {

// PCI 3.0, 6.2.5.1: BAR bit 0 is 1 for I/O space; a memory BAR's type
// [2:1] is 2 for a 64-bit one (two registers); its low four bits are flags.
constexpr uint32_t k_bar_io = 1, k_bar_type_mask = 6, k_bar_type_64 = 4, k_bar_memory_mask = ~0xFu;
// PCI 3.0, 6.2.1: Header Type bit 7: the device has several functions.
constexpr uint32_t k_header_multifunction = 0x80;
constexpr unsigned k_devices_per_bus = 32, k_functions_per_device = 8;

constexpr size_t k_max_functions = 32;
PciFunction g_functions[k_max_functions];
size_t g_count;

// The port's window for BARs nobody assigned, handed out upward.
bool g_have_window;
uint64_t g_window_next, g_window_end, g_window_cpu_offset;

// Sizes memory BAR @p index of @p f (PCI 3.0, 6.2.5.1: write all ones, read
// back the bits that stuck), assigning it from the window if the firmware
// left it at 0. Returns how many registers it takes (1 or 2).
unsigned probe_bar(PciFunction& f, unsigned index)
{
    unsigned offset = k_pci_bar0 + 4 * index;
    uint32_t original = arch::pci_config_read(f.address, offset);
    if (original & k_bar_io)
        return 1;
    bool wide = (original & k_bar_type_mask) == k_bar_type_64 && index + 1 < k_pci_bars;
    uint32_t high = wide ? arch::pci_config_read(f.address, offset + 4) : 0;
    arch::pci_config_write(f.address, offset, ~0u);
    uint32_t mask = arch::pci_config_read(f.address, offset) & k_bar_memory_mask;
    arch::pci_config_write(f.address, offset, original);
    if (mask == 0)
        return wide ? 2 : 1;
    uint64_t size = uint64_t(~mask) + 1;
    uint64_t bus = (uint64_t(high) << 32) | (original & k_bar_memory_mask);
    uint64_t cpu_offset = 0;
    if (bus == 0 && g_have_window) {
        uint64_t at = (g_window_next + size - 1) & ~(size - 1);
        if (at + size <= g_window_end) {
            bus = at;
            g_window_next = at + size;
            arch::pci_config_write(f.address, offset,
                                   static_cast<uint32_t>(bus) | (original & ~k_bar_memory_mask));
            if (wide)
                arch::pci_config_write(f.address, offset + 4, static_cast<uint32_t>(bus >> 32));
        }
    }
    if (bus != 0) {
        cpu_offset = g_window_cpu_offset;
        f.bar[index] = bus + cpu_offset;
        f.bar_size[index] = size;
    }
    return wide ? 2 : 1;
}

void probe(arch::PciAddress a, uint32_t id)
{
    if (g_count == k_max_functions)
        return;
    PciFunction& f = g_functions[g_count++];
    f.address = a;
    f.vendor = static_cast<uint16_t>(id);
    f.device = static_cast<uint16_t>(id >> 16);
    uint32_t cls = arch::pci_config_read(a, k_pci_class);
    f.class_code = static_cast<uint8_t>(cls >> 24);
    f.subclass = static_cast<uint8_t>(cls >> 16);
    uint32_t irq = arch::pci_config_read(a, k_pci_interrupt);
    f.line = static_cast<uint8_t>(irq);
    f.pin = static_cast<uint8_t>(irq >> 8);
    uint32_t header = (arch::pci_config_read(a, k_pci_header) >> 16) & 0x7F;
    if (header == 0) {
        // Decoding off while the BARs hold all ones (PCI 3.0, 6.2.5.1).
        uint32_t command = arch::pci_config_read(a, k_pci_command);
        arch::pci_config_write(a, k_pci_command, command & ~k_pci_cmd_memory & 0xFFFF);
        for (unsigned i = 0; i < k_pci_bars;)
            i += probe_bar(f, i);
        arch::pci_config_write(a, k_pci_command, command & 0xFFFF);
    }
    kprintf("pci %02x:%02x.%u: %04x:%04x class %02x%02x", a.bus, a.device, a.function, f.vendor,
            f.device, f.class_code, f.subclass);
    if (f.bar[0])
        kprintf(", bar0 0x%llx (%llu KB)", (unsigned long long)f.bar[0],
                (unsigned long long)(f.bar_size[0] >> 10));
    if (f.pin)
        kprintf(", INT%c line %u", 'A' + f.pin - 1, f.line);
    kprintf("\n");
}

} // namespace

size_t pci_enumerate()
{
    if (!arch::pci_init())
        return 0;
    uint64_t base = 0, size = 0, offset = 0;
    g_have_window = arch::pci_memory_window(base, size, offset);
    if (g_have_window) {
        // Bus address 0 means "unassigned": never hand it out.
        g_window_next = base ? base : 0x1000;
        g_window_end = base + size;
        g_window_cpu_offset = offset;
    }
    unsigned last = arch::pci_last_bus();
    for (unsigned bus = 0; bus <= last; ++bus)
        for (unsigned d = 0; d < k_devices_per_bus; ++d)
            for (unsigned fn = 0; fn < k_functions_per_device; ++fn) {
                arch::PciAddress a{static_cast<uint8_t>(bus), static_cast<uint8_t>(d),
                                   static_cast<uint8_t>(fn)};
                uint32_t id = arch::pci_config_read(a, k_pci_vendor);
                if ((id & 0xFFFF) == k_pci_no_vendor) {
                    if (fn == 0)
                        break; // no device in this slot
                    continue;
                }
                probe(a, id);
                if (fn == 0 &&
                    !((arch::pci_config_read(a, k_pci_header) >> 16) & k_header_multifunction))
                    break;
            }
    return g_count;
}

const PciFunction* pci_functions()
{
    return g_functions;
}

size_t pci_function_count()
{
    return g_count;
}

const PciFunction* pci_find(uint16_t vendor, uint16_t device)
{
    for (size_t i = 0; i < g_count; ++i)
        if (g_functions[i].vendor == vendor && g_functions[i].device == device)
            return &g_functions[i];
    return nullptr;
}

void pci_enable(const PciFunction& fn)
{
    uint32_t command = arch::pci_config_read(fn.address, k_pci_command) & 0xFFFF;
    command |= k_pci_cmd_memory | k_pci_cmd_master;
    command &= ~k_pci_cmd_intx_disable;
    arch::pci_config_write(fn.address, k_pci_command, command);
}

} // namespace toll::dev
