// The character devices under /dev: console, tty, zero, null, full, random
// and urandom.
#pragma once
#include "kernel/sys/file.h"

namespace toll::sys {

/// The operations for device @p path ("/dev/zero"), or nullptr if it is none.
const FileOps* device_lookup(const char* path);

/// The path of the device whose operations are @p ops ("/dev/console" for
/// the console and /dev/tty, which share them), or nullptr if @p ops are
/// no device's: what /proc/PID/fd shows for a device opened without a path.
const char* device_name(const FileOps* ops);

} // namespace toll::sys
