// In-kernel tests of the arm64 port: the device tree reader (on QEMU's blob
// and on a hand-built one), the memory it reported, the PL011, the generic
// timer's counter and the state the boot code left the CPU in.
#include "arch/arm64/board.h"
#include "arch/arm64/cpu.h"
#include "arch/arm64/fdt.h"
#include "arch/arm64/layout.h"
#include "arch/arm64/uart.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/physmem.h"
#include "kernel/kern/ktest.h"
#include "lib/string.h"

extern "C" char __kernel_start[], __kernel_end[];
extern "C" char arm64_exception_vectors[];

namespace toll::arm64 {
namespace {

/// Counts what a walk saw, and finds the root's "compatible" string.
struct CountingVisitor {
    unsigned nodes = 0, properties = 0, ends = 0;
    int max_depth = 0;
    const char* root_compatible = nullptr;
    void begin_node(const char*, int depth)
    {
        ++nodes;
        max_depth = depth > max_depth ? depth : max_depth;
    }
    void property(const char* name, const uint8_t* value, uint32_t, int depth)
    {
        ++properties;
        if (depth == 0 && strcmp(name, "compatible") == 0)
            root_compatible = reinterpret_cast<const char*>(value);
    }
    void end_node(int) { ++ends; }
};

/// Builds a small device tree blob, big-endian, in a fixed buffer.
class BlobBuilder {
  public:
    static constexpr size_t k_size = 512;
    alignas(8) uint8_t bytes[k_size] = {};

    BlobBuilder() { m_at = k_header_size; }
    void word(uint32_t v)
    {
        for (int shift = 24; shift >= 0; shift -= 8)
            bytes[m_at++] = static_cast<uint8_t>(v >> shift);
    }
    void begin_node(const char* name)
    {
        word(1);
        text(name);
    }
    void end_node() { word(2); }
    /// A property whose value is @p count 32-bit cells.
    void cells(const char* name, const uint32_t* values, uint32_t count)
    {
        word(3);
        word(4 * count);
        word(string_offset(name));
        for (uint32_t i = 0; i < count; ++i)
            word(values[i]);
    }
    void string(const char* name, const char* value)
    {
        word(3);
        word(static_cast<uint32_t>(strlen(value) + 1));
        word(string_offset(name));
        text(value);
    }
    /// Ends the structure block, appends the strings and writes the header.
    void finish()
    {
        word(9);
        uint32_t struct_size = static_cast<uint32_t>(m_at - k_header_size);
        uint32_t strings_at = static_cast<uint32_t>(m_at);
        memcpy(bytes + m_at, m_strings, m_strings_size);
        m_at += m_strings_size;
        uint32_t header[10] = {k_fdt_magic,
                               static_cast<uint32_t>(m_at),
                               k_header_size,
                               strings_at,
                               k_header_size,
                               17,
                               16,
                               0,
                               m_strings_size,
                               struct_size};
        size_t end = m_at;
        m_at = 0;
        for (uint32_t h : header)
            word(h);
        m_at = end;
    }

  private:
    static constexpr uint32_t k_header_size = 40;
    void text(const char* s)
    {
        size_t n = strlen(s) + 1;
        memcpy(bytes + m_at, s, n);
        m_at = (m_at + n + 3) & ~size_t(3);
    }
    uint32_t string_offset(const char* name)
    {
        uint32_t at = m_strings_size;
        size_t n = strlen(name) + 1;
        memcpy(m_strings + at, name, n);
        m_strings_size += static_cast<uint32_t>(n);
        return at;
    }
    size_t m_at;
    char m_strings[128] = {};
    uint32_t m_strings_size = 0;
};

bool region_contains(const MemRegion& r, uint64_t begin, uint64_t end)
{
    return r.base <= begin && end <= r.base + r.length;
}

} // namespace

KTEST("arm64.fdt_from_qemu_is_well_formed")
{
    const Board& b = board();
    KEXPECT(b.dtb != 0);
    if (!b.dtb)
        return;
    Fdt fdt(arch::phys_to_virt(b.dtb));
    KEXPECT(fdt.valid());
    KEXPECT(fdt.version() >= k_fdt_min_version);
    CountingVisitor v;
    KEXPECT(fdt.walk(v));
    KEXPECT_EQ(v.nodes, v.ends);
    KEXPECT(v.nodes > 10);
    KEXPECT(v.max_depth >= 2);
    // QEMU hw/arm/virt.c names the machine this way in the root node.
    KEXPECT(v.root_compatible && strcmp(v.root_compatible, "linux,dummy-virt") == 0);
    KEXPECT_EQ(b.address_cells, 2u);
    KEXPECT_EQ(b.size_cells, 2u);
    KEXPECT(b.psci != PsciConduit::none);
}

// Every usable byte the device tree reported must be RAM: write and read back
// a pattern at both ends of each region (a misread size faults or wraps).
// The kernel image and the blob itself must be covered by the map.
KTEST("arm64.memory_map_is_ram_and_covers_the_kernel")
{
    const BootInfo& info = boot_info();
    KEXPECT(info.source && strcmp(info.source, "device tree") == 0);
    KEXPECT(info.region_count >= 2);
    bool kernel_covered = false, blob_reserved = false;
    for (size_t i = 0; i < info.region_count; ++i) {
        const MemRegion& r = info.regions[i];
        KEXPECT(r.base >= VIRT_RAM_BASE);
        if (region_contains(r, board().dtb, board().dtb + board().dtb_size))
            blob_reserved = r.type == MemType::reserved;
        if (r.type != MemType::usable)
            continue;
        uint64_t kernel_start = arch::virt_to_phys(__kernel_start);
        uint64_t kernel_end = arch::virt_to_phys(__kernel_end);
        if (region_contains(r, kernel_start, kernel_end))
            kernel_covered = true;
        uint64_t ends[2] = {r.base, r.base + r.length - sizeof(uint64_t)};
        for (uint64_t at : ends) {
            if (at < kernel_end && at + sizeof(uint64_t) > kernel_start)
                continue; // Not over our own code or data.
            auto* word = static_cast<volatile uint64_t*>(arch::phys_to_virt(at));
            uint64_t saved = *word;
            *word = 0x70115A5A0000ull ^ at;
            KEXPECT_EQ(*word, 0x70115A5A0000ull ^ at);
            *word = saved;
        }
    }
    KEXPECT(kernel_covered);
    KEXPECT(blob_reserved);
}

// The reader on a blob whose cells differ from QEMU's (1 address cell, 1 size
// cell, two ranges in one reg, a second memory node found by device_type, a
// node nested below memory that must not count, bootargs) and on broken blobs.
KTEST("arm64.fdt_reader_handles_cells_and_rejects_garbage")
{
    static BlobBuilder blob;
    const uint32_t one = 1, reg[4] = {0x10000000, 0x00100000, 0x20000000, 0x00200000};
    const uint32_t reg2[2] = {0x30000000, 0x00300000}, nested[2] = {0x50000000, 0x1000};
    blob.begin_node("");
    blob.cells("#address-cells", &one, 1);
    blob.cells("#size-cells", &one, 1);
    blob.begin_node("chosen");
    blob.string("bootargs", "test=arm64.* x=1");
    blob.end_node();
    blob.begin_node("memory@10000000");
    blob.cells("reg", reg, 4);
    blob.begin_node("child");
    blob.cells("reg", nested, 2);
    blob.end_node();
    blob.end_node();
    blob.begin_node("ram");
    blob.cells("reg", reg2, 2);
    blob.string("device_type", "memory");
    blob.end_node();
    blob.end_node();
    blob.finish();

    Board b;
    static BootInfo info;
    info = BootInfo{};
    char cmdline[32];
    KEXPECT(read_device_tree(reinterpret_cast<uintptr_t>(blob.bytes), b, info, cmdline,
                             sizeof cmdline));
    KEXPECT(strcmp(cmdline, "test=arm64.* x=1") == 0);
    KEXPECT_EQ(b.address_cells, 1u);
    KEXPECT_EQ(info.region_count, 3u);
    KEXPECT_EQ(info.regions[0].base, 0x10000000u);
    KEXPECT_EQ(info.regions[0].length, 0x00100000u);
    KEXPECT_EQ(info.regions[1].base, 0x20000000u);
    KEXPECT_EQ(info.regions[2].base, 0x30000000u);
    KEXPECT_EQ(info.regions[2].length, 0x00300000u);

    // A bad magic, then an unknown token in the structure block.
    static uint8_t broken[BlobBuilder::k_size];
    memcpy(broken, blob.bytes, sizeof broken);
    broken[0] ^= 0xFF;
    KEXPECT(
        !read_device_tree(reinterpret_cast<uintptr_t>(broken), b, info, cmdline, sizeof cmdline));
    memcpy(broken, blob.bytes, sizeof broken);
    broken[40 + 3] = 7; // the root's FDT_BEGIN_NODE becomes token 7
    KEXPECT(
        !read_device_tree(reinterpret_cast<uintptr_t>(broken), b, info, cmdline, sizeof cmdline));
}

// Arm PL011 TRM, UARTPeriphID0-3 and UARTPCellID0-3: fixed identification registers. Reading them
// proves the console really is a PL011 at the address layout.h names.
KTEST("arm64.pl011_identifies_itself")
{
    KEXPECT_EQ(uart_primecell_id(), 0xB105F00Du);
    KEXPECT_EQ(uart_periph_id() & 0xFFF, 0x011u);
}

// The generic timer: a plausible frequency, and a counter that never goes
// backwards and moves while the CPU works.
KTEST("arm64.counter_is_sane")
{
    uint64_t hz = read_cntfrq();
    KEXPECT(hz >= 1000000 && hz <= 1000000000);
    uint64_t previous = arch::cycle_counter(), first = previous;
    for (unsigned i = 0; i < 10000; ++i) {
        uint64_t now = arch::cycle_counter();
        KEXPECT(now >= previous);
        previous = now;
    }
    KEXPECT(previous > first);
}

// What the counter counts: a loop of exactly two instructions per pass
// (subs, b.ne), timed by CNTVCT_EL0. tools/run gives QEMU a 1 GHz counter, so
// under --deterministic (1 ns per instruction) the reading is the loop's
// 200,000 instructions plus the few of the reads themselves;
// tests/system/arm64.cmake requires it within 1%. A 62.5 MHz counter reads
// 12,500 and fails there.
KTEST("arm64.counter_counts_instructions")
{
    constexpr uint64_t k_passes = 100000;
    uint64_t left = k_passes;
    uint64_t start = read_cntvct();
    asm volatile("1: subs %0, %0, #1\n"
                 "b.ne 1b"
                 : "+r"(left)::"cc");
    uint64_t end = read_cntvct();
    KEXPECT_EQ(left, 0u);
    KEXPECT(end > start);
    ktest::metric("arm64.spin_200k", end - start, "cycles");
}

// entry.S must leave the kernel at EL1 with interrupts masked and its own
// exception vectors installed.
KTEST("arm64.boot_leaves_el1_masked_with_vectors")
{
    KEXPECT_EQ(current_el(), 1u);
    KEXPECT(!arch::interrupts_disable());
    arch::interrupts_restore(false);
    KEXPECT(read_daif() & k_daif_irq);
    uint64_t vbar;
    asm volatile("mrs %0, vbar_el1" : "=r"(vbar));
    KEXPECT_EQ(vbar, reinterpret_cast<uint64_t>(arm64_exception_vectors));
}

} // namespace toll::arm64
