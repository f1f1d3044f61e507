// virtio-blk over virtio-mmio on QEMU's virt machine: the transports are
// found in the device tree ("virtio,mmio" nodes), a block device on one is
// driven through a single virtqueue, one request at a time, completed by
// its interrupt. Layouts: Virtual I/O Device (VIRTIO) Version 1.1 (OASIS),
// 4.2.2 (MMIO registers), 2.6 (split virtqueues), 5.2 (block device).
#include "arch/arm64/board.h"
#include "arch/arm64/fdt.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/layout.h"
#include "kernel/arch/disk.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/physmem.h"
#include "kernel/fs/block.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::arm64 {
namespace {

// VIRTIO 1.1 4.2.2: MMIO register offsets.
constexpr uintptr_t k_magic = 0x000, k_version = 0x004, k_device_id = 0x008,
                    k_device_features = 0x010, k_device_features_sel = 0x014,
                    k_driver_features = 0x020, k_driver_features_sel = 0x024, k_queue_sel = 0x030,
                    k_queue_num_max = 0x034, k_queue_num = 0x038, k_queue_ready = 0x044,
                    k_queue_notify = 0x050, k_interrupt_status = 0x060, k_interrupt_ack = 0x064,
                    k_status = 0x070, k_queue_desc_low = 0x080, k_queue_desc_high = 0x084,
                    k_queue_driver_low = 0x090, k_queue_driver_high = 0x094,
                    k_queue_device_low = 0x0A0, k_queue_device_high = 0x0A4, k_config = 0x100;
// VIRTIO 1.1 4.2.2: "virt" little-endian; version 2 is the modern (non-legacy) interface.
constexpr uint32_t k_magic_value = 0x74726976, k_modern_version = 2;
// VIRTIO 1.1 5: device ID 2 is a block device.
constexpr uint32_t k_id_block = 2;
// VIRTIO 1.1 2.1: device status bits.
constexpr uint32_t k_st_acknowledge = 1, k_st_driver = 2, k_st_driver_ok = 4, k_st_features_ok = 8;
// VIRTIO 1.1 6: VIRTIO_F_VERSION_1 is feature bit 32 (bit 0 of word 1).
constexpr uint32_t k_feature_version_1 = 1;
// VIRTIO 1.1 2.6.5: descriptor flags.
constexpr uint16_t k_desc_next = 1, k_desc_write = 2;
// VIRTIO 1.1 5.2.6: request types and the status byte's success value.
constexpr uint32_t k_blk_in = 0, k_blk_out = 1;
constexpr uint8_t k_blk_ok = 0;
// VIRTIO 1.1 4.2.2: InterruptStatus bits: a used buffer, a configuration change.
constexpr uint32_t k_int_used = 1, k_int_config = 2;
// QEMU hw/arm/virt.c: SPIs start at INTID 32 (GIC IHI 0048B, 2.2.1).
constexpr unsigned k_spi_base = 32;
// Devicetree Specification / GIC binding: an interrupts entry is 3 cells,
// the first 0 for an SPI.
constexpr uint32_t k_gic_spi = 0;

constexpr uint16_t k_queue_size = 4; // one request needs three descriptors

struct Desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};
struct Avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[k_queue_size];
    uint16_t used_event;
};
struct UsedElem {
    uint32_t id;
    uint32_t len;
};
struct Used {
    uint16_t flags;
    uint16_t idx;
    UsedElem ring[k_queue_size];
    uint16_t avail_event;
};
struct RequestHeader {
    uint32_t type;
    uint32_t reserved;
    uint64_t sector;
};

// The page the queue lives in: rings, the request header and status.
struct QueuePage {
    Desc desc[k_queue_size]; // 16-byte aligned (offset 0)
    Avail avail;
    alignas(4) Used used;
    RequestHeader header;
    uint8_t status;
};

struct VirtioDisk {
    fs::BlockDevice device;
    uintptr_t regs = 0; // kernel address of the transport
    QueuePage* queue = nullptr;
    // A page the data goes through, so that the device sees physically
    // contiguous memory whatever the caller's buffer is.
    uint8_t* bounce = nullptr;
    uint16_t used_seen = 0;
    bool reading = false;
    uint8_t* target = nullptr; // the caller's buffer of the request in flight
    size_t bytes = 0;
};

VirtioDisk g_disk;
TOLL_COUNTER(g_virtio_irqs, "cpu.irq.virtio");

uint32_t rd(const VirtioDisk& d, uintptr_t off)
{
    return *reinterpret_cast<volatile uint32_t*>(d.regs + off);
}

void wr(const VirtioDisk& d, uintptr_t off, uint32_t v)
{
    *reinterpret_cast<volatile uint32_t*>(d.regs + off) = v;
}

// Arm ARM B2.3.12: a DSB orders the ring's stores before the device sees
// the notification (Device memory) and the device's writes before we read.
void barrier()
{
    asm volatile("dsb sy" ::: "memory");
}

uint64_t phys(const void* p)
{
    return arch::virt_to_phys(p);
}

void start(fs::BlockDevice& device, fs::BlockRequest& r)
{
    auto& d = *static_cast<VirtioDisk*>(device.driver);
    QueuePage& q = *d.queue;
    d.bytes = r.count * fs::k_sector_size;
    d.reading = !r.write;
    d.target = r.buffer;
    if (r.write)
        memcpy(d.bounce, r.buffer, d.bytes);
    q.header = {r.write ? k_blk_out : k_blk_in, 0, r.sector};
    q.status = 0xFF;
    q.desc[0] = {phys(&q.header), sizeof q.header, k_desc_next, 1};
    q.desc[1] = {phys(d.bounce), static_cast<uint32_t>(d.bytes),
                 static_cast<uint16_t>(k_desc_next | (r.write ? 0 : k_desc_write)), 2};
    q.desc[2] = {phys(&q.status), 1, k_desc_write, 0};
    q.avail.ring[q.avail.idx % k_queue_size] = 0;
    barrier();
    q.avail.idx = static_cast<uint16_t>(q.avail.idx + 1);
    barrier();
    wr(d, k_queue_notify, 0);
}

const fs::BlockDriverOps k_virtio_ops = {start};

void interrupt()
{
    g_virtio_irqs.add();
    VirtioDisk& d = g_disk;
    wr(d, k_interrupt_ack, rd(d, k_interrupt_status) & (k_int_used | k_int_config));
    barrier();
    QueuePage& q = *d.queue;
    while (d.used_seen != q.used.idx) {
        ++d.used_seen;
        if (!d.device.head)
            continue;
        bool ok = q.status == k_blk_ok;
        if (ok && d.reading)
            memcpy(d.target, d.bounce, d.bytes);
        fs::block_complete(d.device, ok ? k_ok : k_eio);
    }
}

// Finds the "virtio,mmio" nodes: each one's reg base and SPI.
class TransportFinder {
  public:
    struct Transport {
        uint64_t base;
        unsigned intid;
    };
    static constexpr unsigned k_max = 32;
    Transport found[k_max];
    unsigned count = 0;

    void begin_node(const char*, int depth)
    {
        if (depth == 1)
            m_virtio = false, m_base = 0, m_intid = 0;
    }
    void property(const char* name, const uint8_t* value, uint32_t length, int depth)
    {
        if (depth != 1)
            return;
        if (strcmp(name, "compatible") == 0 && length >= 12 &&
            memcmp(value, "virtio,mmio", 12) == 0)
            m_virtio = true;
        else if (strcmp(name, "reg") == 0 && length >= 8)
            m_base = fdt_cells(value, length >= 16 ? 2 : 1);
        else if (strcmp(name, "interrupts") == 0 && length >= 12 && fdt_be32(value) == k_gic_spi)
            m_intid = k_spi_base + fdt_be32(value + 4);
    }
    void end_node(int depth)
    {
        if (depth == 1 && m_virtio && m_base && m_intid && count < k_max)
            found[count++] = {m_base, m_intid};
    }

  private:
    bool m_virtio = false;
    uint64_t m_base = 0;
    unsigned m_intid = 0;
};

// Brings up the block device on transport @p t (VIRTIO 1.1 3.1.1, the
// driver's initialisation sequence). False if it is not one we can drive.
bool init_disk(VirtioDisk& d, const TransportFinder::Transport& t)
{
    d.regs = KERNEL_VA_BASE + t.base;
    if (rd(d, k_magic) != k_magic_value || rd(d, k_device_id) != k_id_block)
        return false;
    if (rd(d, k_version) != k_modern_version) {
        kprintf("virtio-blk at 0x%llx: legacy interface (version %u) not driven\n",
                (unsigned long long)t.base, rd(d, k_version));
        return false;
    }
    wr(d, k_status, 0);
    wr(d, k_status, k_st_acknowledge);
    wr(d, k_status, k_st_acknowledge | k_st_driver);
    wr(d, k_device_features_sel, 1);
    if (!(rd(d, k_device_features) & k_feature_version_1))
        return false;
    wr(d, k_driver_features_sel, 0);
    wr(d, k_driver_features, 0);
    wr(d, k_driver_features_sel, 1);
    wr(d, k_driver_features, k_feature_version_1);
    wr(d, k_status, k_st_acknowledge | k_st_driver | k_st_features_ok);
    if (!(rd(d, k_status) & k_st_features_ok))
        return false;
    wr(d, k_queue_sel, 0);
    if (rd(d, k_queue_num_max) < k_queue_size)
        return false;
    d.queue = static_cast<QueuePage*>(vm::alloc_page());
    d.bounce = static_cast<uint8_t*>(vm::alloc_page());
    if (!d.queue || !d.bounce)
        return false;
    wr(d, k_queue_num, k_queue_size);
    uint64_t desc = phys(d.queue->desc), avail = phys(&d.queue->avail), used = phys(&d.queue->used);
    wr(d, k_queue_desc_low, static_cast<uint32_t>(desc));
    wr(d, k_queue_desc_high, static_cast<uint32_t>(desc >> 32));
    wr(d, k_queue_driver_low, static_cast<uint32_t>(avail));
    wr(d, k_queue_driver_high, static_cast<uint32_t>(avail >> 32));
    wr(d, k_queue_device_low, static_cast<uint32_t>(used));
    wr(d, k_queue_device_high, static_cast<uint32_t>(used >> 32));
    wr(d, k_queue_ready, 1);
    wr(d, k_status, k_st_acknowledge | k_st_driver | k_st_features_ok | k_st_driver_ok);
    // VIRTIO 1.1 5.2.4: the configuration starts with capacity, in 512-byte sectors.
    uint64_t capacity = rd(d, k_config) | uint64_t(rd(d, k_config + 4)) << 32;
    static_assert(sizeof(QueuePage) <= arch::k_page_size);
    d.device.name = "virtio0";
    d.device.sectors = capacity;
    d.device.max_sectors = static_cast<uint32_t>(arch::k_page_size / fs::k_sector_size);
    d.device.ops = &k_virtio_ops;
    d.device.driver = &d;
    gic_set_handler(t.intid, interrupt);
    fs::block_register(&d.device);
    kprintf("virtio0: virtio-blk at 0x%llx (INTID %u), %llu sectors (%llu KB)\n",
            (unsigned long long)t.base, t.intid, (unsigned long long)capacity,
            (unsigned long long)capacity / 2);
    return true;
}

} // namespace
} // namespace toll::arm64

namespace toll::arch {

void disks_init()
{
    using namespace arm64;
    if (!board().dtb)
        return;
    static TransportFinder finder; // 32 transports: off the stack
    Fdt fdt(arch::phys_to_virt(board().dtb));
    if (!fdt.walk(finder))
        return;
    for (unsigned i = 0; i < finder.count; ++i)
        if (init_disk(g_disk, finder.found[i]))
            return; // one disk is all Toll drives here
}

} // namespace toll::arch
