// PCI enumeration, in the core: walks configuration space through the
// port's accessors (kernel/arch/pci.h), records each function's identity,
// class, BARs and interrupt pin, gives a memory BAR the firmware left at 0
// an address from the port's window, and lets a driver find its device.
// Register layout: PCI Local Bus Specification 3.0, 6.1 (the type 0
// configuration header) and 6.2.5 (base address registers).
#pragma once
#include "kernel/arch/pci.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::dev {

/// PCI 3.0, 6.1: configuration header offsets (type 0).
inline constexpr unsigned k_pci_vendor = 0x00, k_pci_command = 0x04, k_pci_class = 0x08,
                          k_pci_header = 0x0C, k_pci_bar0 = 0x10, k_pci_interrupt = 0x3C;
/// PCI 3.0, 6.2.2: Command register bits: memory space, bus master, INTx disable.
inline constexpr uint32_t k_pci_cmd_memory = 1u << 1, k_pci_cmd_master = 1u << 2,
                          k_pci_cmd_intx_disable = 1u << 10;
/// PCI 3.0, 6.2.1: a vendor ID of 0xFFFF means no function is there.
inline constexpr uint16_t k_pci_no_vendor = 0xFFFF;
/// The base address registers of a type 0 header.
inline constexpr unsigned k_pci_bars = 6;

/// One function found on the bus.
struct PciFunction {
    arch::PciAddress address;
    uint16_t vendor = 0, device = 0;
    uint8_t class_code = 0, subclass = 0;
    /// INTx pin (1-4, 0 for none) and the Interrupt Line the firmware wrote.
    uint8_t pin = 0, line = 0;
    /// Physical (CPU) address and size of each memory BAR; 0 for an I/O
    /// BAR, an absent one, or one the kernel could not place.
    uint64_t bar[k_pci_bars] = {};
    uint64_t bar_size[k_pci_bars] = {};
};

/// Enumerates every bus the port reaches (once, at boot). Returns how many
/// functions it found; 0 if the machine has no configuration space.
size_t pci_enumerate();

/// The functions pci_enumerate found, and how many.
const PciFunction* pci_functions();
size_t pci_function_count();

/// The first function with @p vendor and @p device, or nullptr.
const PciFunction* pci_find(uint16_t vendor, uint16_t device);

/// Turns on memory decoding and bus mastering (DMA) for @p fn and lets its
/// INTx through.
void pci_enable(const PciFunction& fn);

} // namespace toll::dev
