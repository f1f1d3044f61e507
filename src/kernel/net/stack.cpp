// The network stack below the sockets: the interfaces (the loopback one is
// this file's), routing, IPv4 in and out, ARP on Ethernet, ICMP echo and
// destination unreachable, UDP's header checks, and /proc/net's text.
//
// Nothing here stores a frame on the way through except ARP, which keeps
// one datagram per unresolved neighbour until the reply comes (Linux keeps
// a few, as unres_qlen). Input runs wherever the frame arrived: inside the
// sender's system call for the loopback interface, in a driver's interrupt
// handler for a device. Locks: `net.ifaces` over the interface table while
// it grows (read without it after: entries are only added, and published
// by the count), `net.arp` over the neighbour table; neither is held while
// a frame is transmitted, since the loopback's transmit comes straight back
// in here.
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/spinlock.h"
#include "kernel/net/net.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/kmalloc.h"
#include "lib/format.h"
#include "lib/string.h"
#include <stdarg.h>

namespace toll::net {

// The counters /proc/net/snmp prints, under its names (Linux's, from
// RFC 4293's IP-MIB and RFC 4113's UDP-MIB). Two of them, what a datagram
// coming up ends as, are kernel counters too (kern/counters.h), so that a
// benchmark sees them per datagram; the rest are the stack's own
// (NET_COUNTER, net.h), which keeps the kernel's table within what a
// benchmark's snapshot holds (src/user/bench/bench.h).
NET_COUNTER(g_ip_in_receives, "net.ip.in_receives");
NET_COUNTER(g_ip_in_hdr_errors, "net.ip.in_hdr_errors");
NET_COUNTER(g_ip_in_addr_errors, "net.ip.in_addr_errors");
NET_COUNTER(g_ip_in_unknown_protos, "net.ip.in_unknown_protos");
NET_COUNTER(g_ip_in_discards, "net.ip.in_discards");
NET_COUNTER(g_ip_in_delivers, "net.ip.in_delivers");
NET_COUNTER(g_ip_out_requests, "net.ip.out_requests");
NET_COUNTER(g_ip_out_discards, "net.ip.out_discards");
NET_COUNTER(g_ip_out_no_routes, "net.ip.out_no_routes");
NET_COUNTER(g_ip_reasm_fails, "net.ip.reasm_fails");
NET_COUNTER(g_icmp_in_msgs, "net.icmp.in_msgs");
NET_COUNTER(g_icmp_in_errors, "net.icmp.in_errors");
NET_COUNTER(g_icmp_in_csum_errors, "net.icmp.in_csum_errors");
NET_COUNTER(g_icmp_in_dest_unreachs, "net.icmp.in_dest_unreachs");
NET_COUNTER(g_icmp_in_echos, "net.icmp.in_echos");
NET_COUNTER(g_icmp_in_echo_reps, "net.icmp.in_echo_reps");
NET_COUNTER(g_icmp_out_msgs, "net.icmp.out_msgs");
NET_COUNTER(g_icmp_out_errors, "net.icmp.out_errors");
NET_COUNTER(g_icmp_out_dest_unreachs, "net.icmp.out_dest_unreachs");
NET_COUNTER(g_icmp_out_echo_reps, "net.icmp.out_echo_reps");
TOLL_COUNTER(g_udp_in_datagrams, "net.udp.in_datagrams");
NET_COUNTER(g_udp_no_ports, "net.udp.no_ports");
NET_COUNTER(g_udp_in_errors, "net.udp.in_errors");
NET_COUNTER(g_udp_out_datagrams, "net.udp.out_datagrams");
TOLL_COUNTER(g_udp_rcvbuf_errors, "net.udp.rcvbuf_errors");
NET_COUNTER(g_udp_sndbuf_errors, "net.udp.sndbuf_errors");
NET_COUNTER(g_udp_in_csum_errors, "net.udp.in_csum_errors");
NET_COUNTER(g_udp_mem_errors, "net.udp.mem_errors");

namespace {

NET_COUNTER(g_ether_in_errors, "net.ether.in_errors");
NET_COUNTER(g_ether_unknown_types, "net.ether.unknown_types");
NET_COUNTER(g_arp_in, "net.arp.in");
NET_COUNTER(g_arp_in_errors, "net.arp.in_errors");
NET_COUNTER(g_arp_requests_out, "net.arp.requests_out");
NET_COUNTER(g_arp_replies_out, "net.arp.replies_out");
NET_COUNTER(g_arp_queue_drops, "net.arp.queue_drops");

// QEMU's user network ("slirp"): the guest's address, the network and the
// gateway (the host) it offers, from QEMU's documentation of -netdev user
// (net=10.0.2.0/24, host=10.0.2.2, dhcpstart=10.0.2.15). Toll configures
// the first Ethernet interface so, statically, instead of asking by DHCP.
constexpr uint32_t k_static_address = 0x0A00020F; // 10.0.2.15
constexpr uint32_t k_static_netmask = 0xFFFFFF00; // /24
constexpr uint32_t k_static_gateway = 0x0A000202; // 10.0.2.2

// An Ethernet frame is at least 64 bytes on the wire, 60 without the FCS
// (IEEE 802.3, 3.2.8): shorter ones are padded with zeros.
constexpr size_t k_ethernet_min_frame = 60;

// ARP over Ethernet for IPv4 (RFC 826): hardware type 1, the fixed part
// and the two operations.
constexpr uint16_t k_arp_hw_ethernet = 1, k_arp_request = 1, k_arp_reply = 2;
constexpr size_t k_arp_packet = 28;

constexpr size_t k_max_interfaces = 4;

// The stack's side of an interface: the driver's NetInterface, the
// gateway, and what /proc/net/dev prints beyond the driver's counts.
struct Attached {
    NetInterface* nif = nullptr;
    uint32_t gateway = 0;
    bool loopback = false;
    uint64_t rx_bytes = 0, tx_bytes = 0, rx_errors = 0, tx_discards = 0;
};

Spinlock g_ifaces_lock{"net.ifaces"};
Attached g_ifaces[k_max_interfaces]; // [0] is the loopback interface
unsigned g_iface_count;              // atomic (release on add, acquire on read)
NetInterface g_loopback;
uint16_t g_ip_id; // atomic: the IPv4 identification of the next datagram

bool loopback_transmit(NetInterface& self, const uint8_t* frame, size_t length)
{
    // The frame goes straight back up: the sender's call receives it.
    ++self.tx_frames;
    ++self.rx_frames;
    net_receive(self, frame, length);
    return true;
}

// Adds @p nif to the table, the lock held; false when it is full.
bool attach_locked(NetInterface& nif, bool loopback)
{
    unsigned n = __atomic_load_n(&g_iface_count, __ATOMIC_RELAXED);
    if (n == k_max_interfaces)
        return false;
    g_ifaces[n] = Attached{};
    g_ifaces[n].nif = &nif;
    g_ifaces[n].loopback = loopback;
    __atomic_store_n(&g_iface_count, n + 1, __ATOMIC_RELEASE);
    return true;
}

// The loopback interface, registered on the stack's first use.
void ensure_started()
{
    if (__atomic_load_n(&g_iface_count, __ATOMIC_ACQUIRE))
        return;
    SpinGuard g(g_ifaces_lock);
    if (g_iface_count)
        return;
    g_loopback.name = "lo";
    g_loopback.ipv4 = k_loopback_address;
    g_loopback.netmask = k_loopback_mask;
    g_loopback.transmit = loopback_transmit;
    attach_locked(g_loopback, true);
}

unsigned iface_count()
{
    ensure_started();
    return __atomic_load_n(&g_iface_count, __ATOMIC_ACQUIRE);
}

Attached* attached_of(const NetInterface& nif)
{
    unsigned n = iface_count();
    for (unsigned i = 0; i < n; ++i)
        if (g_ifaces[i].nif == &nif)
            return &g_ifaces[i];
    return nullptr;
}

// The first configured interface that is not the loopback: the default route.
Attached* default_iface()
{
    unsigned n = iface_count();
    for (unsigned i = 0; i < n; ++i)
        if (!g_ifaces[i].loopback && g_ifaces[i].nif->ipv4)
            return &g_ifaces[i];
    return nullptr;
}

// Hands a finished frame to @p nif; k_enobufs when its queue is full.
Errno transmit(NetInterface& nif, const uint8_t* frame, size_t length)
{
    Attached* a = attached_of(nif);
    if (!nif.transmit(nif, frame, length)) {
        if (a)
            ++a->tx_discards;
        g_ip_out_discards.add();
        return k_enobufs;
    }
    if (a)
        a->tx_bytes += length;
    return k_ok;
}

// --- ARP ---------------------------------------------------------------------

constexpr size_t k_arp_entries = 16;
// How long an unanswered request stands before another is sent: Linux's
// neighbour default retrans_time_ms (1000) would leave a blast waiting a
// second; a tenth of it is plenty on a LAN and still keeps a sender that
// outruns the reply from asking once per datagram.
constexpr uint64_t k_arp_retry_ms = 100;

struct Neighbour {
    NetInterface* nif = nullptr; ///< nullptr: the slot is free
    uint32_t address = 0;
    MacAddress mac{};
    bool resolved = false;
    uint64_t used = 0;          ///< tick of the last use, for eviction
    uint64_t asked = 0;         ///< tick of the last request sent; 0: none yet
    uint8_t* pending = nullptr; ///< one frame waiting for the reply (kmalloc'd)
    size_t pending_length = 0;
};

Spinlock g_arp_lock{"net.arp"};
Neighbour g_neighbours[k_arp_entries];

// The entry for @p address on @p nif, or a slot to make it in (free, or
// the least recently used), the lock held.
Neighbour* neighbour_slot(NetInterface& nif, uint32_t address, bool* found)
{
    Neighbour* victim = &g_neighbours[0];
    for (Neighbour& n : g_neighbours) {
        if (n.nif == &nif && n.address == address) {
            *found = true;
            return &n;
        }
        if (victim->nif && (!n.nif || n.used < victim->used))
            victim = &n;
    }
    *found = false;
    return victim;
}

// Makes @p slot the entry for @p address, dropping what it held; returns
// the frame it was holding (for the caller to free outside the lock).
uint8_t* neighbour_reset(Neighbour* slot, NetInterface& nif, uint32_t address)
{
    uint8_t* old = slot->pending;
    if (old)
        g_arp_queue_drops.add();
    *slot = Neighbour{};
    slot->nif = &nif;
    slot->address = address;
    slot->used = proc::ticks();
    return old;
}

void arp_send(NetInterface& nif, uint16_t operation, const uint8_t* target_mac,
              uint32_t target_address)
{
    uint8_t frame[k_ethernet_min_frame] = {};
    static const uint8_t k_everyone[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    memcpy(frame, target_mac ? target_mac : k_everyone, 6);
    memcpy(frame + 6, nif.mac.bytes, 6);
    store16(frame + 12, k_ethertype_arp);
    uint8_t* p = frame + k_ethernet_header;
    store16(p, k_arp_hw_ethernet);
    store16(p + 2, k_ethertype_ipv4);
    p[4] = 6;
    p[5] = 4;
    store16(p + 6, operation);
    memcpy(p + 8, nif.mac.bytes, 6);
    store32(p + 14, nif.ipv4);
    if (target_mac)
        memcpy(p + 18, target_mac, 6);
    store32(p + 24, target_address);
    (operation == k_arp_request ? g_arp_requests_out : g_arp_replies_out).add();
    (void)transmit(nif, frame, sizeof frame);
}

// Sends @p frame to @p next_hop on @p nif once its hardware address is
// known: at once if it is, else after the reply to the request sent now.
Errno arp_output(NetInterface& nif, uint32_t next_hop, uint8_t* frame, size_t length)
{
    uint8_t* dropped = nullptr;
    bool ask;
    {
        SpinGuard g(g_arp_lock);
        bool found;
        Neighbour* n = neighbour_slot(nif, next_hop, &found);
        if (found && n->resolved) {
            n->used = proc::ticks();
            memcpy(frame, n->mac.bytes, 6);
            ask = false;
        } else {
            if (!found)
                dropped = neighbour_reset(n, nif, next_hop);
            else if (n->pending) {
                dropped = n->pending; // the newer datagram takes the place
                g_arp_queue_drops.add();
            }
            n->pending = static_cast<uint8_t*>(vm::kmalloc(length));
            n->pending_length = n->pending ? length : 0;
            if (n->pending)
                memcpy(n->pending, frame, length);
            uint64_t now = proc::ticks();
            uint64_t retry = k_arp_retry_ms * arch::clock_hz() / 1000;
            ask = n->asked == 0 || now - n->asked >= (retry ? retry : 1);
            if (ask)
                n->asked = now ? now : 1;
        }
    }
    vm::kfree(dropped);
    if (!ask)
        return transmit(nif, frame, length);
    arp_send(nif, k_arp_request, nullptr, next_hop);
    return k_ok; // queued, as Linux's neighbour layer queues it
}

void arp_input(NetInterface& nif, const uint8_t* p, size_t length)
{
    g_arp_in.add();
    if (length < k_arp_packet || load16(p) != k_arp_hw_ethernet ||
        load16(p + 2) != k_ethertype_ipv4 || p[4] != 6 || p[5] != 4) {
        g_arp_in_errors.add();
        return;
    }
    uint16_t operation = load16(p + 6);
    const uint8_t* sender_mac = p + 8;
    uint32_t sender = load32(p + 14), target = load32(p + 24);
    if (!nif.ipv4 || sender == 0 || (operation != k_arp_request && operation != k_arp_reply))
        return;
    bool for_us = target == nif.ipv4;
    uint8_t* waiting = nullptr;
    size_t waiting_length = 0;
    uint8_t* dropped = nullptr;
    {
        // RFC 826's merge: update a known sender; learn it if it asks us.
        SpinGuard g(g_arp_lock);
        bool found;
        Neighbour* n = neighbour_slot(nif, sender, &found);
        if (found || for_us) {
            if (!found)
                dropped = neighbour_reset(n, nif, sender);
            memcpy(n->mac.bytes, sender_mac, 6);
            n->resolved = true;
            n->used = proc::ticks();
            waiting = n->pending;
            waiting_length = n->pending_length;
            n->pending = nullptr;
            n->pending_length = 0;
        }
    }
    vm::kfree(dropped);
    if (for_us && operation == k_arp_request)
        arp_send(nif, k_arp_reply, sender_mac, sender);
    if (waiting) {
        memcpy(waiting, sender_mac, 6);
        (void)transmit(nif, waiting, waiting_length);
        vm::kfree(waiting);
    }
}

// --- IPv4 input ----------------------------------------------------------------

// Whether a datagram to @p destination that came in on @p nif is this host's.
bool accept_destination(const Attached& a, uint32_t destination)
{
    if (a.loopback)
        return (destination & k_loopback_mask) == k_loopback_net || address_is_local(destination);
    return address_is_local(destination) || address_is_broadcast(destination);
}

void icmp_input(uint32_t source, uint32_t destination, const uint8_t* ip, size_t ip_length,
                const uint8_t* icmp, size_t length, bool broadcast)
{
    g_icmp_in_msgs.add();
    if (length < k_icmp_header || checksum_finish(checksum_add(0, icmp, length)) != 0) {
        if (length >= k_icmp_header)
            g_icmp_in_csum_errors.add();
        g_icmp_in_errors.add();
        return;
    }
    raw_deliver(source, ip, ip_length);
    switch (icmp[0]) {
    case k_icmp_echo: {
        g_icmp_in_echos.add();
        // Linux's net.ipv4.icmp_echo_ignore_broadcasts is on by default.
        if (broadcast)
            return;
        Route route;
        if (route_lookup(source, &route) != k_ok) {
            g_icmp_out_errors.add();
            return;
        }
        Frame frame;
        uint8_t* reply = frame.bytes + k_transport_at;
        memcpy(reply, icmp, length);
        reply[0] = k_icmp_echo_reply;
        store16(reply + 2, 0);
        store16(reply + 2, checksum_finish(checksum_add(0, reply, length)));
        g_icmp_out_msgs.add();
        g_icmp_out_echo_reps.add();
        if (ip_output(frame, length, k_proto_icmp, destination, source, route, k_default_ttl) !=
            k_ok)
            g_icmp_out_errors.add();
        return;
    }
    case k_icmp_echo_reply:
        g_icmp_in_echo_reps.add();
        return;
    case k_icmp_unreachable: {
        g_icmp_in_dest_unreachs.add();
        // The datagram it is about: its IPv4 header and 8 bytes (RFC 792).
        const uint8_t* inner = icmp + k_icmp_header;
        size_t inner_length = length - k_icmp_header;
        if (inner_length < k_ip_header || (inner[0] >> 4) != 4)
            return;
        size_t inner_header = size_t(inner[0] & 0xF) * 4;
        if (inner_header < k_ip_header || inner_length < inner_header + k_udp_header ||
            inner[9] != k_proto_udp)
            return;
        // RFC 1122, 3.2.2.1: codes 0 and 1 say net and host unreachable;
        // 2 and 3 that nobody takes the protocol or the port there.
        uint8_t code = icmp[1];
        Errno error = code == 0                ? k_enetunreach
                      : code == 2 || code == 3 ? k_econnrefused
                                               : k_ehostunreach;
        const uint8_t* udp = inner + inner_header;
        udp_error(load32(inner + 16), load16(udp), load16(udp + 2), error);
        return;
    }
    default:
        return;
    }
}

void udp_input(uint32_t source, uint32_t destination, const uint8_t* ip, size_t ip_length,
               const uint8_t* udp, size_t length, bool broadcast)
{
    if (length < k_udp_header) {
        g_udp_in_errors.add();
        return;
    }
    size_t udp_length = load16(udp + 4);
    if (udp_length < k_udp_header || udp_length > length) {
        g_udp_in_errors.add();
        return;
    }
    // A zero checksum: the sender computed none (RFC 768).
    if (load16(udp + 6) != 0) {
        uint32_t sum = pseudo_header_sum(source, destination, k_proto_udp, udp_length);
        if (checksum_finish(checksum_add(sum, udp, udp_length)) != 0) {
            g_udp_in_csum_errors.add();
            g_udp_in_errors.add();
            return;
        }
    }
    udp_deliver(source, load16(udp), destination, load16(udp + 2), udp + k_udp_header,
                udp_length - k_udp_header, ip, ip_length, broadcast);
}

void ip_input(Attached& a, const uint8_t* ip, size_t length)
{
    g_ip_in_receives.add();
    if (length < k_ip_header || (ip[0] >> 4) != 4) {
        g_ip_in_hdr_errors.add();
        return;
    }
    size_t header = size_t(ip[0] & 0xF) * 4;
    size_t total = load16(ip + 2);
    if (header < k_ip_header || header > length || total < header || total > length ||
        checksum_finish(checksum_add(0, ip, header)) != 0) {
        g_ip_in_hdr_errors.add();
        return;
    }
    // Toll reassembles nothing: a fragment is dropped and counted.
    if (load16(ip + 6) & (k_ip_mf | k_ip_offset_mask)) {
        g_ip_reasm_fails.add();
        return;
    }
    uint32_t source = load32(ip + 12), destination = load32(ip + 16);
    if (!accept_destination(a, destination)) {
        g_ip_in_addr_errors.add();
        return;
    }
    bool broadcast = address_is_broadcast(destination);
    const uint8_t* payload = ip + header;
    size_t payload_length = total - header;
    switch (ip[9]) {
    case k_proto_icmp:
        g_ip_in_delivers.add();
        icmp_input(source, destination, ip, total, payload, payload_length, broadcast);
        return;
    case k_proto_udp:
        g_ip_in_delivers.add();
        udp_input(source, destination, ip, total, payload, payload_length, broadcast);
        return;
    default:
        g_ip_in_unknown_protos.add();
        if (!broadcast)
            icmp_send_unreachable(ip, total, 2); // protocol unreachable
        return;
    }
}

// --- /proc/net -------------------------------------------------------------

struct Writer {
    char* out;
    size_t capacity;
    size_t used = 0;

    void add(const char* fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        va_list args;
        va_start(args, fmt);
        size_t room = used < capacity ? capacity - used : 0;
        used += lib::vsnformat(room ? out + used : nullptr, room, fmt, args);
        va_end(args);
    }
};

unsigned long long v(const Counter& c)
{
    return static_cast<unsigned long long>(c.read());
}

void write_snmp(Writer& w)
{
    w.add("Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams "
          "InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes "
          "ReasmTimeout ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates\n");
    // Forwarding 2: not a router (RFC 4293's ipForwarding).
    w.add("Ip: 2 %u %llu %llu %llu 0 %llu %llu %llu %llu %llu %llu 0 %llu 0 %llu 0 0 0\n",
          unsigned(k_default_ttl), v(g_ip_in_receives), v(g_ip_in_hdr_errors),
          v(g_ip_in_addr_errors), v(g_ip_in_unknown_protos), v(g_ip_in_discards),
          v(g_ip_in_delivers), v(g_ip_out_requests), v(g_ip_out_discards), v(g_ip_out_no_routes),
          v(g_ip_reasm_fails), v(g_ip_reasm_fails));
    w.add("Icmp: InMsgs InErrors InCsumErrors InDestUnreachs InEchos InEchoReps OutMsgs "
          "OutErrors OutDestUnreachs OutEchoReps\n");
    w.add("Icmp: %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", v(g_icmp_in_msgs),
          v(g_icmp_in_errors), v(g_icmp_in_csum_errors), v(g_icmp_in_dest_unreachs),
          v(g_icmp_in_echos), v(g_icmp_in_echo_reps), v(g_icmp_out_msgs), v(g_icmp_out_errors),
          v(g_icmp_out_dest_unreachs), v(g_icmp_out_echo_reps));
    w.add("Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors "
          "InCsumErrors IgnoredMulti MemErrors\n");
    w.add("Udp: %llu %llu %llu %llu %llu %llu %llu 0 %llu\n", v(g_udp_in_datagrams),
          v(g_udp_no_ports), v(g_udp_in_errors), v(g_udp_out_datagrams), v(g_udp_rcvbuf_errors),
          v(g_udp_sndbuf_errors), v(g_udp_in_csum_errors), v(g_udp_mem_errors));
}

void write_dev(Writer& w)
{
    // Linux's layout (net/core/net-procfs.c), the counts Toll keeps.
    w.add("Inter-|   Receive                                                |  Transmit\n");
    w.add(" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
          "errs drop fifo colls carrier compressed\n");
    unsigned n = iface_count();
    for (unsigned i = 0; i < n; ++i) {
        const Attached& a = g_ifaces[i];
        const NetInterface& nif = *a.nif;
        w.add("%6s: %8llu %7llu %4llu %4llu    0     0          0         0 %8llu %7llu    0 "
              "%4llu    0     0       0          0\n",
              nif.name ? nif.name : "?", (unsigned long long)a.rx_bytes,
              (unsigned long long)nif.rx_frames, (unsigned long long)a.rx_errors,
              (unsigned long long)nif.rx_dropped, (unsigned long long)a.tx_bytes,
              (unsigned long long)nif.tx_frames,
              (unsigned long long)(nif.tx_dropped + a.tx_discards));
    }
}

void write_arp(Writer& w)
{
    // Linux's layout (net/ipv4/arp.c): flags 0x2 is ATF_COM, resolved.
    w.add("IP address       HW type     Flags       HW address            Mask     Device\n");
    SpinGuard g(g_arp_lock);
    for (const Neighbour& n : g_neighbours) {
        if (!n.nif)
            continue;
        char ip[16];
        lib::snformat(ip, sizeof ip, "%u.%u.%u.%u", n.address >> 24, n.address >> 16 & 0xFF,
                      n.address >> 8 & 0xFF, n.address & 0xFF);
        const uint8_t* m = n.mac.bytes;
        w.add("%-16s 0x1         0x%x         %02x:%02x:%02x:%02x:%02x:%02x     *        %s\n", ip,
              n.resolved ? 2u : 0u, m[0], m[1], m[2], m[3], m[4], m[5],
              n.nif->name ? n.nif->name : "?");
    }
}

} // namespace

// --- Checksums -------------------------------------------------------------

uint32_t checksum_add(uint32_t sum, const uint8_t* data, size_t length)
{
    // RFC 1071: the one's-complement sum of 16-bit words, carries folded in
    // at the end (a 32-bit accumulator holds 65535 words' carries).
    uint64_t wide = sum;
    size_t i = 0;
    for (; i + 1 < length; i += 2)
        wide += uint32_t(data[i]) << 8 | data[i + 1];
    if (i < length)
        wide += uint32_t(data[i]) << 8;
    while (wide >> 32)
        wide = (wide & 0xFFFFFFFF) + (wide >> 32);
    return static_cast<uint32_t>(wide);
}

uint16_t checksum_finish(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

uint32_t pseudo_header_sum(uint32_t source, uint32_t destination, uint8_t protocol, size_t length)
{
    return (source >> 16) + (source & 0xFFFF) + (destination >> 16) + (destination & 0xFFFF) +
           protocol + static_cast<uint32_t>(length);
}

// --- Interfaces and routes ---------------------------------------------------

void net_register(NetInterface& nif)
{
    ensure_started();
    bool added;
    {
        SpinGuard g(g_ifaces_lock);
        bool first = true;
        for (unsigned i = 0; i < g_iface_count; ++i)
            first = first && g_ifaces[i].loopback;
        if (first && nif.ipv4 == 0) {
            nif.ipv4 = k_static_address;
            nif.netmask = k_static_netmask;
        }
        added = attach_locked(nif, false);
        if (added && first)
            g_ifaces[g_iface_count - 1].gateway = k_static_gateway;
    }
    if (!added) {
        kprintf("net: no room for interface %s\n", nif.name ? nif.name : "?");
        return;
    }
    uint32_t a = nif.ipv4;
    kprintf("net: %s %u.%u.%u.%u mac %02x:%02x:%02x:%02x:%02x:%02x\n", nif.name ? nif.name : "?",
            a >> 24, a >> 16 & 0xFF, a >> 8 & 0xFF, a & 0xFF, nif.mac.bytes[0], nif.mac.bytes[1],
            nif.mac.bytes[2], nif.mac.bytes[3], nif.mac.bytes[4], nif.mac.bytes[5]);
}

void net_receive(NetInterface& nif, const uint8_t* frame, size_t length)
{
    Attached* a = attached_of(nif);
    if (!a)
        return; // not registered: nothing to deliver to
    a->rx_bytes += length;
    if (length < k_ethernet_header || length > k_max_frame) {
        ++a->rx_errors;
        g_ether_in_errors.add();
        return;
    }
    uint16_t type = load16(frame + 12);
    if (type == k_ethertype_ipv4)
        ip_input(*a, frame + k_ethernet_header, length - k_ethernet_header);
    else if (type == k_ethertype_arp && !a->loopback)
        arp_input(nif, frame + k_ethernet_header, length - k_ethernet_header);
    else
        g_ether_unknown_types.add();
}

NetInterface& loopback_interface()
{
    ensure_started();
    return g_loopback;
}

bool address_is_local(uint32_t address)
{
    if ((address & k_loopback_mask) == k_loopback_net)
        return true;
    unsigned n = iface_count();
    for (unsigned i = 0; i < n; ++i)
        if (g_ifaces[i].nif->ipv4 && g_ifaces[i].nif->ipv4 == address)
            return true;
    return false;
}

bool address_is_broadcast(uint32_t address)
{
    if (address == k_broadcast)
        return true;
    unsigned n = iface_count();
    for (unsigned i = 0; i < n; ++i) {
        const NetInterface& nif = *g_ifaces[i].nif;
        if (!g_ifaces[i].loopback && nif.ipv4 && nif.netmask != k_broadcast &&
            address == ((nif.ipv4 & nif.netmask) | ~nif.netmask))
            return true;
    }
    return false;
}

Errno route_lookup(uint32_t destination, Route* route)
{
    ensure_started();
    if (address_is_local(destination)) {
        // Linux's rule: a datagram to one of our own addresses goes through
        // the loopback interface, from that address.
        route->nif = g_ifaces[0].nif;
        route->loopback = true;
        route->broadcast = false;
        route->next_hop = destination;
        route->source =
            (destination & k_loopback_mask) == k_loopback_net ? k_loopback_address : destination;
        return k_ok;
    }
    Attached* a = default_iface();
    if (!a) {
        g_ip_out_no_routes.add();
        return k_enetunreach;
    }
    NetInterface& nif = *a->nif;
    route->nif = &nif;
    route->loopback = false;
    route->source = nif.ipv4;
    route->broadcast = address_is_broadcast(destination);
    if (route->broadcast || (destination & nif.netmask) == (nif.ipv4 & nif.netmask)) {
        route->next_hop = destination;
    } else if (a->gateway) {
        route->next_hop = a->gateway;
    } else {
        g_ip_out_no_routes.add();
        return k_enetunreach;
    }
    return k_ok;
}

Errno ip_output(Frame& frame, size_t length, uint8_t protocol, uint32_t source,
                uint32_t destination, const Route& route, uint8_t ttl)
{
    size_t total = k_ip_header + length;
    if (total > k_ethernet_mtu)
        return k_emsgsize;
    uint8_t* ip = frame.bytes + k_ip_at;
    ip[0] = 0x45; // version 4, five words of header
    ip[1] = 0;    // type of service
    store16(ip + 2, static_cast<uint16_t>(total));
    store16(ip + 4, __atomic_fetch_add(&g_ip_id, 1, __ATOMIC_RELAXED));
    store16(ip + 6, k_ip_df); // Toll never fragments
    ip[8] = ttl;
    ip[9] = protocol;
    store16(ip + 10, 0);
    store32(ip + 12, source);
    store32(ip + 16, destination);
    store16(ip + 10, checksum_finish(checksum_add(0, ip, k_ip_header)));
    NetInterface& nif = *route.nif;
    memcpy(frame.bytes + 6, nif.mac.bytes, 6);
    store16(frame.bytes + 12, k_ethertype_ipv4);
    g_ip_out_requests.add();
    size_t frame_length = k_ethernet_header + total;
    if (route.loopback) {
        memset(frame.bytes, 0, 6);
        return transmit(nif, frame.bytes, frame_length);
    }
    if (frame_length < k_ethernet_min_frame) {
        memset(frame.bytes + frame_length, 0, k_ethernet_min_frame - frame_length);
        frame_length = k_ethernet_min_frame;
    }
    if (route.broadcast) {
        memset(frame.bytes, 0xFF, 6);
        return transmit(nif, frame.bytes, frame_length);
    }
    return arp_output(nif, route.next_hop, frame.bytes, frame_length);
}

void icmp_send_unreachable(const uint8_t* ip, size_t length, uint8_t code)
{
    size_t header = size_t(ip[0] & 0xF) * 4;
    uint32_t source = load32(ip + 12), destination = load32(ip + 16);
    // RFC 1122, 3.2.2: never about an ICMP error, a broadcast or a datagram
    // from a broadcast or unspecified source.
    if (ip[9] == k_proto_icmp && length > header && ip[header] != k_icmp_echo &&
        ip[header] != k_icmp_echo_reply)
        return;
    if (address_is_broadcast(destination) || address_is_broadcast(source) || source == 0)
        return;
    Route route;
    if (route_lookup(source, &route) != k_ok) {
        g_icmp_out_errors.add();
        return;
    }
    // The message carries the datagram's header and its first 8 bytes.
    size_t quoted = header + 8 < length ? header + 8 : length;
    Frame frame;
    uint8_t* icmp = frame.bytes + k_transport_at;
    memset(icmp, 0, k_icmp_header);
    icmp[0] = k_icmp_unreachable;
    icmp[1] = code;
    memcpy(icmp + k_icmp_header, ip, quoted);
    store16(icmp + 2, checksum_finish(checksum_add(0, icmp, k_icmp_header + quoted)));
    g_icmp_out_msgs.add();
    g_icmp_out_dest_unreachs.add();
    uint32_t from = address_is_local(destination) ? destination : route.source;
    if (ip_output(frame, k_icmp_header + quoted, k_proto_icmp, from, source, route,
                  k_default_ttl) != k_ok)
        g_icmp_out_errors.add();
}

} // namespace toll::net

namespace toll::sys {

size_t net_proc_text(NetProcFile file, char* out, size_t capacity)
{
    net::Writer w{out, capacity};
    if (file == NetProcFile::snmp)
        net::write_snmp(w);
    else if (file == NetProcFile::dev)
        net::write_dev(w);
    else
        net::write_arp(w);
    return w.used;
}

} // namespace toll::sys
