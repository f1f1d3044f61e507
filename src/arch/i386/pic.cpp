// The legacy interrupt hardware of a PC: two 8259A PICs remapped to vectors
// 32-47, and the 8254 PIT channel 0 as the scheduler's clock.
#include "arch/i386/pic.h"
#include "arch/i386/apic.h"
#include "arch/i386/io.h"

namespace toll::i386 {
namespace {
// 8259A data sheet: command/data ports of the two PICs, and ICW/OCW values.
constexpr uint16_t k_pic1_cmd = 0x20, k_pic1_data = 0x21, k_pic2_cmd = 0xA0, k_pic2_data = 0xA1;
constexpr uint8_t k_icw1_init_icw4 = 0x11, k_icw4_8086 = 0x01, k_ocw2_eoi = 0x20;
// 8254 data sheet: channel 0 data port, command port, and its input clock.
constexpr uint16_t k_pit_ch0 = 0x40, k_pit_cmd = 0x43;
constexpr uint8_t k_pit_ch0_rate_generator = 0x34; // channel 0, lo/hi byte, mode 2
constexpr uint8_t k_pit_ch0_latch = 0x00;          // counter latch command, channel 0
constexpr uint32_t k_pit_input_hz = 1193182;

uint32_t g_pit_divisor; // what channel 0 counts down from (pit_init)

uint32_t pit_read()
{
    outb(k_pit_cmd, k_pit_ch0_latch);
    uint32_t lo = inb(k_pit_ch0);
    return lo | uint32_t(inb(k_pit_ch0)) << 8;
}

uint16_t g_mask = 0xFFFF; // all lines masked until enabled
} // namespace

void pic_init()
{
    outb(k_pic1_cmd, k_icw1_init_icw4);
    outb(k_pic2_cmd, k_icw1_init_icw4);
    outb(k_pic1_data, k_irq_base); // ICW2: vector offset
    outb(k_pic2_data, k_irq_base + 8);
    outb(k_pic1_data, 0x04); // ICW3: slave on IRQ 2
    outb(k_pic2_data, 0x02); // ICW3: slave identity
    outb(k_pic1_data, k_icw4_8086);
    outb(k_pic2_data, k_icw4_8086);
    g_mask = 0xFFFF & ~(1u << 2); // cascade line open
    outb(k_pic1_data, g_mask & 0xFF);
    outb(k_pic2_data, g_mask >> 8);
}

void pic_enable(unsigned irq)
{
    g_mask &= ~(1u << irq);
    outb(k_pic1_data, g_mask & 0xFF);
    outb(k_pic2_data, g_mask >> 8);
}

void pic_eoi(unsigned irq)
{
    if (irq >= 8)
        outb(k_pic2_cmd, k_ocw2_eoi);
    outb(k_pic1_cmd, k_ocw2_eoi);
}

bool pic_is_spurious(unsigned irq)
{
    // 8259A: a spurious IRQ 7/15 has no bit set in the in-service register.
    constexpr uint8_t k_ocw3_read_isr = 0x0B;
    if (irq == 7) {
        outb(k_pic1_cmd, k_ocw3_read_isr);
        return !(inb(k_pic1_cmd) & 0x80);
    }
    if (irq == 15) {
        outb(k_pic2_cmd, k_ocw3_read_isr);
        if (!(inb(k_pic2_cmd) & 0x80)) {
            outb(k_pic1_cmd, k_ocw2_eoi); // the master did see the cascade
            return true;
        }
    }
    return false;
}

void pit_init(unsigned hz)
{
    uint32_t divisor = k_pit_input_hz / hz;
    g_pit_divisor = divisor;
    outb(k_pit_cmd, k_pit_ch0_rate_generator);
    outb(k_pit_ch0, divisor & 0xFF);
    outb(k_pit_ch0, (divisor >> 8) & 0xFF);
}

void pit_wait_us(uint32_t us)
{
    // Channel 0 counts down from the divisor to 1 and reloads (mode 2): add
    // up how far it went between reads, across reloads.
    uint64_t need = uint64_t(us) * k_pit_input_hz / 1'000'000, went = 0;
    uint32_t last = pit_read();
    while (went < need) {
        uint32_t now = pit_read();
        went += last >= now ? last - now : last + g_pit_divisor - now;
        last = now;
    }
}

} // namespace toll::i386
