// The devices on buses the core enumerates itself (PCI), as opposed to the
// disks and consoles each port probes: found and started once at boot.
#pragma once

namespace toll::dev {

/// Enumerates PCI and starts the drivers of what it found (the e1000).
/// Called once at boot, after the scheduler and the file systems are up,
/// with interrupts on.
void devices_init();

} // namespace toll::dev
