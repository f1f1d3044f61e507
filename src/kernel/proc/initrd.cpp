// Reads the cpio "newc" archive built by tools/mkinitrd: a 110-byte ASCII
// header per file (magic 070701, then 13 eight-digit hex fields), the name,
// padding to 4 bytes, the data, padding to 4 bytes; "TRAILER!!!" ends it.
#include "kernel/proc/initrd.h"
#include "kernel/kern/console.h"
#include "lib/format.h"
#include "lib/string.h"

// The archive's bounds, from the arch's initrd.S (.incbin).
extern "C" const uint8_t toll_initrd_start[], toll_initrd_end[];

namespace toll::proc {
const RamdiskFile* initrd_lookup(const char* path);
namespace {

constexpr size_t k_max_files = 128;
constexpr size_t k_header_size = 110;
RamdiskFile g_files[k_max_files];
size_t g_count;

uint32_t hex_field(const uint8_t* header, unsigned index)
{
    // Field 0 is at offset 6 (after the magic), each 8 hex digits.
    const uint8_t* p = header + 6 + index * 8;
    uint32_t v = 0;
    for (int i = 0; i < 8; ++i) {
        uint8_t c = p[i];
        v = v * 16 + (c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
    }
    return v;
}

size_t align4(size_t v)
{
    return (v + 3) & ~size_t(3);
}

// Adds the files of one cpio archive at [base, end) to the index.
void index_archive(const uint8_t* base, const uint8_t* end)
{
    constexpr unsigned k_field_mode = 1, k_field_filesize = 6, k_field_namesize = 11;
    constexpr uint32_t k_mode_type = 0170000, k_mode_regular = 0100000;
    const uint8_t* p = base;
    while (p + k_header_size <= end && memcmp(p, "070701", 6) == 0) {
        uint32_t namesize = hex_field(p, k_field_namesize);
        uint32_t filesize = hex_field(p, k_field_filesize);
        uint32_t mode = hex_field(p, k_field_mode);
        const char* name = reinterpret_cast<const char*>(p + k_header_size);
        const uint8_t* data = base + align4((p + k_header_size + namesize) - base);
        if (data + filesize > end)
            break;
        if (strcmp(name, "TRAILER!!!") == 0)
            break;
        if ((mode & k_mode_type) == k_mode_regular && g_count < k_max_files) {
            char path[sizeof g_files[0].path];
            lib::snformat(path, sizeof path, "/%s", name);
            RamdiskFile* existing = const_cast<RamdiskFile*>(initrd_lookup(path));
            RamdiskFile& f = existing ? *existing : g_files[g_count++];
            size_t n = strnlen(name, sizeof f.path - 2);
            f.path[0] = '/';
            memcpy(f.path + 1, name, n);
            f.path[n + 1] = '\0';
            f.data = data;
            f.size = filesize;
        }
        p = base + align4((data + filesize) - base);
    }
}

} // namespace

size_t initrd_init(const uint8_t* extra, size_t extra_size)
{
    g_count = 0;
    index_archive(toll_initrd_start, toll_initrd_end);
    if (extra)
        index_archive(extra, extra + extra_size);
    return g_count;
}

const RamdiskFile* initrd_lookup(const char* path)
{
    for (size_t i = 0; i < g_count; ++i)
        if (strcmp(g_files[i].path, path) == 0)
            return &g_files[i];
    return nullptr;
}

const RamdiskFile* initrd_file(size_t i)
{
    return i < g_count ? &g_files[i] : nullptr;
}

} // namespace toll::proc
