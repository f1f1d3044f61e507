// The local APIC: one per CPU, at the same physical address on each (the
// registers a CPU reaches there are its own). Register offsets from Intel SDM
// Vol. 3, Table 10-1 "Local APIC Register Address Map".
#include "arch/i386/apic.h"
#include "arch/i386/io.h"
#include "arch/i386/mmu.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"

namespace toll::i386 {
namespace {

// Intel SDM Vol. 2A, CPUID leaf 1: EDX bit 9 says an on-chip APIC is present.
constexpr uint32_t k_cpuid_apic = 1u << 9;
// Intel SDM Vol. 3, 10.4.4: IA32_APIC_BASE, MSR 0x1B; bits 12-31 the base,
// bit 11 the global enable.
constexpr uint32_t k_msr_apic_base = 0x1B;
constexpr uint32_t k_apic_base_enable = 1u << 11, k_apic_base_mask = 0xFFFFF000u;

constexpr uint32_t k_reg_id = 0x020, k_reg_tpr = 0x080, k_reg_eoi = 0x0B0, k_reg_svr = 0x0F0,
                   k_reg_esr = 0x280, k_reg_icr_low = 0x300, k_reg_icr_high = 0x310,
                   k_reg_lvt_timer = 0x320, k_reg_timer_initial = 0x380,
                   k_reg_timer_current = 0x390, k_reg_timer_divide = 0x3E0;
// 10.4.6: the APIC id is ID[31:24].
constexpr unsigned k_id_shift = 24;
// 10.9: SVR bit 8 enables the APIC (software enable).
constexpr uint32_t k_svr_enable = 1u << 8;
// 10.6.1, Figure 10-12: ICR fields.
constexpr uint32_t k_icr_fixed = 0u << 8, k_icr_init = 5u << 8, k_icr_startup = 6u << 8;
constexpr uint32_t k_icr_pending = 1u << 12, k_icr_assert = 1u << 14;
constexpr unsigned k_icr_dest_shift = 24;
// 10.5.1, Figure 10-8: LVT timer mode bit 17 periodic, bit 16 masked.
constexpr uint32_t k_lvt_periodic = 1u << 17, k_lvt_masked = 1u << 16;
// 10.5.4, Figure 10-10: divide configuration 0b0011 divides the bus clock by 16.
constexpr uint32_t k_timer_divide_16 = 0x3;
// 8.4.4.1: INIT, wait 10 ms, STARTUP, wait 200 us, STARTUP, wait 200 us.
constexpr uint32_t k_init_wait_us = 10'000, k_startup_wait_us = 200;
// How long the timer is measured against the PIT.
constexpr uint32_t k_calibrate_us = 5'000;

// The page of the kernel-window table that maps the registers (entries from
// the top down; the 4/4 copy path uses the first ones).
constexpr unsigned k_window_slot = k_entries - 1;
constexpr uintptr_t k_registers = KERNEL_WINDOW_BASE + k_window_slot * 4096u;
// Intel SDM Vol. 3, Table 4-6: PWT (bit 3) and PCD (bit 4) make a page uncached.
constexpr uint32_t k_pte_uncached = 1u << 3 | 1u << 4;

bool g_present;
uint32_t g_timer_count;

uint32_t read(uint32_t reg)
{
    return *reinterpret_cast<volatile uint32_t*>(k_registers + reg);
}

void write(uint32_t reg, uint32_t value)
{
    *reinterpret_cast<volatile uint32_t*>(k_registers + reg) = value;
}

uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return static_cast<uint64_t>(hi) << 32 | lo;
}

void wrmsr(uint32_t msr, uint64_t value)
{
    asm volatile("wrmsr" ::"c"(msr), "a"(static_cast<uint32_t>(value)),
                 "d"(static_cast<uint32_t>(value >> 32)));
}

void send(uint32_t apic_id, uint32_t command)
{
    // Two writes make one command: an interrupt between them that sent an
    // IPI of its own would leave its destination in the high word.
    arch::InterruptsOff off;
    while (read(k_reg_icr_low) & k_icr_pending)
        asm volatile("pause");
    write(k_reg_icr_high, apic_id << k_icr_dest_shift);
    write(k_reg_icr_low, command); // this write sends it
}

void enable_here()
{
    uint64_t base = rdmsr(k_msr_apic_base);
    if (!(base & k_apic_base_enable))
        wrmsr(k_msr_apic_base, base | k_apic_base_enable);
    write(k_reg_tpr, 0); // accept every priority
    write(k_reg_svr, k_svr_enable | k_vec_apic_spurious);
    write(k_reg_esr, 0); // 10.5.3: a write arms the error status register
}

} // namespace

bool apic_present()
{
    return g_present;
}

bool apic_init()
{
    uint32_t a = 1, b, c = 0, d;
    asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    if (!(d & k_cpuid_apic))
        return false;
    uint32_t phys = static_cast<uint32_t>(rdmsr(k_msr_apic_base)) & k_apic_base_mask;
    *kernel_window_pte(k_window_slot) = phys | k_pte_present | k_pte_write | k_pte_uncached;
    invalidate_page(k_registers);
    g_present = true;
    enable_here();
    return true;
}

void apic_init_cpu()
{
    enable_here();
}

uint32_t apic_id()
{
    return read(k_reg_id) >> k_id_shift;
}

void apic_eoi()
{
    write(k_reg_eoi, 0);
}

void apic_send_fixed(uint32_t apic_id, unsigned vector)
{
    send(apic_id, k_icr_fixed | k_icr_assert | vector);
}

void apic_start_cpu(uint32_t apic_id, uint32_t start_page)
{
    write(k_reg_esr, 0);
    send(apic_id, k_icr_init | k_icr_assert);
    pit_wait_us(k_init_wait_us);
    for (int i = 0; i < 2; ++i) {
        // 10.6.1: a STARTUP IPI's vector is the start page number.
        send(apic_id, k_icr_startup | (start_page >> 12));
        pit_wait_us(k_startup_wait_us);
    }
}

void apic_timer_start(unsigned hz)
{
    write(k_reg_timer_divide, k_timer_divide_16);
    if (!g_timer_count) {
        // Count down from the top for a measured while; what it counted,
        // scaled to one tick, is the period. Under -icount both clocks are
        // virtual, so the measure (and every run after it) repeats exactly.
        write(k_reg_lvt_timer, k_lvt_masked | k_vec_apic_timer);
        write(k_reg_timer_initial, 0xFFFFFFFFu);
        pit_wait_us(k_calibrate_us);
        uint32_t counted = 0xFFFFFFFFu - read(k_reg_timer_current);
        g_timer_count = static_cast<uint32_t>(uint64_t(counted) * 1'000'000 / k_calibrate_us / hz);
        if (!g_timer_count)
            g_timer_count = 1;
        kprintf("apic: timer %u counts per %u Hz tick (measured against the PIT)\n", g_timer_count,
                hz);
    }
    write(k_reg_lvt_timer, k_lvt_periodic | k_vec_apic_timer);
    write(k_reg_timer_initial, g_timer_count);
}

uint32_t apic_timer_count()
{
    return g_timer_count;
}

} // namespace toll::i386
