// Turns QEMU's device tree into the core's BootInfo: the command line from
// /chosen, usable memory from the memory nodes, and the PSCI conduit.
#include "arch/arm64/board.h"
#include "arch/arm64/fdt.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/physmem.h"
#include "lib/string.h"

namespace toll::arm64 {
namespace {

// Devicetree Specification 2.3.5: a node without #address-cells or
// #size-cells gets these defaults.
constexpr uint32_t k_default_address_cells = 2, k_default_size_cells = 1;
using arch::k_page_size;

/// True if node @p name is @p base, with or without a unit address ("memory@40000000").
bool node_is(const char* name, const char* base)
{
    size_t n = strlen(base);
    return strncmp(name, base, n) == 0 && (name[n] == '\0' || name[n] == '@');
}

/// True if a property value is exactly the NUL-terminated string @p text.
bool value_is(const uint8_t* value, uint32_t length, const char* text)
{
    size_t n = strlen(text);
    return length == n + 1 && memcmp(value, text, n + 1) == 0;
}

/// Adds [base, base + length) as usable, cutting out the page-rounded
/// range [hole, hole_end), which is reported reserved instead.
void add_usable_around(BootInfo& info, uint64_t base, uint64_t length, uint64_t hole,
                       uint64_t hole_end)
{
    uint64_t end = base + length;
    hole &= ~(k_page_size - 1);
    hole_end = (hole_end + k_page_size - 1) & ~(k_page_size - 1);
    if (hole_end <= base || hole >= end) {
        info.add_region(base, length, MemType::usable);
        return;
    }
    if (hole > base)
        info.add_region(base, hole - base, MemType::usable);
    uint64_t cut_start = hole > base ? hole : base, cut_end = hole_end < end ? hole_end : end;
    info.add_region(cut_start, cut_end - cut_start, MemType::reserved);
    if (cut_end < end)
        info.add_region(cut_end, end - cut_end, MemType::usable);
}

/// The walk's visitor: remembers what it needs from the nodes just below the root.
class BootTreeReader {
  public:
    BootTreeReader(Board& board, BootInfo& info) : m_board(board), m_info(info) {}

    const uint8_t* bootargs = nullptr;
    uint32_t bootargs_length = 0;

    void begin_node(const char* name, int depth)
    {
        if (depth == 2) {
            m_cpu_node = m_node == Node::cpus && node_is(name, "cpu");
            return;
        }
        if (depth != 1)
            return;
        m_node = node_is(name, "memory")   ? Node::memory
                 : node_is(name, "chosen") ? Node::chosen
                 : node_is(name, "psci")   ? Node::psci
                 : node_is(name, "cpus")   ? Node::cpus
                                           : Node::other;
        m_is_memory = m_node == Node::memory;
        m_reg = nullptr;
        m_reg_length = 0;
    }

    void property(const char* name, const uint8_t* value, uint32_t length, int depth)
    {
        if (depth == 0) {
            if (strcmp(name, "#address-cells") == 0 && length == 4)
                m_board.address_cells = fdt_be32(value);
            else if (strcmp(name, "#size-cells") == 0 && length == 4)
                m_board.size_cells = fdt_be32(value);
            return;
        }
        if (depth == 2 && m_cpu_node && strcmp(name, "reg") == 0)
            add_cpu(value, length);
        if (depth == 1 && m_node == Node::cpus && strcmp(name, "#address-cells") == 0 &&
            length == 4)
            m_cpu_cells = fdt_be32(value);
        if (depth != 1)
            return;
        if (strcmp(name, "device_type") == 0 && value_is(value, length, "memory"))
            m_is_memory = true;
        else if (strcmp(name, "reg") == 0)
            m_reg = value, m_reg_length = length;
        else if (m_node == Node::chosen && strcmp(name, "bootargs") == 0)
            bootargs = value, bootargs_length = length;
        else if (m_node == Node::psci && strcmp(name, "method") == 0)
            m_board.psci = value_is(value, length, "hvc")   ? PsciConduit::hvc
                           : value_is(value, length, "smc") ? PsciConduit::smc
                                                            : PsciConduit::none;
    }

    void end_node(int depth)
    {
        if (depth == 1 && m_is_memory && m_reg)
            add_memory_ranges();
    }

  private:
    enum class Node { other, memory, chosen, psci, cpus };

    // A /cpus/cpu@N reg: its MPIDR affinity, in /cpus' #address-cells (1 or 2).
    void add_cpu(const uint8_t* value, uint32_t length)
    {
        constexpr unsigned k_max = sizeof m_board.cpu_mpidr / sizeof m_board.cpu_mpidr[0];
        if (m_cpu_cells == 0 || m_cpu_cells > 2 || length < 4 * m_cpu_cells ||
            m_board.cpu_count == k_max)
            return;
        m_board.cpu_mpidr[m_board.cpu_count++] = fdt_cells(value, m_cpu_cells);
    }

    // Devicetree Specification 3.4: a memory node's reg is a list of
    // (address, size) pairs in the root's #address-cells/#size-cells.
    void add_memory_ranges()
    {
        uint32_t ac = m_board.address_cells, sc = m_board.size_cells;
        if (ac == 0 || ac > 2 || sc == 0 || sc > 2)
            return; // Cells wider than 64 bits cannot describe this machine's memory.
        uint32_t entry = 4 * (ac + sc);
        for (uint32_t at = 0; at + entry <= m_reg_length; at += entry) {
            uint64_t base = fdt_cells(m_reg + at, ac);
            uint64_t length = fdt_cells(m_reg + at + 4 * ac, sc);
            if (length != 0)
                add_usable_around(m_info, base, length, m_board.dtb,
                                  m_board.dtb + m_board.dtb_size);
        }
    }

    Board& m_board;
    BootInfo& m_info;
    Node m_node = Node::other;
    bool m_is_memory = false;
    bool m_cpu_node = false;
    uint32_t m_cpu_cells = 2; // the Devicetree Specification default; QEMU says 1 explicitly
    const uint8_t* m_reg = nullptr;
    uint32_t m_reg_length = 0;
};

} // namespace

bool read_device_tree(uintptr_t dtb, Board& board, BootInfo& info, char* cmdline,
                      size_t cmdline_size)
{
    Fdt fdt(reinterpret_cast<const void*>(dtb));
    if (!fdt.valid())
        return false;
    board.dtb = arch::virt_to_phys(reinterpret_cast<const void*>(dtb));
    board.dtb_size = fdt.total_size();
    board.address_cells = k_default_address_cells;
    board.size_cells = k_default_size_cells;
    BootTreeReader reader(board, info);
    info.source = "device tree";
    if (!fdt.walk(reader))
        return false;
    if (reader.bootargs && cmdline_size > 0) {
        size_t n = strnlen(reinterpret_cast<const char*>(reader.bootargs), reader.bootargs_length);
        if (n > cmdline_size - 1)
            n = cmdline_size - 1;
        memcpy(cmdline, reader.bootargs, n);
        cmdline[n] = '\0';
    }
    return true;
}

} // namespace toll::arm64
