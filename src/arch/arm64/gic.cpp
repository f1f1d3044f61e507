// GICv2 at the addresses of QEMU's virt machine. Register offsets from the
// Arm GIC Architecture Specification v2 (IHI 0048B), 4.1.2 (distributor)
// and 4.1.3 (CPU interface).
#include "arch/arm64/gic.h"
#include "arch/arm64/cpu.h"
#include "arch/arm64/layout.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"

namespace toll::arm64 {
namespace {
constexpr uintptr_t k_gicd = KERNEL_VA_BASE + VIRT_GICD_BASE,
                    k_gicc = KERNEL_VA_BASE + VIRT_GICC_BASE;
constexpr uintptr_t k_gicd_ctlr = 0x000, k_gicd_isenabler = 0x100, k_gicd_icenabler = 0x180;
constexpr uintptr_t k_gicc_ctlr = 0x000, k_gicc_pmr = 0x004, k_gicc_iar = 0x00C,
                    k_gicc_eoir = 0x010;
constexpr uint32_t k_enable = 1;
constexpr uint32_t k_lowest_priority_mask = 0xFF;
// IHI 0048B, 4.4.4: the interrupt ID is GICC_IAR[9:0]; 1023 means spurious.
constexpr uint32_t k_iar_id_mask = 0x3FF, k_spurious = 1023;

IrqHandler g_handlers[k_gic_max_irqs];
TOLL_COUNTER(g_irqs, "arm64.gic.interrupts");
} // namespace

void gic_init()
{
    mmio_write32(k_gicd + k_gicd_ctlr, k_enable);
    mmio_write32(k_gicc + k_gicc_pmr, k_lowest_priority_mask);
    mmio_write32(k_gicc + k_gicc_ctlr, k_enable);
}

void gic_init_cpu()
{
    mmio_write32(k_gicc + k_gicc_pmr, k_lowest_priority_mask);
    mmio_write32(k_gicc + k_gicc_ctlr, k_enable);
}

void gic_set_handler(unsigned intid, IrqHandler handler)
{
    TOLL_ASSERT(intid < k_gic_max_irqs);
    g_handlers[intid] = handler;
    // One enable bit per interrupt, 32 to a register (IHI 0048B, 4.3.5-4.3.6).
    uintptr_t reg = (handler ? k_gicd_isenabler : k_gicd_icenabler) + 4 * (intid / 32);
    mmio_write32(k_gicd + reg, 1u << (intid % 32));
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
