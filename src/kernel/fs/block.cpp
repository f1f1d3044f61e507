// The block layer's queue: requests are appended, the head is in flight, and
// the driver's interrupt completes it and starts the next one.
#include "kernel/fs/block.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"
#include "kernel/proc/thread.h"
#include "lib/string.h"

namespace toll::fs {
namespace {

constexpr size_t k_max_devices = 4;
BlockDevice* g_devices[k_max_devices];
size_t g_device_count;

TOLL_PARAM(param_blk_cut, "blk.cut",
           "crash testing: the power goes just before the Nth write request reaches a disk");
unsigned long g_cut, g_writes; // blk.cut=, and the write calls so far
bool g_cut_read;
TOLL_COUNTER(g_requests, "blk.requests");
TOLL_COUNTER(g_write_calls, "blk.write_calls"); // block_io calls that write (blk.cut counts these)
TOLL_COUNTER(g_sectors, "blk.sectors");
TOLL_COUNTER(g_waits, "blk.waits");

// Appends @p r to the queue, starting it if the disk is idle. Interrupts
// are off.
void enqueue(BlockDevice& d, BlockRequest& r)
{
    r.next = nullptr;
    if (d.tail)
        d.tail->next = &r;
    else
        d.head = &r;
    d.tail = &r;
    if (d.head == &r)
        d.ops->start(d, r);
}

} // namespace

void block_register(BlockDevice* device)
{
    TOLL_ASSERT(g_device_count < k_max_devices);
    g_devices[g_device_count++] = device;
}

BlockDevice* block_find(const char* name)
{
    for (size_t i = 0; i < g_device_count; ++i)
        if (strcmp(g_devices[i]->name, name) == 0)
            return g_devices[i];
    return nullptr;
}

BlockDevice* block_device(size_t i)
{
    return i < g_device_count ? g_devices[i] : nullptr;
}

Errno block_io(BlockDevice& device, uint64_t sector, uint32_t count, void* buffer, bool write)
{
    if (sector > device.sectors || count > device.sectors - sector)
        return k_einval;
    auto* bytes = static_cast<uint8_t*>(buffer);
    // blk.cut=N: a power cut at a chosen point, for the crash tests: the
    // Nth write and all after it never happen.
    if (!g_cut_read) {
        g_cut = param_get_ulong("blk.cut", 0);
        g_cut_read = true;
    }
    if (write)
        g_write_calls.add();
    if (write && g_cut != 0 && ++g_writes >= g_cut) {
        kprintf("blk: power cut before write %lu (blk.cut)\n", g_writes);
        arch::poweroff(false);
    }
    while (count > 0) {
        uint32_t n = count < device.max_sectors ? count : device.max_sectors;
        BlockRequest r;
        r.sector = sector;
        r.count = n;
        r.buffer = bytes;
        r.write = write;
        g_requests.add();
        g_sectors.add(n);
        {
            // Lock: the disk's queue (interrupts off until the block lock exists).
            arch::InterruptsOff off;
            enqueue(device, r);
            if (!r.done)
                g_waits.add();
            while (!r.done)
                proc::sleep_on(&r);
        }
        if (r.error != k_ok)
            return r.error;
        sector += n;
        count -= n;
        bytes += n * k_sector_size;
    }
    return k_ok;
}

void block_complete(BlockDevice& device, Errno error)
{
    BlockRequest* r = device.head;
    if (!r)
        return; // an interrupt with nothing in flight (a probe's leftover)
    device.head = r->next;
    if (!device.head)
        device.tail = nullptr;
    r->error = error;
    r->done = true;
    proc::wakeup(r);
    if (device.head)
        device.ops->start(device, *device.head);
}

} // namespace toll::fs
