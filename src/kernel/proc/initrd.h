// The initial ramdisk: a cpio archive ("newc" format) of the user programs,
// linked into the kernel image. Read-only.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::proc {

/// One file of the ramdisk.
struct RamdiskFile {
    char path[64]; ///< absolute, e.g. "/bin/sh"
    const uint8_t* data;
    size_t size;
};

/// Indexes the archive linked into the kernel, then the @p extra archive the
/// loader passed (nullptr if none; its files replace same-named ones).
/// Returns the number of files.
size_t initrd_init(const uint8_t* extra = nullptr, size_t extra_size = 0);

/// Finds a file by absolute path; nullptr if absent.
const RamdiskFile* initrd_lookup(const char* path);

/// The @p i-th file (for listing), or nullptr past the end.
const RamdiskFile* initrd_file(size_t i);

} // namespace toll::proc
