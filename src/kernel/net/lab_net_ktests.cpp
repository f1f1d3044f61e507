// The network lab's checks of udp_header_write (lab_net.cpp): two datagrams
// whose headers were worked out by hand from RFC 768 and RFC 1071, one of
// them chosen so that its checksum comes out as zero and must go out as
// all ones. Each expected header is the arithmetic written below it, not
// the kernel's own checksum code.
#include "kernel/kern/ktest.h"
#include "kernel/net/net.h"
#include "lib/string.h"

namespace toll::net {

KTEST("lab.net.udp_header_rfc768")
{
    // 127.0.0.1:9 -> 127.0.0.1:7, "hello". The one's-complement sum of the
    // pseudo-header (7f00 0001 7f00 0001 0011 000d), the header with a zero
    // checksum (0009 0007 000d 0000) and the data (6865 6c6c 6f00) folds to
    // 4210, whose complement is bdef.
    uint8_t datagram[k_udp_header + 5] = {0, 0, 0, 0, 0, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'};
    memset(datagram, 0xA5, k_udp_header); // whatever was on the stack before
    udp_header_write(datagram, 9, 7, k_loopback_address, k_loopback_address, 5);
    const uint8_t expected[k_udp_header] = {0x00, 0x09, 0x00, 0x07, 0x00, 0x0d, 0xbd, 0xef};
    for (size_t i = 0; i < k_udp_header; ++i)
        KEXPECT_EQ(datagram[i], expected[i]);
    KEXPECT(memcmp(datagram + k_udp_header, "hello", 5) == 0); // the payload untouched
}

KTEST("lab.net.udp_header_zero_sum_goes_out_as_ones")
{
    // The same ports, two bytes 01 c8: the sum folds to ffff, the complement
    // is 0000, which would say "no checksum"; RFC 768 sends ffff instead.
    uint8_t datagram[k_udp_header + 2] = {0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xc8};
    udp_header_write(datagram, 9, 7, k_loopback_address, k_loopback_address, 2);
    KEXPECT_EQ(datagram[4], 0x00);
    KEXPECT_EQ(datagram[5], 0x0a);
    KEXPECT_EQ(datagram[6], 0xff);
    KEXPECT_EQ(datagram[7], 0xff);
}

} // namespace toll::net
