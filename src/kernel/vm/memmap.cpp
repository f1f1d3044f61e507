// The memory-map sanitiser: a sweep over the boundaries of every entry, which
// gives each piece between two boundaries the strongest type that covers it.
#include "kernel/vm/memmap.h"

namespace toll::vm {
namespace {

constexpr size_t k_max_input = BootInfo::k_max_regions;

void sort_u64(uint64_t* v, size_t n)
{
    for (size_t i = 1; i < n; ++i) // insertion sort: n is at most 128
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; --j) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

uint64_t end_of(const MemRegion& r)
{
    // Clamp at 2^64 - 1 so that a bogus length cannot wrap around.
    return r.length > ~uint64_t(0) - r.base ? ~uint64_t(0) : r.base + r.length;
}

} // namespace

unsigned mem_type_precedence(MemType type)
{
    switch (type) {
    case MemType::usable:
        return 1;
    case MemType::acpi_reclaimable:
        return 2;
    case MemType::reserved:
        return 3;
    case MemType::acpi_nvs:
        return 4;
    case MemType::bad:
        return 5;
    }
    return 3; // an unknown type is as good as reserved
}

size_t memmap_sanitise(MemRegion* regions, size_t count, size_t capacity)
{
    if (count > k_max_input)
        count = k_max_input;
    MemRegion input[k_max_input];
    size_t n = 0;
    for (size_t i = 0; i < count; ++i)
        if (regions[i].length != 0)
            input[n++] = regions[i];
    uint64_t points[2 * k_max_input];
    size_t npoints = 0;
    for (size_t i = 0; i < n; ++i) {
        points[npoints++] = input[i].base;
        points[npoints++] = end_of(input[i]);
    }
    sort_u64(points, npoints);

    size_t out = 0;
    bool overflow = false;
    for (size_t p = 0; p + 1 < npoints; ++p) {
        uint64_t lo = points[p], hi = points[p + 1];
        if (lo == hi)
            continue;
        // The strongest type covering [lo, hi), if any entry covers it.
        unsigned best = 0;
        MemType type = MemType::usable;
        for (size_t i = 0; i < n; ++i)
            if (input[i].base <= lo && end_of(input[i]) >= hi &&
                mem_type_precedence(input[i].type) > best) {
                best = mem_type_precedence(input[i].type);
                type = input[i].type;
            }
        if (best == 0)
            continue; // a hole
        if (out > 0 && regions[out - 1].type == type &&
            regions[out - 1].base + regions[out - 1].length == lo) {
            regions[out - 1].length += hi - lo;
            continue;
        }
        if (out == capacity) {
            overflow = true;
            break;
        }
        regions[out++] = MemRegion{lo, hi - lo, type};
    }
    return overflow ? capacity + 1 : out;
}

uint64_t memmap_total(const MemRegion* regions, size_t count, MemType type)
{
    uint64_t total = 0;
    for (size_t i = 0; i < count; ++i)
        if (regions[i].type == type)
            total += regions[i].length;
    return total;
}

} // namespace toll::vm
