// A reader for the flattened device tree (FDT, "DTB") that QEMU hands the
// arm64 kernel: the header checks and a streaming walk over nodes and
// properties. Format: Devicetree Specification v0.4, chapter 5.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::arm64 {

/// Devicetree Specification 5.2: the magic number at the start of a blob.
constexpr uint32_t k_fdt_magic = 0xD00DFEED;
/// The oldest structure version the walker reads (5.2: last_comp_version 16).
constexpr uint32_t k_fdt_min_version = 16;

/// Reads a big-endian 32-bit cell byte by byte, so that it works at any
/// alignment, even with the MMU off (where unaligned loads fault).
inline uint32_t fdt_be32(const void* at)
{
    auto* p = static_cast<const uint8_t*>(at);
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

/// Reads a number of @p cells big-endian 32-bit cells (1 or 2) as one value.
inline uint64_t fdt_cells(const void* at, uint32_t cells)
{
    uint64_t value = 0;
    for (uint32_t i = 0; i < cells; ++i)
        value = (value << 32) | fdt_be32(static_cast<const uint8_t*>(at) + 4 * i);
    return value;
}

/// A device tree blob in memory. Construct it on an address, check valid(),
/// then walk() it. Reading never writes the blob.
class Fdt {
  public:
    /// A blob at @p address; nothing is read until valid() or walk().
    explicit Fdt(const void* address) : m_base(static_cast<const uint8_t*>(address)) {}

    /// True if the header has the magic number, a version the walker
    /// reads, and structure and strings blocks that lie inside total_size().
    bool valid() const;

    /// The size of the whole blob in bytes, from its header.
    uint32_t total_size() const { return fdt_be32(m_base + k_off_total_size); }

    /// The blob's own version number (17 for QEMU's).
    uint32_t version() const { return fdt_be32(m_base + k_off_version); }

    /// Walks every node and property in the order of the structure block.
    /// @p visitor gets begin_node(name, depth), property(name, value, length,
    /// depth) and end_node(depth); the root node has depth 0 and the name "".
    /// Properties of a node come before its children (Devicetree
    /// Specification 5.4.1), so a visitor can act on them as they arrive.
    /// Returns true if the walk reached FDT_END without a malformed token.
    template <typename Visitor>
    bool walk(Visitor& visitor) const;

  private:
    // Devicetree Specification 5.2: header field offsets.
    static constexpr size_t k_off_magic = 0, k_off_total_size = 4, k_off_struct = 8,
                            k_off_strings = 12, k_off_version = 20, k_off_strings_size = 32,
                            k_off_struct_size = 36;
    // Devicetree Specification 5.4.1: structure block tokens.
    static constexpr uint32_t k_begin_node = 1, k_end_node = 2, k_prop = 3, k_nop = 4, k_end = 9;

    static size_t align4(size_t n) { return (n + 3) & ~size_t(3); }

    const uint8_t* m_base;
};

template <typename Visitor>
bool Fdt::walk(Visitor& visitor) const
{
    if (!valid())
        return false;
    const uint8_t* structure = m_base + fdt_be32(m_base + k_off_struct);
    const char* strings = reinterpret_cast<const char*>(m_base + fdt_be32(m_base + k_off_strings));
    size_t size = fdt_be32(m_base + k_off_struct_size);
    uint32_t strings_size = fdt_be32(m_base + k_off_strings_size);
    size_t at = 0;
    int depth = -1;
    while (at + 4 <= size) {
        uint32_t token = fdt_be32(structure + at);
        at += 4;
        if (token == k_begin_node) {
            auto* name = reinterpret_cast<const char*>(structure + at);
            size_t length = 0;
            while (at + length < size && name[length])
                ++length;
            if (at + length >= size)
                return false;
            visitor.begin_node(name, ++depth);
            at = align4(at + length + 1);
        } else if (token == k_end_node) {
            if (depth < 0)
                return false;
            visitor.end_node(depth--);
        } else if (token == k_prop) {
            if (at + 8 > size || depth < 0)
                return false;
            uint32_t length = fdt_be32(structure + at);
            uint32_t name_offset = fdt_be32(structure + at + 4);
            at += 8;
            if (at + length > size || name_offset >= strings_size)
                return false;
            visitor.property(strings + name_offset, structure + at, length, depth);
            at = align4(at + length);
        } else if (token == k_nop) {
            continue;
        } else if (token == k_end) {
            return depth == -1;
        } else {
            return false;
        }
    }
    return false;
}

} // namespace toll::arm64
