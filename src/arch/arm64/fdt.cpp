// Header checks of the flattened device tree reader (fdt.h).
#include "arch/arm64/fdt.h"

namespace toll::arm64 {

bool Fdt::valid() const
{
    if (fdt_be32(m_base + k_off_magic) != k_fdt_magic || version() < k_fdt_min_version)
        return false;
    uint64_t total = total_size();
    uint64_t structure_end =
        uint64_t(fdt_be32(m_base + k_off_struct)) + fdt_be32(m_base + k_off_struct_size);
    uint64_t strings_end =
        uint64_t(fdt_be32(m_base + k_off_strings)) + fdt_be32(m_base + k_off_strings_size);
    return structure_end <= total && strings_end <= total;
}

} // namespace toll::arm64
