// 8259A interrupt controllers and the 8254 timer.
#pragma once

namespace toll::i386 {

/// IRQ n arrives on vector k_irq_base + n.
constexpr unsigned k_irq_base = 32;
constexpr unsigned k_irq_timer = 0, k_irq_com1 = 4, k_irq_ata0 = 14;

/// Remaps both PICs to vectors 32-47 with every line masked.
void pic_init();
/// Unmasks one IRQ line.
void pic_enable(unsigned irq);
/// Acknowledges an IRQ (both PICs for 8-15).
void pic_eoi(unsigned irq);
/// True for a spurious IRQ 7 or 15, which must not be acknowledged.
bool pic_is_spurious(unsigned irq);
/// Programs PIT channel 0 to interrupt @p hz times a second.
void pit_init(unsigned hz);

} // namespace toll::i386
