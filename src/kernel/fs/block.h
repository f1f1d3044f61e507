// The block layer: disks the ports' drivers register, and a request queue
// per disk that hands one request at a time to the driver and completes it
// from the driver's interrupt. Callers sleep until their request is done.
#pragma once
#include "kernel/kern/errno.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::fs {

/// Every disk Toll drives has 512-byte sectors (ATA's and virtio-blk's unit).
constexpr size_t k_sector_size = 512;

struct BlockDevice;

/// One transfer: @p count sectors from @p sector to or from @p buffer.
struct BlockRequest {
    uint64_t sector = 0;
    uint32_t count = 0;
    uint8_t* buffer = nullptr; ///< kernel memory, count * k_sector_size bytes
    bool write = false;
    bool done = false;
    Errno error = k_ok;
    BlockRequest* next = nullptr; ///< the queue's link
};

/// What a driver does. start() begins @p request on the device (the queue
/// holds it at its head until the driver calls block_complete); it is called
/// with interrupts off, from the submitter or from the completing interrupt.
struct BlockDriverOps {
    void (*start)(BlockDevice& device, BlockRequest& request);
};

/// A disk. The driver fills name, sectors, max_sectors, ops and driver
/// before block_register; the rest belongs to the block layer.
struct BlockDevice {
    const char* name = nullptr; ///< "ata0-slave", "virtio0"
    uint64_t sectors = 0;       ///< the capacity
    uint32_t max_sectors = 1;   ///< the most one request may move
    const BlockDriverOps* ops = nullptr;
    void* driver = nullptr; ///< the driver's own state
    // The queue (lock: interrupts off, until the block lock exists): head is
    // the request in flight.
    BlockRequest* head = nullptr;
    BlockRequest* tail = nullptr;
};

/// Adds a disk (a driver's probe calls it at boot). At most k_max_devices.
void block_register(BlockDevice* device);

/// The disk named @p name, or nullptr.
BlockDevice* block_find(const char* name);

/// The @p i-th disk registered, or nullptr past the last.
BlockDevice* block_device(size_t i);

/// Reads (or writes, if @p write) @p count sectors at @p sector, sleeping
/// until the disk is done. Splits the transfer at the driver's max_sectors.
/// k_einval past the end of the disk, k_eio when the disk reports an error.
/// Counts blk.requests, blk.sectors, blk.waits (the sleeps).
Errno block_io(BlockDevice& device, uint64_t sector, uint32_t count, void* buffer, bool write);

/// The driver's interrupt: the request at the head of @p device's queue is
/// finished with @p error; wakes its submitter and starts the next.
/// Called with interrupts off.
void block_complete(BlockDevice& device, Errno error);

} // namespace toll::fs
