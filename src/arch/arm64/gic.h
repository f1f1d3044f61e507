// The GICv2 interrupt controller of QEMU's virt machine: enabling interrupts
// and dispatching them to their handlers.
#pragma once
#include <stdint.h>

namespace toll::arm64 {

/// A handler for one interrupt, called with IRQs masked.
using IrqHandler = void (*)();

/// Number of interrupt IDs Toll can attach handlers to (SGIs, PPIs, and the
/// first SPIs, which cover the virt machine's devices).
constexpr unsigned k_gic_max_irqs = 128;

/// The software-generated interrupt Toll's IPIs use (kernel/kern/ipi.h);
/// SGIs are IDs 0-15 (IHI 0048B, 2.2.1).
constexpr unsigned k_ipi_sgi = 1;

/// Turns on the distributor and this CPU's interface, every priority let
/// through, and attaches the IPI handler.
void gic_init();

/// Enables the CPU interface of the calling CPU (its registers are banked
/// per CPU) and the SGIs and PPIs that have handlers: for a CPU started
/// after gic_init.
void gic_init_cpu();

/// Attaches @p handler to interrupt @p intid and enables it (nullptr disables it).
void gic_set_handler(unsigned intid, IrqHandler handler);

/// Acknowledges the pending interrupt, runs its handler and signals its end.
/// Called from the IRQ vector.
void gic_dispatch();

/// How many interrupts gic_dispatch() has handled since boot.
uint64_t gic_interrupts_handled();

} // namespace toll::arm64
