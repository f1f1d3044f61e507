// The PCI and e1000 tests. dev.* runs in every boot: enumeration must find
// the host bridge. device.* needs the card (tools/run --net user): it runs
// only when the glob names it (kern/ktest.cpp), in the network boots of
// tests/system/net.cmake. QEMU's user network answers ARP for its gateway
// 10.0.2.2 itself, so an ARP exchange proves both rings and the interrupt
// without any network stack: the test watches frames through the driver's
// receive hook. With net.frames=1 a second card (eth1) is wired to the
// host program tools/netpeer, which sends it hostile frames on request.
#include "kernel/arch/cpu.h"
#include "kernel/dev/e1000.h"
#include "kernel/dev/pci.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/param.h"
#include "kernel/proc/thread.h"
#include "lib/string.h"

namespace toll::dev {
namespace {

TOLL_PARAM(g_param_net_echo, "net.echo",
           "PORT: tools/netpeer's UDP echo server listens on the host's 127.0.0.1:PORT "
           "(device.e1000.udp_echo)");
TOLL_PARAM(g_param_net_frames, "net.frames",
           "1: eth1 is wired to tools/netpeer's frame socket (device.e1000.hostile_frames)");

// IEEE 802.3 / RFC 826: EtherTypes, and ARP's fields for Ethernet and IPv4.
constexpr uint16_t k_ethertype_arp = 0x0806;
// IEEE 802 "Local Experimental EtherType 1": what the hostile-frames test
// and tools/netpeer exchange.
constexpr uint16_t k_ethertype_experiment = 0x88B5;
// tools/netpeer's hostile sequence: its counts and sizes (see its --help).
constexpr unsigned k_peer_oversize = 3, k_peer_long = 2, k_peer_runts = 4, k_peer_flood = 400;
// IEEE 802.3: the shortest frame without its FCS; the card pads runts to it.
constexpr size_t k_min_frame = 60;
// RFC 791 / RFC 768: IPv4 and UDP, as far as a hand-made datagram needs.
constexpr uint16_t k_ethertype_ipv4 = 0x0800;
constexpr uint8_t k_ipv4_version_ihl = 0x45, k_ipv4_ttl = 64, k_ip_proto_udp = 17;
constexpr uint16_t k_ipv4_dont_fragment = 0x4000;
constexpr size_t k_ipv4_header = 20, k_udp_header = 8;
// The largest UDP payload in one 1500-byte IPv4 packet.
constexpr size_t k_udp_max_payload = net::k_ethernet_mtu - k_ipv4_header - k_udp_header;
// The guest's source port for the echo test (any unprivileged one).
constexpr uint16_t k_echo_source_port = 40000;
constexpr uint16_t k_arp_hw_ethernet = 1, k_arp_proto_ipv4 = 0x0800;
constexpr uint16_t k_arp_request = 1, k_arp_reply = 2;
constexpr size_t k_arp_frame = 14 + 28;
// QEMU's user network (slirp): the guest is 10.0.2.15, the gateway (the
// host, for UDP) 10.0.2.2, whose Ethernet address is 52:55:0a:00:02:02.
constexpr uint8_t k_guest_ip[4] = {10, 0, 2, 15}, k_gateway_ip[4] = {10, 0, 2, 2};
constexpr uint8_t k_gateway_mac[6] = {0x52, 0x55, 0x0A, 0x00, 0x02, 0x02};
// How long a reply may take, in seconds of the scheduler's clock.
constexpr unsigned k_wait_seconds = 5;

void put16(uint8_t* at, uint16_t v)
{
    at[0] = static_cast<uint8_t>(v >> 8), at[1] = static_cast<uint8_t>(v);
}

uint16_t get16(const uint8_t* at)
{
    return static_cast<uint16_t>(at[0] << 8 | at[1]);
}

// An ARP request from @p mac (10.0.2.15) for 10.0.2.2, broadcast (RFC 826).
void arp_request(uint8_t* f, const net::MacAddress& mac)
{
    memset(f, 0xFF, 6);
    memcpy(f + 6, mac.bytes, 6);
    put16(f + 12, k_ethertype_arp);
    uint8_t* a = f + 14;
    put16(a, k_arp_hw_ethernet);
    put16(a + 2, k_arp_proto_ipv4);
    a[4] = 6, a[5] = 4;
    put16(a + 6, k_arp_request);
    memcpy(a + 8, mac.bytes, 6);
    memcpy(a + 14, k_guest_ip, 4);
    memset(a + 18, 0, 6);
    memcpy(a + 24, k_gateway_ip, 4);
}

// What the receive hook saw: ARP replies from the gateway to us.
volatile unsigned g_arp_replies;
uint8_t g_our_mac[6];

bool arp_tap(const uint8_t* f, size_t length)
{
    if (length < k_arp_frame || get16(f + 12) != k_ethertype_arp)
        return false;
    const uint8_t* a = f + 14;
    if (get16(a + 6) == k_arp_reply && memcmp(a + 8, k_gateway_mac, 6) == 0 &&
        memcmp(a + 14, k_gateway_ip, 4) == 0 && memcmp(a + 18, g_our_mac, 6) == 0 &&
        memcmp(a + 24, k_guest_ip, 4) == 0 && memcmp(f, g_our_mac, 6) == 0)
        g_arp_replies = g_arp_replies + 1;
    return true;
}

// What wait_for sleeps on, a tick at a time.
const int g_wait_channel = 0;

// Waits until @p done() or k_wait_seconds pass; true if done.
template <typename Done>
bool wait_for(Done done)
{
    uint64_t deadline = proc::ticks() + uint64_t(k_wait_seconds) * arch::clock_hz();
    while (!done() && proc::ticks() < deadline)
        proc::sleep_on(&g_wait_channel, proc::ticks() + 1);
    return done();
}

// RFC 1071: the Internet checksum of @p length bytes.
uint16_t internet_checksum(const uint8_t* p, size_t length)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < length; i += 2)
        sum += get16(p + i);
    if (length & 1)
        sum += uint32_t(p[length - 1]) << 8;
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

// A UDP datagram from 10.0.2.15:k_echo_source_port to 10.0.2.2:@p port in
// an Ethernet frame for the gateway; returns the frame's length. The UDP
// checksum is 0, "none" (RFC 768).
size_t udp_frame(uint8_t* f, const net::MacAddress& mac, uint16_t port, const uint8_t* payload,
                 size_t length, uint16_t id)
{
    memcpy(f, k_gateway_mac, 6);
    memcpy(f + 6, mac.bytes, 6);
    put16(f + 12, k_ethertype_ipv4);
    uint8_t* ip = f + 14;
    memset(ip, 0, k_ipv4_header);
    ip[0] = k_ipv4_version_ihl;
    put16(ip + 2, static_cast<uint16_t>(k_ipv4_header + k_udp_header + length));
    put16(ip + 4, id);
    put16(ip + 6, k_ipv4_dont_fragment);
    ip[8] = k_ipv4_ttl;
    ip[9] = k_ip_proto_udp;
    memcpy(ip + 12, k_guest_ip, 4);
    memcpy(ip + 16, k_gateway_ip, 4);
    put16(ip + 10, internet_checksum(ip, k_ipv4_header));
    uint8_t* udp = ip + k_ipv4_header;
    put16(udp, k_echo_source_port);
    put16(udp + 2, port);
    put16(udp + 4, static_cast<uint16_t>(k_udp_header + length));
    put16(udp + 6, 0);
    memcpy(udp + k_udp_header, payload, length);
    return 14 + k_ipv4_header + k_udp_header + length;
}

// The echo test's hook: the payload of a UDP datagram from 10.0.2.2:port
// to 10.0.2.15:k_echo_source_port, with a valid IPv4 header checksum.
uint16_t g_echo_port;
uint8_t g_echo_payload[k_udp_max_payload];
volatile size_t g_echo_length;
volatile bool g_echo_seen;

bool echo_tap(const uint8_t* f, size_t length)
{
    if (length < 14 + k_ipv4_header + k_udp_header || get16(f + 12) != k_ethertype_ipv4)
        return false;
    const uint8_t* ip = f + 14;
    size_t ihl = (ip[0] & 0xF) * 4u;
    if ((ip[0] >> 4) != 4 || ihl < k_ipv4_header || ip[9] != k_ip_proto_udp ||
        14 + ihl + k_udp_header > length || internet_checksum(ip, ihl) != 0 ||
        memcmp(ip + 12, k_gateway_ip, 4) != 0 || memcmp(ip + 16, k_guest_ip, 4) != 0)
        return false;
    const uint8_t* udp = ip + ihl;
    size_t udp_length = get16(udp + 4);
    if (get16(udp) != g_echo_port || get16(udp + 2) != k_echo_source_port ||
        udp_length < k_udp_header || 14 + ihl + udp_length > length ||
        udp_length - k_udp_header > sizeof g_echo_payload)
        return false;
    memcpy(g_echo_payload, udp + k_udp_header, udp_length - k_udp_header);
    g_echo_length = udp_length - k_udp_header;
    g_echo_seen = true;
    return true;
}

// What the hostile-frames test's hook saw on eth1.
struct Hostile {
    unsigned flood = 0, runts = 0, too_long = 0, out_of_order = 0, ends = 0;
    uint32_t next_seq = 0;
};
Hostile g_hostile;
volatile bool g_hostile_end;

bool hostile_tap(const uint8_t* f, size_t length)
{
    Hostile& h = g_hostile;
    static const uint8_t k_zero[6] = {};
    if (length > net::k_max_frame)
        ++h.too_long;
    if (length == k_min_frame && memcmp(f + 6, k_zero, 6) == 0) {
        ++h.runts; // six bytes of address and the card's padding
        return true;
    }
    if (length < 14 || get16(f + 12) != k_ethertype_experiment)
        return true;
    const uint8_t* p = f + 14;
    if (length >= 14 + 9 && memcmp(p, "flood", 5) == 0) {
        uint32_t seq = uint32_t(p[5]) << 24 | uint32_t(p[6]) << 16 | uint32_t(p[7]) << 8 | p[8];
        if (seq < h.next_seq)
            ++h.out_of_order;
        h.next_seq = seq + 1;
        ++h.flood;
    } else if (length >= 14 + 3 && memcmp(p, "end", 3) == 0) {
        ++h.ends;
        g_hostile_end = true;
    } else {
        ++h.too_long; // the 1518-byte frames: the driver must never pass them up
    }
    return true;
}

} // namespace

KTEST("dev.pci.host_bridge")
{
    // PCI 3.0, Appendix D: class 06 subclass 00 is a host bridge; both
    // machines put theirs at 00:00.0 (i440FX, QEMU's gpex).
    const PciFunction* fns = pci_functions();
    size_t n = pci_function_count();
    KEXPECT(n >= 1);
    if (n == 0)
        return;
    KEXPECT(fns[0].address.bus == 0 && fns[0].address.device == 0 && fns[0].address.function == 0);
    KEXPECT_EQ(fns[0].class_code, 0x06u);
    KEXPECT_EQ(fns[0].subclass, 0x00u);
    for (size_t i = 0; i < n; ++i) {
        KEXPECT(fns[i].vendor != k_pci_no_vendor);
        // A memory BAR the kernel recorded has a power-of-two size and is
        // aligned to it (PCI 3.0, 6.2.5.1), whoever assigned it.
        for (unsigned b = 0; b < k_pci_bars; ++b)
            if (fns[i].bar[b]) {
                uint64_t size = fns[i].bar_size[b];
                KEXPECT(size != 0 && (size & (size - 1)) == 0);
                KEXPECT_EQ(fns[i].bar[b] & (size - 1), 0u);
            }
    }
}

KTEST("device.e1000.arp_reply")
{
    net::NetInterface* nif = e1000_interface(0);
    KEXPECT(nif != nullptr);
    if (!nif)
        return;
    memcpy(g_our_mac, nif->mac.bytes, 6);
    // QEMU's default address for the first card (52:54:00:12:34:56): the
    // MAC came from the EEPROM, not from nowhere.
    KEXPECT(g_our_mac[0] == 0x52 && g_our_mac[1] == 0x54 && g_our_mac[2] == 0x00);
    E1000Stats before = e1000_stats(0);
    g_arp_replies = 0;
    e1000_set_tap(0, arp_tap);
    uint8_t frame[k_arp_frame];
    arp_request(frame, nif->mac);
    KEXPECT(nif->transmit(*nif, frame, sizeof frame));
    bool replied = wait_for([] { return g_arp_replies >= 1; });
    e1000_set_tap(0, nullptr);
    KEXPECT(replied);
    E1000Stats after = e1000_stats(0);
    KEXPECT_EQ(after.tx_frames - before.tx_frames, 1u);
    KEXPECT(after.rx_frames > before.rx_frames);
    KEXPECT(after.interrupts > before.interrupts);
    KEXPECT_EQ(after.rx_dropped, before.rx_dropped);
}

KTEST("device.e1000.refuses_bad_lengths")
{
    net::NetInterface* nif = e1000_interface(0);
    KEXPECT(nif != nullptr);
    if (!nif)
        return;
    static uint8_t frame[net::k_max_frame + 1];
    memset(frame, 0, sizeof frame);
    E1000Stats before = e1000_stats(0);
    KEXPECT(!nif->transmit(*nif, frame, net::k_ethernet_header - 1));
    KEXPECT(!nif->transmit(*nif, frame, net::k_max_frame + 1));
    KEXPECT(!nif->transmit(*nif, frame, 0));
    E1000Stats after = e1000_stats(0);
    KEXPECT_EQ(after.tx_bad_length - before.tx_bad_length, 3u);
    KEXPECT_EQ(after.tx_frames, before.tx_frames);
}

KTEST("device.e1000.transmit_ring_full")
{
    // With the transmitter stopped nothing leaves the ring: it takes one
    // frame fewer than it has descriptors, then refuses and counts. Started
    // again, the card sends them all (its good-packets counter says so) and
    // the interrupt gives every descriptor back.
    net::NetInterface* nif = e1000_interface(0);
    KEXPECT(nif != nullptr);
    if (!nif)
        return;
    (void)e1000_hardware_stats(0); // clear the statistics registers
    E1000Stats before = e1000_stats(0);
    uint8_t frame[k_arp_frame];
    arp_request(frame, nif->mac);
    e1000_transmitter_enable(0, false);
    unsigned accepted = 0, refused = 0;
    for (unsigned i = 0; i < k_e1000_tx_descriptors + 3; ++i)
        (nif->transmit(*nif, frame, sizeof frame) ? accepted : refused) += 1;
    E1000HardwareStats stopped = e1000_hardware_stats(0);
    e1000_transmitter_enable(0, true);
    KEXPECT_EQ(accepted, k_e1000_tx_descriptors - 1);
    KEXPECT_EQ(refused, 4u);
    KEXPECT_EQ(stopped.tx_good, 0u);
    E1000Stats full = e1000_stats(0);
    KEXPECT_EQ(full.tx_ring_full - before.tx_ring_full, 4u);
    uint32_t sent = 0;
    wait_for([&sent] {
        sent += e1000_hardware_stats(0).tx_good;
        return sent >= k_e1000_tx_descriptors - 1;
    });
    KEXPECT_EQ(sent, k_e1000_tx_descriptors - 1);
    // The ring is empty again: a whole ring's worth fits once more, after
    // the transmit interrupts (or the next transmit) reclaimed it.
    e1000_transmitter_enable(0, false);
    unsigned again = 0;
    for (unsigned i = 0; i < k_e1000_tx_descriptors - 1; ++i)
        again += nif->transmit(*nif, frame, sizeof frame);
    e1000_transmitter_enable(0, true);
    KEXPECT_EQ(again, k_e1000_tx_descriptors - 1);
}

KTEST("device.e1000.hostile_frames")
{
    // tools/netpeer's answer to "hostile" on eth1: frames too long for the
    // card (it drops and counts them: ROC), too long for the driver (it
    // drops and counts them), runts (the card pads them to 60 bytes; QEMU
    // 7.2 does not count them in RUC, so that is reported, not checked),
    // and a flood larger than the ring. Nothing may panic, every drop is
    // counted, and what the flood delivers arrives in order, then the end.
    if (!param_present("net.frames")) {
        ktest::skip("needs eth1 wired to tools/netpeer: tools/netpeer --frames auto -- "
                    "tools/run --net-frames {frames} --cmdline 'test=device.* net.frames=1'");
        return;
    }
    net::NetInterface* nif = e1000_interface(1);
    KEXPECT(nif != nullptr);
    if (!nif)
        return;
    (void)e1000_hardware_stats(1); // clear the statistics registers
    E1000Stats before = e1000_stats(1);
    g_hostile = {};
    g_hostile_end = false;
    e1000_set_tap(1, hostile_tap);
    uint8_t frame[k_min_frame] = {};
    memset(frame, 0xFF, 6);
    memcpy(frame + 6, nif->mac.bytes, 6);
    put16(frame + 12, k_ethertype_experiment);
    static const uint8_t k_hostile[] = {'h', 'o', 's', 't', 'i', 'l', 'e'};
    memcpy(frame + 14, k_hostile, sizeof k_hostile);
    KEXPECT(nif->transmit(*nif, frame, sizeof frame));
    bool ended = wait_for([] { return g_hostile_end; });
    e1000_set_tap(1, nullptr);
    static const uint8_t k_done[] = {'d', 'o', 'n', 'e'};
    memcpy(frame + 14, k_done, sizeof k_done);
    memset(frame + 14 + sizeof k_done, 0, sizeof frame - 14 - sizeof k_done);
    KEXPECT(nif->transmit(*nif, frame, sizeof frame)); // the peer stops sending the end
    E1000Stats after = e1000_stats(1);
    E1000HardwareStats hw = e1000_hardware_stats(1);
    Hostile h = g_hostile;
    KEXPECT(ended);
    KEXPECT_EQ(hw.oversize, k_peer_oversize);
    KEXPECT_EQ(h.runts, k_peer_runts);
    KEXPECT_EQ(after.rx_bad_length - before.rx_bad_length, k_peer_long);
    KEXPECT_EQ(after.rx_dropped - before.rx_dropped,
               (after.rx_bad_length - before.rx_bad_length) + (after.rx_errors - before.rx_errors));
    KEXPECT_EQ(h.too_long, 0u);
    KEXPECT_EQ(h.out_of_order, 0u);
    KEXPECT(h.flood > 0 && h.flood <= k_peer_flood);
    // Frames passed up: the runts, the flood that arrived and the end
    // markers (the peer sends several; those after the wait may be counted
    // later, so at least these).
    KEXPECT(after.rx_frames - before.rx_frames >= uint64_t(h.runts) + h.flood + h.ends);
    ktest::metric("net.e1000.hostile.flood_received", h.flood, "frames");
    ktest::metric("net.e1000.hostile.missed", hw.missed, "frames");
    ktest::metric("net.e1000.hostile.undersize", hw.undersize, "frames");
    ktest::metric("net.e1000.hostile.no_buffers", hw.no_buffers, "events");
    ktest::metric("net.e1000.hostile.overruns", after.rx_overruns - before.rx_overruns,
                  "interrupts");
}

KTEST("device.e1000.cost")
{
    // What the driver costs per frame, measured in cycles, which are
    // instructions under tools/run --deterministic (book/measurements.toml):
    // transmit() from the call to the tail write, and the interrupt handler
    // per frame received. One ARP request at a time, each answered by
    // QEMU's gateway, so that an interrupt takes one frame.
    constexpr unsigned k_frames = 64;
    net::NetInterface* nif = e1000_interface(0);
    KEXPECT(nif != nullptr);
    if (!nif)
        return;
    memcpy(g_our_mac, nif->mac.bytes, 6);
    uint8_t frame[k_arp_frame];
    arp_request(frame, nif->mac);
    g_arp_replies = 0;
    e1000_set_tap(0, arp_tap);
    E1000Stats before = e1000_stats(0);
    uint64_t tx_cycles = 0;
    unsigned sent = 0;
    for (unsigned i = 0; i < k_frames; ++i) {
        bool ok;
        {
            arch::InterruptsOff off;
            uint64_t start = arch::cycle_counter();
            ok = nif->transmit(*nif, frame, sizeof frame);
            tx_cycles += arch::cycle_counter() - start;
        }
        sent += ok;
        wait_for([i] { return g_arp_replies >= i + 1; });
    }
    e1000_set_tap(0, nullptr);
    E1000Stats after = e1000_stats(0);
    KEXPECT_EQ(sent, k_frames);
    KEXPECT_EQ(g_arp_replies, k_frames);
    uint64_t received = after.rx_frames - before.rx_frames;
    uint64_t interrupts = after.interrupts - before.interrupts;
    KEXPECT(received >= k_frames && interrupts > 0 && tx_cycles > 0);
    if (received == 0 || sent == 0)
        return;
    ktest::metric("net.e1000.tx_cycles_per_frame", tx_cycles / sent, "cycles");
    ktest::metric("net.e1000.irq_cycles_per_rx_frame",
                  (after.handler_cycles - before.handler_cycles) / received, "cycles");
    ktest::metric("net.e1000.interrupts_per_1000_frames",
                  (interrupts * 1000 + (sent + received) / 2) / (sent + received), "per1000");
}

KTEST("device.e1000.udp_echo")
{
    // UDP through the card to tools/netpeer's echo server on the host:
    // QEMU's user network takes a datagram for 10.0.2.2:PORT to the host's
    // 127.0.0.1:PORT and brings the answer back. Hand-made frames, watched
    // through the receive hook: the driver's test, before any socket. The
    // seed's netblast payload (5 bytes) and the largest that fits a frame.
    unsigned long port = param_get_ulong("net.echo", 0);
    if (port == 0 || port > 0xFFFF) {
        ktest::skip("needs tools/netpeer's echo server: tools/netpeer --echo auto -- tools/run "
                    "--net user --cmdline 'test=device.* net.echo={echo}'");
        return;
    }
    net::NetInterface* nif = e1000_interface(0);
    KEXPECT(nif != nullptr);
    if (!nif)
        return;
    g_echo_port = static_cast<uint16_t>(port);
    e1000_set_tap(0, echo_tap);
    static uint8_t payload[k_udp_max_payload], frame[net::k_max_frame];
    const size_t k_sizes[] = {5, k_udp_max_payload};
    uint16_t id = 1;
    for (size_t size : k_sizes) {
        for (size_t i = 0; i < size; ++i)
            payload[i] = static_cast<uint8_t>(i * 7 + size);
        g_echo_seen = false;
        size_t length = udp_frame(frame, nif->mac, g_echo_port, payload, size, id++);
        KEXPECT_EQ(length, size + 14 + k_ipv4_header + k_udp_header);
        KEXPECT(nif->transmit(*nif, frame, length));
        bool echoed = wait_for([] { return g_echo_seen; });
        KEXPECT(echoed);
        if (!echoed)
            break;
        KEXPECT_EQ(g_echo_length, size);
        KEXPECT(memcmp(g_echo_payload, payload, size) == 0);
    }
    e1000_set_tap(0, nullptr);
}

} // namespace toll::dev
