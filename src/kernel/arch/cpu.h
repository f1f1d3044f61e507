// The processor and the machine around it, as the core sees them: what a
// port implements in src/arch/<arch>/ (the list of every header a port
// provides is src/arch/README.md).
#pragma once
#include <stddef.h>
#include <stdint.h>
#ifndef TOLL_HOST_TEST
#include "machine/interrupts.h"
#endif

namespace toll {
struct Cpu;
}

namespace toll::arch {

/// A short name for banners and records: "i386" or "arm64".
const char* name();

/// Ends the run: powers the machine off through whatever the emulator offers
/// (isa-debug-exit and Bochs port 0x8900 on i386, semihosting on arm64).
/// @p success selects the exit status where the emulator passes one on.
[[noreturn]] void poweroff(bool success);

/// Reads the free-running cycle counter (TSC on i386, CNTVCT_EL0 on arm64).
/// In deterministic mode it counts guest instructions.
uint64_t cycle_counter();

// Interrupt masking is inline, in the port's include/machine/interrupts.h
// (the spinlocks mask and restore on every acquisition):
//   bool interrupts_disable();  disables interrupts, returns whether they were enabled
//   void interrupts_restore(bool were_enabled);  re-enables them if @p were_enabled
#ifdef TOLL_HOST_TEST
// The host tests define their own, out of line.
bool interrupts_disable();
void interrupts_restore(bool were_enabled);
#endif

/// Waits for the next interrupt (hlt / wfi).
void wait_for_interrupt();

/// Tells the CPU that this is a spin-wait loop (pause / yield): it may save
/// power or give a sibling thread the pipeline.
void cpu_relax();

/// Brings up the boot CPU: points the per-CPU register (cpu_local.h) at
/// @p boot, then descriptor tables, traps, the interrupt controller and the
/// clock (interrupts stay disabled). Called by kernel_main before anything
/// can trap.
void cpu_init(Cpu& boot);

/// Starts every other CPU the firmware names (arm64: the device tree's
/// /cpus, through PSCI CPU_ON; i386: the ACPI MADT or the MP table, through
/// INIT and STARTUP IPIs), at most k_max_cpus in all: each takes a
/// Cpu (cpu_allocate), prints "cpuN: online, ..." and enters its idle loop.
/// Returns once each has come online or given up. Called by kernel_main
/// after the scheduler exists, on the boot CPU.
void cpus_start();

/// True when user threads may run on every CPU the port started (the
/// scheduler's smp.user=1): each CPU has its own trap stack, address-space
/// and FPU bookkeeping. arm64: yes; i386: not yet (one trampoline stack under
/// the isolated layouts, one loaded-directory and FPU-owner record).
bool user_threads_on_every_cpu();

/// Interrupts the CPU @p target (online, not this one necessarily) with the
/// port's inter-processor interrupt; its handler calls toll::ipi_received()
/// there, inside an InterruptScope. arm64: a GIC software-generated
/// interrupt; i386: a fixed interrupt through the local APIC.
void send_ipi(const Cpu& target);

/// Stops this CPU for good: interrupts masked, halted (hlt / wfi) in a loop.
[[noreturn]] void halt();

/// The physical range [*start, *end) the kernel image (and its ramdisk) occupies.
void kernel_image_range(uint64_t* start, uint64_t* end);

/// Frequency of the scheduler clock interrupt, in Hz.
unsigned clock_hz();

/// The machine name uname(2) reports, as Linux spells it ("i686", "aarch64").
const char* uname_machine();

/// Interrupts off for the lifetime of the guard, then back as they were: the
/// core's form of interrupts_disable() ... interrupts_restore(), which no
/// early return can leave with interrupts off. (Written here, on top of the
/// two functions above; a port implements nothing for it.)
class [[nodiscard]] InterruptsOff {
  public:
    InterruptsOff() : m_were_enabled(interrupts_disable()) {}
    ~InterruptsOff() { interrupts_restore(m_were_enabled); }
    InterruptsOff(const InterruptsOff&) = delete;
    InterruptsOff& operator=(const InterruptsOff&) = delete;

  private:
    bool m_were_enabled;
};

} // namespace toll::arch
