// The port's disk drivers: probing finds the machine's disks and registers
// each with the block layer (kernel/fs/block.h).
#pragma once

namespace toll::arch {

/// Probes the disks the board has (i386: the primary ATA channel; arm64:
/// virtio-blk on the device tree's virtio-mmio transports), registers them
/// and enables their interrupts. Called once at boot, after the scheduler
/// is up (a request sleeps until its interrupt), with interrupts on.
void disks_init();

} // namespace toll::arch
