// GICv2 at the addresses of QEMU's virt machine. Register offsets from the
// Arm GIC Architecture Specification v2 (IHI 0048B), 4.1.2 (distributor)
// and 4.1.3 (CPU interface).
#include "arch/arm64/gic.h"
#include "arch/arm64/cpu.h"
#include "arch/arm64/layout.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/panic.h"

namespace toll::arm64 {
namespace {
constexpr uintptr_t k_gicd = KERNEL_VA_BASE + VIRT_GICD_BASE,
                    k_gicc = KERNEL_VA_BASE + VIRT_GICC_BASE;
constexpr uintptr_t k_gicd_ctlr = 0x000, k_gicd_isenabler = 0x100, k_gicd_icenabler = 0x180,
                    k_gicd_itargetsr = 0x800, k_gicd_sgir = 0xF00;
constexpr uintptr_t k_gicc_ctlr = 0x000, k_gicc_pmr = 0x004, k_gicc_iar = 0x00C,
                    k_gicc_eoir = 0x010;
constexpr uint32_t k_enable = 1;
constexpr uint32_t k_lowest_priority_mask = 0xFF;
// IHI 0048B, 4.4.4: the interrupt ID is GICC_IAR[9:0]; 1023 means spurious.
constexpr uint32_t k_iar_id_mask = 0x3FF, k_spurious = 1023;
// IHI 0048B, 4.3.15: GICD_SGIR. TargetListFilter [25:24] = 0 sends to the
// CPUs named in CPUTargetList [23:16]; SGIINTID [3:0] is the interrupt.
// TargetListFilter 0b10 sends to the requesting CPU alone.
constexpr unsigned k_sgir_target_shift = 16;
constexpr uint32_t k_sgir_to_self = 2u << 24;
// IHI 0048B, 2.2.1: interrupts 0-15 are SGIs, 16-31 PPIs, both banked per CPU.
constexpr unsigned k_gic_banked_irqs = 32;

IrqHandler g_handlers[k_gic_max_irqs];
// Each CPU's bit in a CPUTargetList (its CPU interface number), by Cpu::id.
uint8_t g_target_bit[k_max_cpus];
TOLL_COUNTER(g_irqs, "arm64.gic.interrupts");

// IHI 0048B, 4.3.12: each of GICD_ITARGETSR0-7 reads as the reading CPU's
// own bit in every byte (they describe SGIs and PPIs, which only it gets);
// in a uniprocessor GIC they read as zero (so an IPI to itself goes by the
// filter instead, send_ipi).
void record_target_bit()
{
    g_target_bit[this_cpu().id] =
        static_cast<uint8_t>(mmio_read32(k_gicd + k_gicd_itargetsr) & 0xFF);
}

void enable_on_this_cpu(unsigned intid, bool on)
{
    // One enable bit per interrupt, 32 to a register (IHI 0048B, 4.3.5-4.3.6).
    uintptr_t reg = (on ? k_gicd_isenabler : k_gicd_icenabler) + 4 * (intid / 32);
    mmio_write32(k_gicd + reg, 1u << (intid % 32));
}

void on_ipi()
{
    ipi_received();
}
} // namespace

void gic_init()
{
    mmio_write32(k_gicd + k_gicd_ctlr, k_enable);
    mmio_write32(k_gicc + k_gicc_pmr, k_lowest_priority_mask);
    mmio_write32(k_gicc + k_gicc_ctlr, k_enable);
    record_target_bit();
    gic_set_handler(k_ipi_sgi, on_ipi);
}

void gic_init_cpu()
{
    mmio_write32(k_gicc + k_gicc_pmr, k_lowest_priority_mask);
    mmio_write32(k_gicc + k_gicc_ctlr, k_enable);
    record_target_bit();
    // SGIs and PPIs are enabled per CPU: give this one every banked
    // interrupt the boot CPU has a handler for (the IPI, the timer).
    for (unsigned intid = 0; intid < k_gic_banked_irqs; ++intid)
        if (g_handlers[intid])
            enable_on_this_cpu(intid, true);
}

void gic_set_handler(unsigned intid, IrqHandler handler)
{
    TOLL_ASSERT(intid < k_gic_max_irqs);
    g_handlers[intid] = handler;
    enable_on_this_cpu(intid, handler != nullptr);
}

void gic_dispatch()
{
    uint32_t iar = mmio_read32(k_gicc + k_gicc_iar);
    uint32_t intid = iar & k_iar_id_mask;
    if (intid == k_spurious)
        return;
    g_irqs.add();
    if (intid < k_gic_max_irqs && g_handlers[intid])
        g_handlers[intid]();
    mmio_write32(k_gicc + k_gicc_eoir, iar);
}

uint64_t gic_interrupts_handled()
{
    return g_irqs.value;
}

} // namespace toll::arm64

namespace toll::arch {

void send_ipi(const Cpu& target)
{
    // The pending bit the caller set must reach memory before the SGI
    // reaches the target (a device write is not ordered after it otherwise).
    asm volatile("dsb ishst" ::: "memory");
    uint32_t route = &target == &this_cpu()
                         ? arm64::k_sgir_to_self
                         : uint32_t(arm64::g_target_bit[target.id]) << arm64::k_sgir_target_shift;
    arm64::mmio_write32(arm64::k_gicd + arm64::k_gicd_sgir, route | arm64::k_ipi_sgi);
}

} // namespace toll::arch
