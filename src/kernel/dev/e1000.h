// The Intel 82540EM ("e1000") Gigabit Ethernet controller on PCI, the
// network card QEMU's -device e1000 and Bochs' e1000 plugin emulate on both
// of Toll's machines (i386 pc, arm64 virt's PCIe). One driver serves both:
// everything machine-specific (configuration space, mapping its registers,
// routing its interrupt, DMA barriers) is behind kernel/arch/pci.h.
// Register and descriptor layouts: Intel PCI/PCI-X Family of Gigabit
// Ethernet Controllers Software Developer's Manual (8254x), revision 4.0,
// cited below as "8254x" with its section.
#pragma once
#include "kernel/net/netif.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::dev {

/// What the driver counted since boot (also the kernel counters net.e1000.*).
struct E1000Stats {
    uint64_t tx_frames = 0;    ///< frames handed to the card
    uint64_t tx_ring_full = 0; ///< transmits refused: no free descriptor
    uint64_t tx_bad_length =
        0;                  ///< transmits refused: shorter than a header or longer than k_max_frame
    uint64_t rx_frames = 0; ///< frames passed up
    uint64_t rx_dropped = 0;    ///< frames received and dropped (every reason below)
    uint64_t rx_errors = 0;     ///< ... with an error bit in the descriptor
    uint64_t rx_bad_length = 0; ///< ... shorter than a header, longer than k_max_frame, or split
    uint64_t rx_overruns = 0;   ///< receiver overrun interrupts (the ring was full)
    uint64_t interrupts = 0;    ///< interrupts that were the card's
    uint64_t link_changes = 0;  ///< link status change interrupts
    /// Cycles (instructions, in deterministic mode) spent in the interrupt
    /// handler, from the ICR read to the last descriptor given back.
    uint64_t handler_cycles = 0;
};

/// The most cards the driver takes (eth0, eth1).
inline constexpr unsigned k_e1000_max_cards = 2;

/// Looks for 82540EMs on the bus (dev::pci_enumerate must have run), brings
/// each up and registers it with the stack as "eth0", "eth1". False, with a
/// console line saying why, when there is none or none can be driven.
bool e1000_init();

/// Card @p index's interface, or nullptr when e1000_init found no such card.
/// The functions below take the same index and do nothing for a missing card.
net::NetInterface* e1000_interface(unsigned index);

/// The driver's counters for card @p index.
E1000Stats e1000_stats(unsigned index);

/// The card's own statistics registers (8254x 13.7), read and cleared:
/// missed packets (MPC), no receive buffers (RNBC), oversize (ROC) and
/// undersize (RUC) frames, good packets transmitted (GPTC).
struct E1000HardwareStats {
    uint32_t missed = 0, no_buffers = 0, oversize = 0, undersize = 0, tx_good = 0;
};
E1000HardwareStats e1000_hardware_stats(unsigned index);

/// A raw receive hook for the driver's own tests: sees every good frame
/// before the stack does and keeps it from the stack by returning true.
/// Called in the interrupt handler. nullptr removes it.
using FrameTap = bool (*)(const uint8_t* frame, size_t length);
void e1000_set_tap(unsigned index, FrameTap tap);

/// Stops (false) or restarts (true) the transmitter (TCTL.EN), so that a
/// test can fill the transmit ring; restarting sends what is queued.
void e1000_transmitter_enable(unsigned index, bool on);

/// Descriptors in each ring (8254x 3.2.6, 3.4: a multiple of 8). A full
/// transmit ring holds one fewer frame: head == tail means empty.
inline constexpr unsigned k_e1000_rx_descriptors = 32, k_e1000_tx_descriptors = 32;

} // namespace toll::dev
