// The generic timer's virtual timer as a periodic clock interrupt.
#pragma once
#include <stdint.h>

namespace toll::arm64 {

/// QEMU hw/arm/virt.c wires the virtual timer to PPI 11, interrupt ID 16 + 11.
constexpr unsigned k_virtual_timer_intid = 27;

/// Starts a periodic interrupt at @p hz through the GIC; each tick calls
/// @p on_tick (if not nullptr) with IRQs masked.
void timer_start(unsigned hz, void (*on_tick)());

/// Starts the same periodic interrupt on the calling CPU, one started after
/// timer_start (its GIC interface enables the PPI: gic_init_cpu). Its ticks
/// count CpuEvent::clock_ticks on that CPU only.
void timer_start_cpu();

/// Stops the periodic interrupt.
void timer_stop();

/// Ticks since the last timer_start().
uint64_t timer_ticks();

} // namespace toll::arm64
