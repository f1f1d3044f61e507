// PCI on the PC: configuration mechanism #1 (an address written to port
// 0xCF8, the register read or written at 0xCFC), BARs assigned by the BIOS
// (SeaBIOS, Bochs' BIOS), and INTx delivered through the 8259 on the line
// the BIOS wrote into each function's Interrupt Line register. Device
// memory is mapped uncached into pages of the kernel-window table, which
// every address space and layout shares. Layouts: PCI Local Bus
// Specification 3.0, 3.2.2.3.2 (mechanism #1) and 6.2.4 (Interrupt Line).
#include "kernel/arch/pci.h"
#include "arch/i386/io.h"
#include "arch/i386/mmu.h"
#include "arch/i386/pic.h"
#include "arch/i386/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/spinlock.h"

namespace toll::i386 {
namespace {

// PCI 3.0, 3.2.2.3.2: CONFIG_ADDRESS and CONFIG_DATA, and CONFIG_ADDRESS's
// enable bit (31), bus [23:16], device [15:11], function [10:8], register [7:2].
constexpr uint16_t k_config_address = 0xCF8, k_config_data = 0xCFC;
constexpr uint32_t k_config_enable = 1u << 31;
// PCI 3.0, 6.2.4: Interrupt Line 255 means "unknown or not connected".
constexpr unsigned k_line_unknown = 255;
// The 8259 pair serves IRQs 0-15.
constexpr unsigned k_pic_lines = 16;

// Intel SDM Vol. 3, Table 4-6: PWT (bit 3) and PCD (bit 4) make a page uncached.
constexpr uint32_t k_pte_uncached = 1u << 3 | 1u << 4;
// Kernel-window slots for device memory, taken from the top down below the
// local APIC's (the last one): the 4/4 copy path and the stack-guard ktest
// use the first few dozen.
constexpr unsigned k_first_device_slot = 64, k_last_device_slot = k_entries - 2;
unsigned g_next_slot = k_last_device_slot + 1; // the lowest slot handed out so far

// One handler per device on a line; PCI lines are shared (level-triggered,
// each handler asks its own device).
constexpr unsigned k_handlers_per_line = 4;
struct LineHandler {
    arch::DeviceIrqHandler handler;
    void* arg;
};
LineHandler g_lines[k_pic_lines][k_handlers_per_line];

// Configuration cycles from two CPUs must not interleave their two steps.
Spinlock g_config_lock("pci.config");

TOLL_COUNTER(g_pci_irqs, "cpu.irq.pci");

uint32_t address(arch::PciAddress fn, unsigned offset)
{
    return k_config_enable | uint32_t(fn.bus) << 16 | uint32_t(fn.device & 31) << 11 |
           uint32_t(fn.function & 7) << 8 | (offset & 0xFC);
}

} // namespace

bool pci_interrupt(unsigned irq)
{
    if (irq >= k_pic_lines || !g_lines[irq][0].handler)
        return false;
    g_pci_irqs.add();
    for (const LineHandler& h : g_lines[irq])
        if (h.handler)
            h.handler(h.arg);
    return true;
}

} // namespace toll::i386

namespace toll::arch {

bool pci_init()
{
    using namespace i386;
    // Mechanism #1 is there if CONFIG_ADDRESS keeps what is written to it.
    SpinGuard guard(g_config_lock);
    uint32_t saved = inl(k_config_address);
    outl(k_config_address, k_config_enable);
    bool present = inl(k_config_address) == k_config_enable;
    outl(k_config_address, saved);
    return present;
}

unsigned pci_last_bus()
{
    return 255;
}

uint32_t pci_config_read(PciAddress fn, unsigned offset)
{
    using namespace i386;
    SpinGuard guard(g_config_lock);
    outl(k_config_address, address(fn, offset));
    return inl(k_config_data);
}

void pci_config_write(PciAddress fn, unsigned offset, uint32_t value)
{
    using namespace i386;
    SpinGuard guard(g_config_lock);
    outl(k_config_address, address(fn, offset));
    outl(k_config_data, value);
}

bool pci_memory_window(uint64_t&, uint64_t&, uint64_t&)
{
    return false; // the BIOS assigned every BAR
}

volatile void* map_device_memory(PhysAddr phys, size_t size)
{
    using namespace i386;
    PhysAddr first = phys & ~PhysAddr(4095);
    size_t pages = static_cast<size_t>((phys + size - first + 4095) / 4096);
    if (phys + size > (PhysAddr(1) << 32) || g_next_slot < k_first_device_slot + pages)
        return nullptr;
    g_next_slot -= static_cast<unsigned>(pages);
    for (size_t i = 0; i < pages; ++i) {
        unsigned slot = g_next_slot + static_cast<unsigned>(i);
        // A slot no CPU ever mapped: no TLB holds it (Intel SDM Vol. 3,
        // 4.10.2.3: not-present translations are not cached), so invlpg
        // here is only for this CPU's sake.
        *kernel_window_pte(slot) =
            static_cast<uint32_t>(first + i * 4096) | k_pte_present | k_pte_write | k_pte_uncached;
        invalidate_page(KERNEL_WINDOW_BASE + slot * 4096u);
    }
    return reinterpret_cast<volatile uint8_t*>(KERNEL_WINDOW_BASE + g_next_slot * 4096u) +
           (phys - first);
}

int pci_attach_interrupt(PciAddress, unsigned pin, unsigned line, DeviceIrqHandler handler,
                         void* arg)
{
    using namespace i386;
    // Lines 0-2 are the timer, the keyboard and the cascade: no PCI device
    // is wired there, whatever a broken BIOS wrote.
    if (pin < 1 || pin > 4 || line == k_line_unknown || line >= k_pic_lines || line < 3)
        return -1;
    InterruptsOff off;
    for (LineHandler& h : g_lines[line])
        if (!h.handler) {
            h = {handler, arg};
            pic_enable(line);
            return static_cast<int>(line);
        }
    return -1;
}

void dma_write_barrier()
{
    // x86 keeps stores in order (Intel SDM Vol. 3, 8.2.2), uncached ones
    // included: only the compiler must not move them.
    asm volatile("" ::: "memory");
}

void dma_read_barrier()
{
    // Loads are not reordered with other loads (8.2.2).
    asm volatile("" ::: "memory");
}

} // namespace toll::arch
