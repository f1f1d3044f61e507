/* udp_echo HOST PORT: sends UDP datagrams to an echo server (tools/netpeer
 * --echo on the host, 10.0.2.2 from a guest on QEMU's user network) through
 * a socket and checks that each comes back whole: the seed's netblast
 * payload of 5 bytes, an empty one, and the largest that fits one Ethernet
 * frame (1472 bytes). A lost datagram is sent again, a few times, since UDP
 * promises nothing. Exits 0 when every size came back. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { ATTEMPTS = 5, WAIT_MS = 2000, LARGEST = 1472 };

static int check(int fd, const struct sockaddr_in* to, size_t size)
{
    static unsigned char out[LARGEST], in[LARGEST + 1];
    for (size_t i = 0; i < size; ++i)
        out[i] = (unsigned char)(i * 13 + size);
    for (int attempt = 0; attempt < ATTEMPTS; ++attempt) {
        ssize_t n = sendto(fd, out, size, 0, (const struct sockaddr*)to, sizeof *to);
        if (n != (ssize_t)size) {
            printf("udp_echo: sendto of %zu bytes: %zd (%s)\n", size, n, strerror(errno));
            return 1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, WAIT_MS);
        if (ready < 0) {
            printf("udp_echo: poll: %s\n", strerror(errno));
            return 1;
        }
        if (ready == 0)
            continue; /* lost: again */
        struct sockaddr_in from;
        socklen_t from_len = sizeof from;
        n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr*)&from, &from_len);
        if (n < 0) {
            printf("udp_echo: recvfrom: %s\n", strerror(errno));
            return 1;
        }
        if (from.sin_addr.s_addr != to->sin_addr.s_addr || from.sin_port != to->sin_port) {
            printf("udp_echo: a datagram from %s:%u, not the echo server\n",
                   inet_ntoa(from.sin_addr), ntohs(from.sin_port));
            return 1;
        }
        if ((size_t)n != size || memcmp(in, out, size) != 0) {
            printf("udp_echo: sent %zu bytes, %zd came back %s\n", size, n,
                   (size_t)n == size ? "changed" : "");
            return 1;
        }
        printf("udp_echo: %zu bytes echoed by %s:%u\n", size, inet_ntoa(from.sin_addr),
               ntohs(from.sin_port));
        return 0;
    }
    printf("udp_echo: no echo of %zu bytes after %d attempts\n", size, ATTEMPTS);
    return 1;
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        printf("usage: udp_echo HOST PORT\n");
        return 2;
    }
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
        printf("udp_echo: %s is not an IPv4 address\n", argv[1]);
        return 2;
    }
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        printf("udp_echo: socket: %s\n", strerror(errno));
        return 1;
    }
    static const size_t sizes[] = {5, 0, LARGEST};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (check(fd, &to, sizes[i]) != 0)
            return 1;
    close(fd);
    printf("udp_echo: every datagram came back\n");
    return 0;
}
