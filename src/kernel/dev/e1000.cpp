// The 82540EM driver: see e1000.h. Two rings of descriptors in DMA memory
// (8254x 3.2 receive, 3.3 transmit), each a circle the driver and the card
// chase around: the card owns the descriptors from head to tail, the driver
// the rest. Receive: the driver hands the card empty 2 KB buffers by moving
// the tail (RDT); the card fills one, sets its Descriptor Done bit, moves
// the head (RDH) and raises RXT0. Transmit: the driver fills a descriptor
// and moves TDT; the card sends it, sets Descriptor Done and raises TXDW.
#include "kernel/dev/e1000.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/kmem.h"
#include "kernel/arch/pci.h"
#include "kernel/dev/pci.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/spinlock.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::dev {
namespace {

// 8254x chapter 4 (PCI configuration space, Device ID): the 82540EM's
// vendor and device IDs, as QEMU's and Bochs' e1000 report them.
constexpr uint16_t k_vendor_intel = 0x8086, k_device_82540em = 0x100E;

// 8254x 13.1, Table 13-2: register offsets in the memory BAR.
constexpr uint32_t k_ctrl = 0x0000, k_status = 0x0008, k_eerd = 0x0014, k_icr = 0x00C0,
                   k_ims = 0x00D0, k_imc = 0x00D8, k_rctl = 0x0100, k_tctl = 0x0400,
                   k_tipg = 0x0410, k_rdbal = 0x2800, k_rdbah = 0x2804, k_rdlen = 0x2808,
                   k_rdh = 0x2810, k_rdt = 0x2818, k_rdtr = 0x2820, k_tdbal = 0x3800,
                   k_tdbah = 0x3804, k_tdlen = 0x3808, k_tdh = 0x3810, k_tdt = 0x3818,
                   k_mta = 0x5200, k_ral0 = 0x5400, k_rah0 = 0x5404;
// 8254x 13.7: statistics registers (cleared when read).
constexpr uint32_t k_mpc = 0x4010, k_gptc = 0x4080, k_rnbc = 0x40A0, k_ruc = 0x40A4, k_roc = 0x40AC;
// 8254x 13.4.1: CTRL: ASDE (5), SLU set link up (6), RST (26).
constexpr uint32_t k_ctrl_asde = 1u << 5, k_ctrl_slu = 1u << 6, k_ctrl_rst = 1u << 26;
// 8254x 13.4.1: CTRL bits a driver clears after reset: LRST (3), ILOS (7),
// VME (30), PHY_RST (31).
constexpr uint32_t k_ctrl_clear = 1u << 3 | 1u << 7 | 1u << 30 | 1u << 31;
// 8254x 13.4.2: STATUS.LU (1): the link is up.
constexpr uint32_t k_status_lu = 1u << 1;
// 8254x 13.4.4: EERD (82540EM): START (0), DONE (4), ADDR [15:8], DATA [31:16].
constexpr uint32_t k_eerd_start = 1u << 0, k_eerd_done = 1u << 4;
constexpr unsigned k_eerd_addr_shift = 8, k_eerd_data_shift = 16;
// 8254x 5.6.1, Table 5-2: EEPROM words 0-2 are the Ethernet address.
constexpr unsigned k_eeprom_mac_words = 3;
// 8254x 13.4.17-13.4.21: interrupt causes (ICR, IMS, IMC share them):
// TXDW (0), LSC (2), RXDMT0 (4), RXO (6), RXT0 (7).
constexpr uint32_t k_int_txdw = 1u << 0, k_int_lsc = 1u << 2, k_int_rxdmt0 = 1u << 4,
                   k_int_rxo = 1u << 6, k_int_rxt0 = 1u << 7;
constexpr uint32_t k_int_all = ~0u;
// 8254x 13.4.22: RCTL: EN (1), BAM accept broadcast (15), BSIZE [17:16] = 0
// for 2048-byte buffers (with BSEX clear), SECRC strip the CRC (26).
constexpr uint32_t k_rctl_en = 1u << 1, k_rctl_bam = 1u << 15, k_rctl_bsize_2048 = 0,
                   k_rctl_secrc = 1u << 26;
// 8254x 13.4.33: TCTL: EN (1), PSP pad short packets (3), CT [11:4], COLD
// [21:12]; 14.5 recommends CT = 0x0F and COLD = 0x40 (full duplex).
constexpr uint32_t k_tctl_en = 1u << 1, k_tctl_psp = 1u << 3, k_tctl_ct = 0x0Fu << 4,
                   k_tctl_cold = 0x40u << 12;
// 8254x 13.4.34, Table 13-77: TIPG for the 82540EM on copper: IPGT 10,
// IPGR1 8 ([19:10]), IPGR2 6 ([29:20]).
constexpr uint32_t k_tipg_copper = 10u | 8u << 10 | 6u << 20;
// 8254x 13.5.3: RAH.AV (31): the receive address is valid.
constexpr uint32_t k_rah_av = 1u << 31;
// 8254x 13.5.1: the multicast table array has 128 registers.
constexpr unsigned k_mta_entries = 128;
// 8254x 3.2.3.1, 3.2.3.2: receive descriptor status DD (0), EOP (1); any
// bit of errors is an error (CE, SE, SEQ, CXE, RXE; TCPE and IPE only with
// checksum offload, which is off).
constexpr uint8_t k_rx_dd = 1u << 0, k_rx_eop = 1u << 1;
// 8254x 3.3.3.1: legacy transmit descriptor command EOP (0), IFCS insert
// the FCS (1), RS report status (3); status DD (0).
constexpr uint8_t k_tx_eop = 1u << 0, k_tx_ifcs = 1u << 1, k_tx_rs = 1u << 3, k_tx_dd = 1u << 0;
// 8254x 3.2.2: with BSIZE 2048 every receive buffer is 2048 bytes; the
// transmit buffers are the same size, so that one page layout serves both.
constexpr size_t k_buffer_size = 2048;
// How long reset and the EEPROM may take, in register polls.
constexpr unsigned k_poll_limit = 100000;

// 8254x 3.2.3, Figure 3-1: a receive descriptor.
struct RxDesc {
    uint64_t addr;
    uint16_t length;
    uint16_t checksum;
    uint8_t status;
    uint8_t errors;
    uint16_t special;
};
// 8254x 3.3.3, Figure 3-10: a legacy transmit descriptor.
struct TxDesc {
    uint64_t addr;
    uint16_t length;
    uint8_t cso;
    uint8_t cmd;
    uint8_t status;
    uint8_t css;
    uint16_t special;
};
static_assert(sizeof(RxDesc) == 16 && sizeof(TxDesc) == 16);
// 8254x 13.4.27, 13.4.38: a ring's length is a multiple of 128 bytes.
static_assert(k_e1000_rx_descriptors * sizeof(RxDesc) % 128 == 0 &&
              k_e1000_tx_descriptors * sizeof(TxDesc) % 128 == 0);

// Both rings in one page (16-byte aligned bases, 8254x 3.2.6): the
// receive ring first.
struct Rings {
    RxDesc rx[k_e1000_rx_descriptors];
    TxDesc tx[k_e1000_tx_descriptors];
};
static_assert(sizeof(Rings) <= arch::k_page_size);

struct Card {
    net::NetInterface nif;
    volatile uint8_t* regs = nullptr;
    Rings* rings = nullptr;
    uint8_t* rx_buffer[k_e1000_rx_descriptors] = {};
    uint8_t* tx_buffer[k_e1000_tx_descriptors] = {};
    unsigned rx_next = 0;     // the next descriptor the card will fill
    unsigned tx_tail = 0;     // the next descriptor the driver fills (TDT)
    unsigned tx_clean = 0;    // the oldest descriptor not yet seen done
    bool rx_in_split = false; // dropping the rest of a frame that spans buffers
    bool present = false;
    E1000Stats stats;
    FrameTap tap = nullptr;
    Spinlock tx_lock{"e1000.tx"};
    Spinlock rx_lock{"e1000.rx"};
};

Card g_cards[k_e1000_max_cards];
unsigned g_card_count;

TOLL_COUNTER(g_c_tx_frames, "net.e1000.tx_frames");
TOLL_COUNTER(g_c_tx_ring_full, "net.e1000.tx_ring_full");
TOLL_COUNTER(g_c_rx_frames, "net.e1000.rx_frames");
TOLL_COUNTER(g_c_rx_dropped, "net.e1000.rx_dropped");
TOLL_COUNTER(g_c_interrupts, "net.e1000.interrupts");

uint32_t rd(const Card& c, uint32_t reg)
{
    return *reinterpret_cast<volatile uint32_t*>(c.regs + reg);
}

void wr(const Card& c, uint32_t reg, uint32_t value)
{
    *reinterpret_cast<volatile uint32_t*>(c.regs + reg) = value;
}

uint64_t phys(const void* p)
{
    return arch::virt_to_phys(p);
}

// Descriptors the card has finished sending: their buffers are free again.
void tx_reclaim(Card& c)
{
    while (c.tx_clean != c.tx_tail) {
        TxDesc& d = c.rings->tx[c.tx_clean];
        if (!(d.status & k_tx_dd))
            break;
        arch::dma_read_barrier();
        d.status = 0;
        c.tx_clean = (c.tx_clean + 1) % k_e1000_tx_descriptors;
    }
}

bool transmit(net::NetInterface& nif, const uint8_t* frame, size_t length)
{
    Card& c = *static_cast<Card*>(nif.driver);
    if (length < net::k_ethernet_header || length > net::k_max_frame) {
        SpinGuard guard(c.tx_lock);
        ++c.stats.tx_bad_length;
        ++nif.tx_dropped;
        return false;
    }
    SpinGuard guard(c.tx_lock);
    tx_reclaim(c);
    unsigned next = (c.tx_tail + 1) % k_e1000_tx_descriptors;
    if (next == c.tx_clean) {
        ++c.stats.tx_ring_full;
        ++nif.tx_dropped;
        g_c_tx_ring_full.add();
        return false;
    }
    memcpy(c.tx_buffer[c.tx_tail], frame, length);
    TxDesc& d = c.rings->tx[c.tx_tail];
    d.addr = phys(c.tx_buffer[c.tx_tail]);
    d.length = static_cast<uint16_t>(length);
    d.cso = d.css = 0;
    d.special = 0;
    d.status = 0;
    d.cmd = k_tx_eop | k_tx_ifcs | k_tx_rs;
    arch::dma_write_barrier();
    c.tx_tail = next;
    wr(c, k_tdt, c.tx_tail);
    ++c.stats.tx_frames;
    ++nif.tx_frames;
    g_c_tx_frames.add();
    return true;
}

void rx_drop(Card& c, uint64_t& reason)
{
    ++reason;
    ++c.stats.rx_dropped;
    ++c.nif.rx_dropped;
    g_c_rx_dropped.add();
}

// Takes every filled receive descriptor, passes good frames up and gives
// the buffers back. A frame is dropped, and counted, when the card flagged
// an error, when it is shorter than an Ethernet header or longer than the
// largest frame, or when it spans buffers (it cannot, with long packets
// off: a card that says so is not believed).
void rx_drain(Card& c)
{
    SpinGuard guard(c.rx_lock);
    for (unsigned budget = 0; budget < k_e1000_rx_descriptors; ++budget) {
        RxDesc& d = c.rings->rx[c.rx_next];
        if (!(d.status & k_rx_dd))
            break;
        arch::dma_read_barrier();
        size_t length = d.length;
        bool end = d.status & k_rx_eop;
        if (c.rx_in_split) {
            rx_drop(c, c.stats.rx_bad_length);
            c.rx_in_split = !end;
        } else if (!end) {
            rx_drop(c, c.stats.rx_bad_length);
            c.rx_in_split = true;
        } else if (d.errors) {
            rx_drop(c, c.stats.rx_errors);
        } else if (length < net::k_ethernet_header || length > net::k_max_frame) {
            rx_drop(c, c.stats.rx_bad_length);
        } else {
            ++c.stats.rx_frames;
            ++c.nif.rx_frames;
            g_c_rx_frames.add();
            const uint8_t* frame = c.rx_buffer[c.rx_next];
            if (!(c.tap && c.tap(frame, length)))
                net::net_receive(c.nif, frame, length);
        }
        // Back to the card: clear the status, then move the tail onto it
        // (the tail names the first descriptor the card may not use, so
        // the one just freed becomes the card's last).
        d.status = 0;
        d.errors = 0;
        d.length = 0;
        arch::dma_write_barrier();
        wr(c, k_rdt, c.rx_next);
        c.rx_next = (c.rx_next + 1) % k_e1000_rx_descriptors;
    }
}

void interrupt(void* arg)
{
    Card& c = *static_cast<Card*>(arg);
    uint64_t start = arch::cycle_counter();
    // 8254x 13.4.17: reading ICR clears it (and deasserts INTx); 0 means
    // the interrupt was another device's on the shared line.
    uint32_t cause = rd(c, k_icr);
    if (cause == 0)
        return;
    ++c.stats.interrupts;
    g_c_interrupts.add();
    if (cause & k_int_lsc)
        ++c.stats.link_changes;
    if (cause & k_int_rxo)
        ++c.stats.rx_overruns;
    if (cause & (k_int_rxt0 | k_int_rxo | k_int_rxdmt0))
        rx_drain(c);
    if (cause & k_int_txdw) {
        SpinGuard guard(c.tx_lock);
        tx_reclaim(c);
    }
    c.stats.handler_cycles += arch::cycle_counter() - start;
}

// 8254x 5.3.1 and 13.4.4: one EEPROM word through EERD; false if DONE
// never comes.
bool eeprom_read(const Card& c, unsigned word, uint16_t& value)
{
    wr(c, k_eerd, k_eerd_start | word << k_eerd_addr_shift);
    for (unsigned i = 0; i < k_poll_limit; ++i) {
        uint32_t v = rd(c, k_eerd);
        if (v & k_eerd_done) {
            value = static_cast<uint16_t>(v >> k_eerd_data_shift);
            return true;
        }
    }
    return false;
}

// The Ethernet address: from the EEPROM (8254x 5.6.1), or else what the
// card loaded into RAL0/RAH0 at reset (8254x 13.5.2, 13.5.3).
void read_mac(Card& c)
{
    uint16_t words[k_eeprom_mac_words];
    bool ok = true;
    for (unsigned i = 0; i < k_eeprom_mac_words && ok; ++i)
        ok = eeprom_read(c, i, words[i]);
    uint8_t* mac = c.nif.mac.bytes;
    if (ok) {
        for (unsigned i = 0; i < k_eeprom_mac_words; ++i)
            mac[2 * i] = static_cast<uint8_t>(words[i]),
                    mac[2 * i + 1] = static_cast<uint8_t>(words[i] >> 8);
    } else {
        uint32_t low = rd(c, k_ral0), high = rd(c, k_rah0);
        for (unsigned i = 0; i < 4; ++i)
            mac[i] = static_cast<uint8_t>(low >> (8 * i));
        mac[4] = static_cast<uint8_t>(high), mac[5] = static_cast<uint8_t>(high >> 8);
    }
}

// Buffers for one ring, k_buffer_size each, carved from whole pages (each
// physically contiguous, so a buffer never crosses into another frame).
bool alloc_buffers(uint8_t** buffers, unsigned count)
{
    constexpr unsigned k_per_page = arch::k_page_size / k_buffer_size;
    for (unsigned i = 0; i < count; i += k_per_page) {
        auto* page = static_cast<uint8_t*>(vm::alloc_page());
        if (!page)
            return false;
        for (unsigned j = 0; j < k_per_page && i + j < count; ++j)
            buffers[i + j] = page + j * k_buffer_size;
    }
    return true;
}

bool bring_up(Card& c, const PciFunction& fn)
{
    pci_enable(fn);
    // 8254x 14.3: mask every interrupt, reset, mask again (reset unmasks).
    wr(c, k_imc, k_int_all);
    wr(c, k_ctrl, rd(c, k_ctrl) | k_ctrl_rst);
    unsigned polls = 0;
    while ((rd(c, k_ctrl) & k_ctrl_rst) && polls < k_poll_limit)
        ++polls;
    if (polls == k_poll_limit) {
        kprintf("e1000: the card never left reset\n");
        return false;
    }
    wr(c, k_imc, k_int_all);
    (void)rd(c, k_icr);
    // 8254x 14.4: set link up, let the MAC follow the PHY's speed.
    wr(c, k_ctrl, (rd(c, k_ctrl) & ~k_ctrl_clear) | k_ctrl_slu | k_ctrl_asde);
    read_mac(c);
    const uint8_t* m = c.nif.mac.bytes;
    wr(c, k_ral0,
       uint32_t(m[0]) | uint32_t(m[1]) << 8 | uint32_t(m[2]) << 16 | uint32_t(m[3]) << 24);
    wr(c, k_rah0, uint32_t(m[4]) | uint32_t(m[5]) << 8 | k_rah_av);
    for (unsigned i = 0; i < k_mta_entries; ++i)
        wr(c, k_mta + 4 * i, 0);

    c.rings = static_cast<Rings*>(vm::alloc_page());
    if (!c.rings || !alloc_buffers(c.rx_buffer, k_e1000_rx_descriptors) ||
        !alloc_buffers(c.tx_buffer, k_e1000_tx_descriptors)) {
        kprintf("e1000: no memory for the rings\n");
        return false;
    }
    // 8254x 14.4: the receive ring, every descriptor the card's but one.
    for (unsigned i = 0; i < k_e1000_rx_descriptors; ++i)
        c.rings->rx[i] = {phys(c.rx_buffer[i]), 0, 0, 0, 0, 0};
    uint64_t rx = phys(c.rings->rx), tx = phys(c.rings->tx);
    wr(c, k_rdbal, static_cast<uint32_t>(rx));
    wr(c, k_rdbah, static_cast<uint32_t>(rx >> 32));
    wr(c, k_rdlen, sizeof c.rings->rx);
    wr(c, k_rdh, 0);
    wr(c, k_rdt, k_e1000_rx_descriptors - 1);
    wr(c, k_rdtr, 0); // an interrupt per frame: no receive delay timer
    arch::dma_write_barrier();
    wr(c, k_rctl, k_rctl_en | k_rctl_bam | k_rctl_bsize_2048 | k_rctl_secrc);
    // 8254x 14.5: the transmit ring, empty.
    wr(c, k_tdbal, static_cast<uint32_t>(tx));
    wr(c, k_tdbah, static_cast<uint32_t>(tx >> 32));
    wr(c, k_tdlen, sizeof c.rings->tx);
    wr(c, k_tdh, 0);
    wr(c, k_tdt, 0);
    wr(c, k_tipg, k_tipg_copper);
    wr(c, k_tctl, k_tctl_en | k_tctl_psp | k_tctl_ct | k_tctl_cold);

    int irq = arch::pci_attach_interrupt(fn.address, fn.pin, fn.line, interrupt, &c);
    if (irq < 0) {
        kprintf("e1000: INT%c cannot be routed (line %u); the card is not used\n",
                fn.pin ? 'A' + fn.pin - 1 : '?', fn.line);
        wr(c, k_rctl, 0);
        wr(c, k_tctl, 0);
        return false;
    }
    wr(c, k_ims, k_int_rxt0 | k_int_rxo | k_int_rxdmt0 | k_int_txdw | k_int_lsc);
    c.nif.transmit = transmit;
    c.nif.driver = &c;
    kprintf("%s: e1000 (82540EM) at 0x%llx, irq %d, mac %02x:%02x:%02x:%02x:%02x:%02x, link "
            "%s\n",
            c.nif.name, (unsigned long long)fn.bar[0], irq, m[0], m[1], m[2], m[3], m[4], m[5],
            (rd(c, k_status) & k_status_lu) ? "up" : "down");
    return true;
}

} // namespace

bool e1000_init()
{
    static const char* const k_names[k_e1000_max_cards] = {"eth0", "eth1"};
    const PciFunction* fns = pci_functions();
    for (size_t i = 0; i < pci_function_count() && g_card_count < k_e1000_max_cards; ++i) {
        const PciFunction& fn = fns[i];
        if (fn.vendor != k_vendor_intel || fn.device != k_device_82540em)
            continue;
        // 8254x 13.1: the registers are 128 KB of memory space behind BAR0.
        if (!fn.bar[0]) {
            kprintf("e1000: BAR0 has no address; the card is not used\n");
            continue;
        }
        Card& c = g_cards[g_card_count];
        c.regs = static_cast<volatile uint8_t*>(arch::map_device_memory(fn.bar[0], fn.bar_size[0]));
        if (!c.regs) {
            kprintf("e1000: cannot map BAR0 at 0x%llx\n", (unsigned long long)fn.bar[0]);
            continue;
        }
        c.nif.name = k_names[g_card_count];
        if (!bring_up(c, fn))
            continue;
        c.present = true;
        ++g_card_count;
        net::net_register(c.nif);
    }
    return g_card_count > 0;
}

net::NetInterface* e1000_interface(unsigned index)
{
    return index < g_card_count ? &g_cards[index].nif : nullptr;
}

E1000Stats e1000_stats(unsigned index)
{
    if (index >= g_card_count)
        return {};
    Card& c = g_cards[index];
    SpinGuard rx(c.rx_lock);
    SpinGuard tx(c.tx_lock);
    return c.stats;
}

E1000HardwareStats e1000_hardware_stats(unsigned index)
{
    E1000HardwareStats s;
    if (index >= g_card_count)
        return s;
    const Card& c = g_cards[index];
    s.missed = rd(c, k_mpc);
    s.no_buffers = rd(c, k_rnbc);
    s.oversize = rd(c, k_roc);
    s.undersize = rd(c, k_ruc);
    s.tx_good = rd(c, k_gptc);
    return s;
}

void e1000_set_tap(unsigned index, FrameTap tap)
{
    if (index >= g_card_count)
        return;
    Card& c = g_cards[index];
    SpinGuard guard(c.rx_lock);
    c.tap = tap;
}

void e1000_transmitter_enable(unsigned index, bool on)
{
    if (index >= g_card_count)
        return;
    Card& c = g_cards[index];
    SpinGuard guard(c.tx_lock);
    uint32_t tctl = rd(c, k_tctl);
    wr(c, k_tctl, on ? tctl | k_tctl_en : tctl & ~k_tctl_en);
}

} // namespace toll::dev
