// The network lab (labs/lab-net): the UDP header of a datagram on its way
// out, which socket_send (socket.cpp) calls for every datagram it sends.
#include "kernel/net/net.h"

namespace toll::net {

void udp_header_write(uint8_t* udp, uint16_t source_port, uint16_t destination_port,
                      uint32_t source, uint32_t destination, size_t payload_length)
{
    // LAB net BEGIN: fill the 8-byte header in front of the payload (RFC 768): ports, length, then the checksum over the pseudo-header, header and payload (0 goes out as 0xFFFF)
    size_t length = k_udp_header + payload_length;
    store16(udp, source_port);
    store16(udp + 2, destination_port);
    store16(udp + 4, static_cast<uint16_t>(length));
    store16(udp + 6, 0);
    uint32_t sum = pseudo_header_sum(source, destination, k_proto_udp, length);
    uint16_t checksum = checksum_finish(checksum_add(sum, udp, length));
    // All ones and zero are the same number in one's complement; zero in
    // the field would say "no checksum", so a sum of zero goes out as all ones.
    store16(udp + 6, checksum ? checksum : 0xFFFF);
    // LAB net STUB
    // (void)udp, (void)source_port, (void)destination_port, (void)source, (void)destination;
    // (void)payload_length;
    // LAB net END
}

} // namespace toll::net
