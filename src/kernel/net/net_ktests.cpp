// The stack's input checks, fed hostile frames through the loopback
// interface's receive side, as a driver would hand them up: every malformed
// frame is dropped and counted under the right name, none is delivered,
// none leaks a datagram, and a well-formed one still arrives after them.
#include "kernel/kern/ktest.h"
#include "kernel/net/net.h"
#include "lib/string.h"

namespace toll::net {
namespace {

constexpr uint16_t k_test_port = 7; // nobody binds it in the kernel's tests

// A well-formed UDP datagram, 127.0.0.1:9 to 127.0.0.1:k_test_port, with
// @p payload bytes of payload; returns the frame's length.
size_t good_frame(uint8_t* f, size_t payload)
{
    memset(f, 0, k_max_frame);
    store16(f + 12, k_ethertype_ipv4);
    uint8_t* ip = f + k_ip_at;
    size_t total = k_ip_header + k_udp_header + payload;
    ip[0] = 0x45;
    store16(ip + 2, static_cast<uint16_t>(total));
    ip[8] = 64;
    ip[9] = k_proto_udp;
    store32(ip + 12, k_loopback_address);
    store32(ip + 16, k_loopback_address);
    store16(ip + 10, checksum_finish(checksum_add(0, ip, k_ip_header)));
    uint8_t* udp = ip + k_ip_header;
    store16(udp, 9);
    store16(udp + 2, k_test_port);
    store16(udp + 4, static_cast<uint16_t>(k_udp_header + payload));
    for (size_t i = 0; i < payload; ++i)
        udp[k_udp_header + i] = static_cast<uint8_t>(i);
    uint32_t sum = pseudo_header_sum(k_loopback_address, k_loopback_address, k_proto_udp,
                                     k_udp_header + payload);
    store16(udp + 6, checksum_finish(checksum_add(sum, udp, k_udp_header + payload)));
    return k_ethernet_header + total;
}

void refresh_ip_checksum(uint8_t* f)
{
    uint8_t* ip = f + k_ip_at;
    store16(ip + 10, 0);
    store16(ip + 10, checksum_finish(checksum_add(0, ip, size_t(ip[0] & 0xF) * 4)));
}

// Feeds @p f to the stack and says whether @p counter moved by one.
bool counted(const uint8_t* f, size_t length, const Counter& counter)
{
    uint64_t before = counter.read();
    net_receive(loopback_interface(), f, length);
    return counter.read() == before + 1;
}

} // namespace

KTEST("net.checksum_rfc1071_example")
{
    // RFC 1071, 3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (folded).
    const uint8_t bytes[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    KEXPECT_EQ(checksum_finish(checksum_add(0, bytes, sizeof bytes)), uint16_t(~0xddf2u));
    // An odd length pads the last byte with zero.
    const uint8_t odd[] = {0x12, 0x34, 0x56};
    KEXPECT_EQ(checksum_finish(checksum_add(0, odd, sizeof odd)), uint16_t(~(0x1234u + 0x5600u)));
}

KTEST("net.malformed_frames_are_counted_not_delivered")
{
    static uint8_t f[k_max_frame];
    // The reference: a good datagram to a port nobody holds is NoPorts.
    size_t n = good_frame(f, 5);
    KEXPECT(counted(f, n, g_udp_no_ports));

    // A runt, shorter than an Ethernet header, never reaches IPv4.
    uint64_t received = g_ip_in_receives.read();
    net_receive(loopback_interface(), f, 10);
    KEXPECT_EQ(g_ip_in_receives.read(), received);
    // A frame cut inside the IPv4 header.
    n = good_frame(f, 5);
    KEXPECT(counted(f, k_ethernet_header + 12, g_ip_in_hdr_errors));
    // Version 6 in an IPv4 EtherType.
    n = good_frame(f, 5);
    f[k_ip_at] = 0x65;
    KEXPECT(counted(f, n, g_ip_in_hdr_errors));
    // A header length under five words, and one past the frame.
    n = good_frame(f, 5);
    f[k_ip_at] = 0x44;
    KEXPECT(counted(f, n, g_ip_in_hdr_errors));
    n = good_frame(f, 5);
    f[k_ip_at] = 0x4F;
    KEXPECT(counted(f, k_ethernet_header + 40, g_ip_in_hdr_errors));
    // A total length past the frame's end, and under the header's.
    n = good_frame(f, 5);
    store16(f + k_ip_at + 2, 1400);
    refresh_ip_checksum(f);
    KEXPECT(counted(f, n, g_ip_in_hdr_errors));
    n = good_frame(f, 5);
    store16(f + k_ip_at + 2, 8);
    refresh_ip_checksum(f);
    KEXPECT(counted(f, n, g_ip_in_hdr_errors));
    // A bad header checksum.
    n = good_frame(f, 5);
    f[k_ip_at + 10] ^= 0x5A;
    KEXPECT(counted(f, n, g_ip_in_hdr_errors));
    // A fragment (More Fragments set): Toll reassembles nothing.
    n = good_frame(f, 5);
    store16(f + k_ip_at + 6, k_ip_mf);
    refresh_ip_checksum(f);
    KEXPECT(counted(f, n, g_ip_reasm_fails));
    // Not for this host.
    n = good_frame(f, 5);
    store32(f + k_ip_at + 16, 0xC0000201); // 192.0.2.1
    refresh_ip_checksum(f);
    KEXPECT(counted(f, n, g_ip_in_addr_errors));
    // A protocol Toll does not speak (TCP, 6).
    n = good_frame(f, 5);
    f[k_ip_at + 9] = 6;
    refresh_ip_checksum(f);
    KEXPECT(counted(f, n, g_ip_in_unknown_protos));
    // UDP: a length past the datagram, under the header, a bad checksum.
    n = good_frame(f, 5);
    store16(f + k_transport_at + 4, 200);
    KEXPECT(counted(f, n, g_udp_in_errors));
    n = good_frame(f, 5);
    store16(f + k_transport_at + 4, 3);
    KEXPECT(counted(f, n, g_udp_in_errors));
    n = good_frame(f, 5);
    f[k_transport_at + k_udp_header] ^= 0xFF;
    KEXPECT(counted(f, n, g_udp_in_csum_errors));
    // A UDP datagram too short for its header.
    n = good_frame(f, 0);
    store16(f + k_ip_at + 2, k_ip_header + 4);
    refresh_ip_checksum(f);
    KEXPECT(counted(f, k_ethernet_header + k_ip_header + 4, g_udp_in_errors));
    // ICMP: too short, and a bad checksum.
    n = good_frame(f, 0);
    f[k_ip_at + 9] = k_proto_icmp;
    store16(f + k_ip_at + 2, k_ip_header + 4);
    refresh_ip_checksum(f);
    KEXPECT(counted(f, k_ethernet_header + k_ip_header + 4, g_icmp_in_errors));
    n = good_frame(f, 8);
    f[k_ip_at + 9] = k_proto_icmp;
    refresh_ip_checksum(f);
    KEXPECT(counted(f, n, g_icmp_in_csum_errors));
    // Random bytes of every length up to a frame: no crash, nothing delivered.
    uint64_t delivered = g_udp_in_datagrams.read();
    uint32_t x = 0x9E3779B9;
    for (size_t length = 0; length <= k_max_frame; length += 7) {
        for (size_t i = 0; i < length; ++i) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            f[i] = static_cast<uint8_t>(x);
        }
        if (length >= k_ethernet_header + 1) {
            store16(f + 12, k_ethertype_ipv4);
            f[k_ip_at] = 0x45;
        }
        net_receive(loopback_interface(), f, length);
    }
    KEXPECT_EQ(g_udp_in_datagrams.read(), delivered);
}

} // namespace toll::net
