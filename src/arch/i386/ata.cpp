// ATA (IDE) disks on the primary channel in PIO mode, interrupt-driven: the
// drive raises IRQ 14 when a sector is ready to read or has been written.
// Register layout and commands: ATA/ATAPI-6 (T13 1410D), sections 7 and 8;
// QEMU's and Bochs' "ide" devices model it.
#include "arch/i386/io.h"
#include "arch/i386/pic.h"
#include "arch/i386/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/disk.h"
#include "kernel/fs/block.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"

namespace toll::i386 {
namespace {

// The primary channel's command block and control block (PC/AT ports).
constexpr uint16_t k_base = 0x1F0, k_control = 0x3F6;
// ATA-6 7.1: command block register offsets.
constexpr uint16_t k_reg_data = 0, k_reg_error = 1, k_reg_count = 2, k_reg_lba0 = 3, k_reg_lba1 = 4,
                   k_reg_lba2 = 5, k_reg_device = 6, k_reg_status = 7, k_reg_command = 7;
// ATA-6 7.15: status bits.
constexpr uint8_t k_st_err = 0x01, k_st_drq = 0x08, k_st_df = 0x20, k_st_bsy = 0x80;
// ATA-6 7.10: Device register: bit 6 LBA, bit 4 DEV (the slave), bits 7 and
// 5 set for compatibility with older drives.
constexpr uint8_t k_dev_lba = 0xE0, k_dev_slave = 0x10;
// ATA-6 7.9: Device Control register: nIEN (bit 1) masks the interrupt.
constexpr uint8_t k_ctl_nien = 0x02;
// ATA-6 section 8: the commands (28-bit LBA forms).
constexpr uint8_t k_cmd_identify = 0xEC, k_cmd_read_sectors = 0x20, k_cmd_write_sectors = 0x30;
// ATA-6 8.15.8: IDENTIFY DEVICE words 60-61: the user-addressable sectors (LBA28).
constexpr unsigned k_id_lba28_sectors = 60;
constexpr uint32_t k_words_per_sector = fs::k_sector_size / 2;
// A READ/WRITE SECTORS count of 0 means 256 (ATA-6 8.27).
constexpr uint32_t k_max_request = 256;
constexpr uint64_t k_lba28_limit = uint64_t(1) << 28;

TOLL_COUNTER(g_ata_irqs, "cpu.irq.ata");

struct AtaDisk {
    fs::BlockDevice device;
    bool slave = false;
    uint32_t left = 0;     ///< sectors of the request in flight still to move
    uint8_t* at = nullptr; ///< where the next sector goes (or comes from)
};

AtaDisk g_disks[2];
AtaDisk* g_busy; // the disk whose request is in flight (one channel, one at a time)

uint8_t status()
{
    return inb(k_base + k_reg_status);
}

// Waits (spinning) until the drive is not busy; false after a bounded wait.
bool wait_not_busy()
{
    for (int i = 0; i < 1000000; ++i)
        if (!(status() & k_st_bsy))
            return true;
    return false;
}

void select(const AtaDisk& d, uint64_t lba)
{
    outb(k_base + k_reg_device,
         k_dev_lba | (d.slave ? k_dev_slave : 0) | static_cast<uint8_t>((lba >> 24) & 0x0F));
}

void start(fs::BlockDevice& device, fs::BlockRequest& r)
{
    auto& d = *static_cast<AtaDisk*>(device.driver);
    g_busy = &d;
    d.left = r.count;
    d.at = r.buffer;
    wait_not_busy();
    select(d, r.sector);
    outb(k_base + k_reg_count, static_cast<uint8_t>(r.count == k_max_request ? 0 : r.count));
    outb(k_base + k_reg_lba0, static_cast<uint8_t>(r.sector));
    outb(k_base + k_reg_lba1, static_cast<uint8_t>(r.sector >> 8));
    outb(k_base + k_reg_lba2, static_cast<uint8_t>(r.sector >> 16));
    outb(k_base + k_reg_command, r.write ? k_cmd_write_sectors : k_cmd_read_sectors);
    if (r.write) {
        // ATA-6 9.7 (PIO data-out): the first sector goes when DRQ is set,
        // without an interrupt; each later one after the interrupt.
        wait_not_busy();
        if (!(status() & k_st_drq)) {
            fs::block_complete(device, k_eio);
            return;
        }
        outsw(k_base + k_reg_data, d.at, k_words_per_sector);
        d.at += fs::k_sector_size;
    }
}

const fs::BlockDriverOps k_ata_ops = {start};

// IDENTIFY DEVICE on one drive, polled, with the interrupt masked: the
// sector count, or 0 if no ATA disk answers (none there, or ATAPI).
uint32_t identify(AtaDisk& d)
{
    select(d, 0);
    outb(k_base + k_reg_count, 0);
    outb(k_base + k_reg_lba0, 0);
    outb(k_base + k_reg_lba1, 0);
    outb(k_base + k_reg_lba2, 0);
    outb(k_base + k_reg_command, k_cmd_identify);
    if (status() == 0 || status() == 0xFF)
        return 0; // no drive
    if (!wait_not_busy())
        return 0;
    // ATA-6 9.12: an ATAPI device puts its signature in LBA mid/high.
    if (inb(k_base + k_reg_lba1) != 0 || inb(k_base + k_reg_lba2) != 0)
        return 0;
    for (int i = 0; i < 100000 && !(status() & (k_st_drq | k_st_err)); ++i) {
    }
    if (status() & k_st_err)
        return 0;
    uint16_t words[k_words_per_sector];
    insw(k_base + k_reg_data, words, k_words_per_sector);
    return words[k_id_lba28_sectors] | uint32_t(words[k_id_lba28_sectors + 1]) << 16;
}

} // namespace

void ata_interrupt()
{
    g_ata_irqs.add();
    uint8_t st = status(); // reading Status acknowledges the interrupt
    AtaDisk* d = g_busy;
    if (!d || !d->device.head)
        return;
    fs::BlockRequest& r = *d->device.head;
    if (st & (k_st_err | k_st_df)) {
        (void)inb(k_base + k_reg_error);
        g_busy = nullptr;
        fs::block_complete(d->device, k_eio);
        return;
    }
    if (!r.write) {
        insw(k_base + k_reg_data, d->at, k_words_per_sector);
        d->at += fs::k_sector_size;
    }
    if (--d->left == 0) {
        g_busy = nullptr;
        fs::block_complete(d->device, k_ok);
        return;
    }
    if (r.write) {
        outsw(k_base + k_reg_data, d->at, k_words_per_sector);
        d->at += fs::k_sector_size;
    }
}

} // namespace toll::i386

namespace toll::arch {

void disks_init()
{
    using namespace i386;
    static const char* const k_names[2] = {"ata0-master", "ata0-slave"};
    outb(k_control, k_ctl_nien);
    bool any = false;
    for (int i = 0; i < 2; ++i) {
        AtaDisk& d = g_disks[i];
        d.slave = i == 1;
        uint32_t sectors = identify(d);
        if (sectors == 0)
            continue;
        d.device.name = k_names[i];
        d.device.sectors = sectors < k_lba28_limit ? sectors : k_lba28_limit - 1;
        d.device.max_sectors = k_max_request;
        d.device.ops = &k_ata_ops;
        d.device.driver = &d;
        fs::block_register(&d.device);
        kprintf("%s: ATA disk, %u sectors (%u KB)\n", d.device.name, sectors, sectors / 2);
        any = true;
    }
    if (any) {
        (void)status(); // drop an interrupt the probe left pending
        outb(k_control, 0);
        pic_enable(k_irq_ata0);
    }
}

} // namespace toll::arch
