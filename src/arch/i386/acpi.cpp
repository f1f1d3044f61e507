// Finding the processors. ACPI 6.4: 5.2.5 (RSDP: where to look, its layout),
// 5.2.7 (RSDT), 5.2.12 (MADT and its entries). The MultiProcessor
// Specification 1.4, chapter 4 (the floating pointer and the configuration
// table) for firmware without ACPI.
#include "arch/i386/acpi.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/physmem.h"
#include "kernel/kern/param.h"
#include "lib/string.h"

namespace toll::i386 {
namespace {

TOLL_PARAM(param_acpi, "i386.acpi",
           "off: find the CPUs in the MP table, not the ACPI MADT; on is the default");

// ACPI 6.4, 5.2.5.1: the RSDP is on a 16-byte boundary in the EBDA's first
// KB (its segment is the word at 0x40E) or in 0xE0000-0xFFFFF.
constexpr uint32_t k_ebda_segment_ptr = 0x40E, k_ebda_search = 1024;
constexpr uint32_t k_bios_area = 0xE0000, k_bios_area_end = 0x100000;
// MP 1.4, 4.1: the floating pointer is in the EBDA's first KB, the last KB
// of base memory, or 0xF0000-0xFFFFF.
constexpr uint32_t k_base_memory_last_kb = 639 * 1024, k_mp_bios_area = 0xF0000;

// ACPI 6.4, 5.2.5.3: RSDP; 5.2.6: the header every system table starts with.
struct [[gnu::packed]] Rsdp {
    char signature[8]; // "RSD PTR "
    uint8_t checksum;
    char oem[6];
    uint8_t revision;
    uint32_t rsdt;
};
struct [[gnu::packed]] SdtHeader {
    char signature[4];
    uint32_t length;
    uint8_t revision, checksum;
    char oem[6], oem_table[8];
    uint32_t oem_revision, creator, creator_revision;
};
// 5.2.12: the MADT after its header: the local APIC address, flags, entries.
struct [[gnu::packed]] MadtFixed {
    uint32_t local_apic;
    uint32_t flags;
};
// 5.2.12.2 and 5.2.12.3: entry types 0 (processor local APIC) and 1 (I/O APIC).
constexpr uint8_t k_madt_local_apic = 0, k_madt_io_apic = 1;
constexpr uint32_t k_local_apic_enabled = 1u << 0;

// MP 1.4, 4.1 and 4.2: the floating pointer and the configuration table header.
struct [[gnu::packed]] MpFloating {
    char signature[4]; // "_MP_"
    uint32_t config;
    uint8_t length, revision, checksum, features[5];
};
struct [[gnu::packed]] MpConfig {
    char signature[4]; // "PCMP"
    uint16_t length;
    uint8_t revision, checksum;
    char oem[20];
    uint32_t oem_table;
    uint16_t oem_table_size, entry_count;
    uint32_t local_apic;
    uint16_t extended_length;
    uint8_t extended_checksum, reserved;
};
// MP 1.4, 4.3: entry types; a processor entry is 20 bytes, the others 8.
constexpr uint8_t k_mp_processor = 0, k_mp_io_apic = 2;
constexpr uint32_t k_mp_processor_size = 20, k_mp_other_size = 8;
constexpr uint8_t k_mp_cpu_enabled = 1u << 0;

// The kernel's view of physical [pa, pa + size), or nullptr outside the direct map.
const uint8_t* phys(uint32_t pa, uint32_t size)
{
    if (uint64_t(pa) + size > arch::direct_map_limit())
        return nullptr;
    return static_cast<const uint8_t*>(arch::phys_to_virt(pa));
}

bool sums_to_zero(const uint8_t* p, uint32_t size)
{
    uint8_t sum = 0;
    for (uint32_t i = 0; i < size; ++i)
        sum = static_cast<uint8_t>(sum + p[i]);
    return sum == 0;
}

// The first 16-byte-aligned structure in [from, to) that starts with
// @p signature and whose first @p size bytes sum to zero.
const uint8_t* scan(uint32_t from, uint32_t to, const char* signature, uint32_t size)
{
    size_t length = strlen(signature);
    for (uint32_t pa = from & ~15u; pa + size <= to; pa += 16) {
        const uint8_t* p = phys(pa, size);
        if (p && memcmp(p, signature, length) == 0 && sums_to_zero(p, size))
            return p;
    }
    return nullptr;
}

uint32_t ebda_base()
{
    const uint8_t* p = phys(k_ebda_segment_ptr, 2);
    return p ? uint32_t(p[0] | p[1] << 8) << 4 : 0;
}

void add_cpu(MachineCpus& m, uint32_t apic_id)
{
    if (m.count < k_max_cpus)
        m.apic_id[m.count] = apic_id;
    ++m.count;
}

bool from_madt(MachineCpus& m)
{
    const uint8_t* found = nullptr;
    if (uint32_t ebda = ebda_base())
        found = scan(ebda, ebda + k_ebda_search, "RSD PTR ", sizeof(Rsdp));
    if (!found)
        found = scan(k_bios_area, k_bios_area_end, "RSD PTR ", sizeof(Rsdp));
    if (!found)
        return false;
    Rsdp rsdp;
    memcpy(&rsdp, found, sizeof rsdp);
    const uint8_t* rsdt_head = phys(rsdp.rsdt, sizeof(SdtHeader));
    if (!rsdt_head)
        return false;
    SdtHeader rsdt;
    memcpy(&rsdt, rsdt_head, sizeof rsdt);
    const uint8_t* rsdt_all = phys(rsdp.rsdt, rsdt.length);
    if (!rsdt_all || memcmp(rsdt.signature, "RSDT", 4) != 0 || !sums_to_zero(rsdt_all, rsdt.length))
        return false;
    for (uint32_t at = sizeof(SdtHeader); at + 4 <= rsdt.length; at += 4) {
        uint32_t table;
        memcpy(&table, rsdt_all + at, 4);
        const uint8_t* head = phys(table, sizeof(SdtHeader));
        if (!head || memcmp(head, "APIC", 4) != 0)
            continue;
        SdtHeader madt;
        memcpy(&madt, head, sizeof madt);
        const uint8_t* p = phys(table, madt.length);
        if (!p || !sums_to_zero(p, madt.length))
            continue;
        for (uint32_t e = sizeof(SdtHeader) + sizeof(MadtFixed); e + 2 <= madt.length;) {
            uint8_t type = p[e], length = p[e + 1];
            if (length < 2 || e + length > madt.length)
                break;
            if (type == k_madt_local_apic && length >= 8) {
                uint32_t flags;
                memcpy(&flags, p + e + 4, 4);
                if (flags & k_local_apic_enabled)
                    add_cpu(m, p[e + 3]);
            } else if (type == k_madt_io_apic && length >= 12 && !m.ioapic_phys) {
                memcpy(&m.ioapic_phys, p + e + 4, 4);
            }
            e += length;
        }
        m.source = "ACPI MADT";
        return m.count > 0;
    }
    return false;
}

bool from_mp_table(MachineCpus& m)
{
    const uint8_t* found = nullptr;
    if (uint32_t ebda = ebda_base())
        found = scan(ebda, ebda + k_ebda_search, "_MP_", sizeof(MpFloating));
    if (!found)
        found =
            scan(k_base_memory_last_kb, k_base_memory_last_kb + 1024, "_MP_", sizeof(MpFloating));
    if (!found)
        found = scan(k_mp_bios_area, k_bios_area_end, "_MP_", sizeof(MpFloating));
    if (!found)
        return false;
    MpFloating fp;
    memcpy(&fp, found, sizeof fp);
    const uint8_t* head = fp.config ? phys(fp.config, sizeof(MpConfig)) : nullptr;
    if (!head) // a default configuration (features[0] != 0): two CPUs, ids 0 and 1
        return false;
    MpConfig config;
    memcpy(&config, head, sizeof config);
    const uint8_t* p = phys(fp.config, config.length);
    if (!p || memcmp(config.signature, "PCMP", 4) != 0 || !sums_to_zero(p, config.length))
        return false;
    uint32_t e = sizeof(MpConfig);
    for (unsigned i = 0; i < config.entry_count && e < config.length; ++i) {
        uint8_t type = p[e];
        if (type == k_mp_processor) {
            if (p[e + 3] & k_mp_cpu_enabled)
                add_cpu(m, p[e + 1]);
            e += k_mp_processor_size;
        } else {
            if (type == k_mp_io_apic && !m.ioapic_phys)
                memcpy(&m.ioapic_phys, p + e + 4, 4);
            e += k_mp_other_size;
        }
    }
    m.source = "MP table";
    return m.count > 0;
}

} // namespace

MachineCpus find_cpus()
{
    MachineCpus m;
    static const char* const acpi_names[] = {"on", "off"};
    if (param_get_choice("i386.acpi", acpi_names, 0) == 0 && from_madt(m))
        return m;
    m = MachineCpus{};
    if (from_mp_table(m))
        return m;
    return MachineCpus{};
}

} // namespace toll::i386
