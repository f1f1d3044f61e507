// What a port provides for PCI devices: access to configuration space, a
// window of bus addresses for BARs the firmware left unassigned, device
// memory mapped into the kernel, an interrupt for a function's INTx pin, and
// the barriers DMA needs. Enumeration and the drivers are core code
// (kernel/dev/pci.h): i386 reaches configuration space through ports
// 0xCF8/0xCFC and routes INTx through the 8259; arm64 finds QEMU virt's
// PCIe ECAM and interrupt-map in the device tree and routes INTx to GIC SPIs.
#pragma once
#include "kernel/arch/physmem.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::arch {

/// A function on the bus: bus 0-255, device 0-31, function 0-7.
struct PciAddress {
    uint8_t bus = 0, device = 0, function = 0;
};

/// Finds the machine's configuration space (i386: always there; arm64:
/// the device tree's "pci-host-ecam-generic" node). False when there is
/// none; then no other pci_ function may be called. Called once at boot.
bool pci_init();

/// The highest bus number configuration space reaches (bus-range).
unsigned pci_last_bus();

/// Reads the 32-bit configuration register at @p offset (a multiple of 4,
/// below 256) of @p fn. An absent function reads as all ones.
uint32_t pci_config_read(PciAddress fn, unsigned offset);

/// Writes the 32-bit configuration register at @p offset of @p fn.
void pci_config_write(PciAddress fn, unsigned offset, uint32_t value);

/// The range of bus addresses the core may give 32-bit memory BARs the
/// firmware left at 0 (arm64 virt has no firmware to assign them): false
/// when the firmware assigns every BAR (i386's BIOS does). @p cpu_offset
/// is added to a bus address to get the physical address the CPU uses.
bool pci_memory_window(uint64_t& base, uint64_t& size, uint64_t& cpu_offset);

/// Maps @p size bytes of device memory at physical address @p phys
/// uncached into the kernel and returns its kernel address, or nullptr when
/// the port has no room for it. Mappings are never undone.
volatile void* map_device_memory(PhysAddr phys, size_t size);

/// A handler for a device's interrupt, called with interrupts masked.
using DeviceIrqHandler = void (*)(void* arg);

/// Attaches @p handler to the interrupt that INTx pin @p pin (1 = INTA to
/// 4 = INTD, configuration offset 0x3D) of @p fn raises, and enables it.
/// @p line is the Interrupt Line register (0x3C) the firmware wrote, which
/// i386 uses and arm64 ignores (the device tree's interrupt-map says).
/// The interrupt may be shared: the handler must check its device. Returns
/// the interrupt's number as the port names it (i386: the IRQ, arm64: the
/// GIC INTID) or -1 when the pin cannot be routed.
int pci_attach_interrupt(PciAddress fn, unsigned pin, unsigned line, DeviceIrqHandler handler,
                         void* arg);

/// Orders the CPU's stores to DMA memory before a later store to a device
/// register (a descriptor before the tail pointer that hands it over).
void dma_write_barrier();

/// Orders a read of a device-written descriptor's status before the reads
/// of the rest of it and of its buffer.
void dma_read_barrier();

} // namespace toll::arch
