// Small wrappers for the arm64 system registers and barriers the kernel uses,
// and volatile accessors for memory-mapped device registers.
#pragma once
#include <stdint.h>

namespace toll::arm64 {

/// Arm ARM, DAIF: the IRQ mask bit (I).
constexpr uint64_t k_daif_irq = 1u << 7;

/// Instruction synchronisation barrier: later instructions see earlier
/// system register writes, and a counter read is not hoisted above it.
inline void isb()
{
    asm volatile("isb" ::: "memory");
}

/// Reads the virtual counter (CNTVCT_EL0), after an isb so that the read is
/// not taken early. Under QEMU -icount it counts guest instructions.
inline uint64_t read_cntvct()
{
    uint64_t value;
    asm volatile("isb; mrs %0, cntvct_el0" : "=r"(value)::"memory");
    return value;
}

/// The frequency of the system counter in Hz (CNTFRQ_EL0), as firmware set it.
inline uint64_t read_cntfrq()
{
    uint64_t value;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(value));
    return value;
}

/// The interrupt mask bits (DAIF).
inline uint64_t read_daif()
{
    uint64_t value;
    asm volatile("mrs %0, daif" : "=r"(value));
    return value;
}

/// The exception level the CPU runs at (0-3), from CurrentEL bits [3:2].
inline unsigned current_el()
{
    uint64_t value;
    asm volatile("mrs %0, CurrentEL" : "=r"(value));
    return static_cast<unsigned>((value >> 2) & 3);
}

/// Reads a 32-bit device register.
inline uint32_t mmio_read32(uintptr_t address)
{
    return *reinterpret_cast<volatile uint32_t*>(address);
}

/// Writes a 32-bit device register.
inline void mmio_write32(uintptr_t address, uint32_t value)
{
    *reinterpret_cast<volatile uint32_t*>(address) = value;
}

} // namespace toll::arm64
