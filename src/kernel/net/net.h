// The network stack's parts as they call one another: the wire formats'
// constants, the Internet checksum, routing and IPv4 output (stack.cpp), and
// the input side's hand-offs from IPv4 to the sockets (socket.cpp).
//
// A datagram's way down: sendto (socket.cpp) copies the payload from user
// memory straight into a Frame on the kernel stack, behind room for the
// headers; udp_output fills the UDP header and ip_output the IPv4 and
// Ethernet ones, and the interface's transmit takes the frame. The loopback
// interface's transmit hands it to net_receive at once, so the way up
// (ip_input, udp_input, a socket's queue) runs inside the sender's call.
//
// Addresses and ports are in host byte order everywhere inside the stack;
// they are converted at the two edges, the wire (load/store below) and
// user memory (struct sockaddr_in, socket.cpp).
#pragma once
#include "kernel/kern/counters.h"
#include "kernel/kern/errno.h"
#include "kernel/net/netif.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::net {

// --- Wire formats ----------------------------------------------------------

/// EtherType values (IEEE 802 numbers, as IANA lists them).
inline constexpr uint16_t k_ethertype_ipv4 = 0x0800, k_ethertype_arp = 0x0806;

/// The IPv4 header without options (RFC 791, section 3.1).
inline constexpr size_t k_ip_header = 20;
/// IPv4 protocol numbers (IANA "Assigned Internet Protocol Numbers").
inline constexpr uint8_t k_proto_icmp = 1, k_proto_udp = 17;
/// The flags-and-fragment-offset word: Don't Fragment, More Fragments and
/// the offset's 13 bits (RFC 791).
inline constexpr uint16_t k_ip_df = 0x4000, k_ip_mf = 0x2000, k_ip_offset_mask = 0x1FFF;
/// The TTL a datagram leaves with unless IP_TTL says otherwise (Linux's
/// net.ipv4.ip_default_ttl).
inline constexpr uint8_t k_default_ttl = 64;

/// The UDP header (RFC 768): ports, length, checksum.
inline constexpr size_t k_udp_header = 8;
/// The largest UDP payload an IPv4 datagram can carry: 65535 - 20 - 8.
inline constexpr size_t k_udp_max_payload = 65507;

/// ICMP (RFC 792): the header, and the types and codes Toll speaks.
inline constexpr size_t k_icmp_header = 8;
inline constexpr uint8_t k_icmp_echo_reply = 0, k_icmp_unreachable = 3, k_icmp_echo = 8;
inline constexpr uint8_t k_icmp_port_unreachable = 3;

/// Where the IPv4 header and the transport header start in a frame.
inline constexpr size_t k_ip_at = k_ethernet_header;
inline constexpr size_t k_transport_at = k_ethernet_header + k_ip_header;

/// 127.0.0.0/8, the loopback network (RFC 1122, 3.2.1.3 (g)).
inline constexpr uint32_t k_loopback_net = 0x7F000000, k_loopback_mask = 0xFF000000;
inline constexpr uint32_t k_loopback_address = 0x7F000001;
/// The limited broadcast address (RFC 919).
inline constexpr uint32_t k_broadcast = 0xFFFFFFFF;

/// Big-endian loads and stores, byte by byte: a header in a frame may sit
/// at any alignment, and the wire's order is not the CPU's.
inline uint16_t load16(const uint8_t* p)
{
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
inline uint32_t load32(const uint8_t* p)
{
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline void store16(uint8_t* p, uint16_t v)
{
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
inline void store32(uint8_t* p, uint32_t v)
{
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

/// The Internet checksum's running sum (RFC 1071): adds @p length bytes at
/// @p data, as 16-bit big-endian words (an odd last byte padded with zero),
/// to @p sum.
uint32_t checksum_add(uint32_t sum, const uint8_t* data, size_t length);
/// Folds a running sum to 16 bits and complements it: the checksum field.
uint16_t checksum_finish(uint32_t sum);
/// The UDP pseudo-header's part of the sum (RFC 768): the addresses, the
/// protocol and the UDP length.
uint32_t pseudo_header_sum(uint32_t source, uint32_t destination, uint8_t protocol, size_t length);

// --- Interfaces, routes, output (stack.cpp) --------------------------------

/// A frame being built, on the kernel stack of the call that sends it.
struct Frame {
    uint8_t bytes[k_max_frame];
};

/// Where a datagram to one destination goes.
struct Route {
    NetInterface* nif = nullptr;
    uint32_t source = 0;   ///< the interface's address: the datagram's source
    uint32_t next_hop = 0; ///< the destination on the link, or the gateway
    bool broadcast = false;
    bool loopback = false; ///< through the loopback interface
};

/// The loopback interface ("lo", 127.0.0.1/8), registered on first use.
NetInterface& loopback_interface();

/// The route to @p destination, or k_enetunreach.
Errno route_lookup(uint32_t destination, Route* route);

/// True when @p address is one of this host's (an interface's, or 127/8).
bool address_is_local(uint32_t address);

/// True when @p address is a broadcast address of a configured interface
/// (255.255.255.255 or a subnet's all-ones host part).
bool address_is_broadcast(uint32_t address);

/// Sends the IPv4 datagram whose payload (@p length bytes, the transport
/// header first) sits at k_transport_at in @p frame: fills in the IPv4
/// and Ethernet headers and hands it to @p route's interface (through ARP
/// on Ethernet). Returns k_ok; k_enobufs when the interface's transmit
/// queue is full, k_emsgsize past its MTU.
Errno ip_output(Frame& frame, size_t length, uint8_t protocol, uint32_t source,
                uint32_t destination, const Route& route, uint8_t ttl);

/// Sends ICMP destination unreachable (@p code) about the IPv4 datagram at
/// @p ip (@p length bytes, as it arrived), unless it must not be answered
/// (RFC 1122, 3.2.2: a broadcast, an ICMP error, a fragment).
void icmp_send_unreachable(const uint8_t* ip, size_t length, uint8_t code);

/// Writes the UDP header at @p udp, in front of the @p payload_length bytes
/// of payload that follow it: the ports, the length and the checksum over
/// the pseudo-header of @p source and @p destination (RFC 768). The
/// network lab's piece (lab_net.cpp).
void udp_header_write(uint8_t* udp, uint16_t source_port, uint16_t destination_port,
                      uint32_t source, uint32_t destination, size_t payload_length);

/// The ephemeral ports, as Linux's net.ipv4.ip_local_port_range.
inline constexpr uint16_t k_ephemeral_first = 32768, k_ephemeral_last = 60999;

// --- Input hand-offs to the sockets (socket.cpp) ---------------------------

/// One UDP datagram for this host, its header checked: delivers the
/// payload (@p length bytes at @p payload) to the socket bound to
/// @p destination_port, or answers port unreachable (@p ip is the whole
/// datagram, for the ICMP message). @p broadcast: sent to a broadcast
/// address (never answered).
void udp_deliver(uint32_t source, uint16_t source_port, uint32_t destination,
                 uint16_t destination_port, const uint8_t* payload, size_t length,
                 const uint8_t* ip, size_t ip_length, bool broadcast);

/// An ICMP error about a UDP datagram this host sent from @p source_port
/// to @p destination : @p destination_port: a socket connected there
/// reports @p error on its next call (Linux's and BSD's behaviour).
void udp_error(uint32_t destination, uint16_t source_port, uint16_t destination_port, Errno error);

/// One ICMP message for this host (@p ip: the whole IPv4 datagram, checked):
/// a copy goes to every raw ICMP socket.
void raw_deliver(uint32_t source, const uint8_t* ip, size_t length);

// --- Counters (stack.cpp), /proc/net/snmp's names in netstat's groups -------

/// Defines one of the stack's own counters: a Counter that /proc/net reads
/// but that is not in the kernel's table of counters (counter_get and the
/// benchmarks' snapshots do not see it).
#define NET_COUNTER(ident, name)                                                                   \
    constinit ::toll::Counter ident                                                                \
    {                                                                                              \
        name, 0                                                                                    \
    }

extern Counter g_ip_in_receives, g_ip_in_hdr_errors, g_ip_in_addr_errors, g_ip_in_unknown_protos,
    g_ip_in_discards, g_ip_in_delivers, g_ip_out_requests, g_ip_out_discards, g_ip_out_no_routes,
    g_ip_reasm_fails;
extern Counter g_icmp_in_msgs, g_icmp_in_errors, g_icmp_in_csum_errors, g_icmp_in_dest_unreachs,
    g_icmp_in_echos, g_icmp_in_echo_reps, g_icmp_out_msgs, g_icmp_out_errors,
    g_icmp_out_dest_unreachs, g_icmp_out_echo_reps;
extern Counter g_udp_in_datagrams, g_udp_no_ports, g_udp_in_errors, g_udp_out_datagrams,
    g_udp_rcvbuf_errors, g_udp_sndbuf_errors, g_udp_in_csum_errors, g_udp_mem_errors;

} // namespace toll::net
