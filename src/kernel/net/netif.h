// The boundary between the network stack (kernel/net/) and the drivers
// that move Ethernet frames (the loopback interface, kernel/dev/'s e1000).
// A driver fills in a NetInterface and registers it; the stack hands it
// frames to send and the driver hands received frames up, one call each.
// Locking: a driver serialises its own rings; net_receive may be called
// from the driver's interrupt handler and must not sleep.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace toll::net {

/// An Ethernet hardware address.
struct MacAddress {
    uint8_t bytes[6];
};

/// The largest Ethernet payload (IEEE 802.3 without jumbo frames).
inline constexpr size_t k_ethernet_mtu = 1500;
/// Destination, source and EtherType in front of the payload (802.3).
inline constexpr size_t k_ethernet_header = 14;
/// The largest frame a driver is asked to send, without the FCS.
inline constexpr size_t k_max_frame = k_ethernet_mtu + k_ethernet_header;

/// One network interface, owned by its driver.
struct NetInterface {
    /// Short name for the console and /proc/net/dev: "lo", "eth0".
    const char* name = nullptr;
    MacAddress mac{};
    /// IPv4 address and netmask in host byte order; 0 until configured.
    uint32_t ipv4 = 0;
    uint32_t netmask = 0;
    /// Queues one frame (Ethernet header included, no FCS) for sending.
    /// Returns false when the transmit ring is full: the stack counts a drop.
    /// The driver copies the frame before returning; `frame` is the caller's.
    bool (*transmit)(NetInterface& self, const uint8_t* frame, size_t len) = nullptr;
    /// Driver-private state.
    void* driver = nullptr;
    /// Counters the driver keeps (the stack reads them for /proc/net/dev).
    uint64_t tx_frames = 0, tx_dropped = 0, rx_frames = 0, rx_dropped = 0;
};

/// Makes an interface known to the stack; the first non-loopback one is
/// the default route. Called once per interface at boot.
void net_register(NetInterface& nif);

/// Hands one received frame (Ethernet header included, FCS stripped) to
/// the stack, which copies what it keeps before returning.
void net_receive(NetInterface& nif, const uint8_t* frame, size_t len);

} // namespace toll::net
