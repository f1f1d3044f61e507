// The character devices under /dev: console, tty, zero, null, full, random
// and urandom.
#pragma once
#include "kernel/sys/file.h"

namespace toll::sys {

/// The operations for device @p path ("/dev/zero"), or nullptr if it is none.
const FileOps* device_lookup(const char* path);

} // namespace toll::sys
