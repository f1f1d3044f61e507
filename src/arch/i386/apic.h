// The local APIC of each CPU (Intel SDM Vol. 3, chapter 10): its timer,
// inter-processor interrupts, and the INIT and start-up IPIs that wake the
// other CPUs; and the PIT-based delay the start-up sequence waits with.
#pragma once
#include <stdint.h>

namespace toll::i386 {

// Vectors of the local APIC's own interrupts, above the 8259's 32-47 and the
// system call's 0x80. Intel SDM Vol. 3, 10.9: the spurious vector's low four
// bits must be ones on the P6 and Pentium.
constexpr unsigned k_vec_apic_timer = 0xF0, k_vec_ipi = 0xF1, k_vec_apic_spurious = 0xFF;

/// True once apic_init found and mapped a local APIC.
bool apic_present();

/// Finds the boot CPU's local APIC (CPUID.1:EDX.APIC, the IA32_APIC_BASE
/// MSR), maps its registers uncached into the kernel's space (a page of the
/// kernel-window table, present under every layout) and enables it. Returns
/// false when the CPU has none; then only one CPU runs.
bool apic_init();

/// Enables the local APIC of the calling CPU (a started one).
void apic_init_cpu();

/// This CPU's local APIC id.
uint32_t apic_id();

/// Signals the end of the local APIC interrupt being handled.
void apic_eoi();

/// Sends the fixed interrupt @p vector to the CPU whose APIC id is @p apic_id.
void apic_send_fixed(uint32_t apic_id, unsigned vector);

/// Starts the CPU @p apic_id at physical address @p start_page (4 KB
/// aligned, below 1 MB) with INIT, then two STARTUP IPIs, waiting as the
/// SDM's MP initialization says (Vol. 3, 8.4.4.1).
void apic_start_cpu(uint32_t apic_id, uint32_t start_page);

/// Measures the local APIC timer against the PIT (boot CPU, once) and
/// starts it periodic at @p hz on the calling CPU, on k_vec_apic_timer.
void apic_timer_start(unsigned hz);

/// Local APIC timer counts per clock tick, as measured (0 before apic_timer_start).
uint32_t apic_timer_count();

/// Busy-waits @p us microseconds by the PIT's channel 0 (which keeps
/// running at the clock rate pit_init set), interrupts on or off.
void pit_wait_us(uint32_t us);

} // namespace toll::i386
