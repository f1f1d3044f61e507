/* netblast: UDP tinygrams as fast as one thread can send them, after
 * FreeBSD's tools/tools/netrate/netblast: a connected datagram socket and
 * send() in a loop, for a number of seconds. It prints what went out and
 * what was dropped, in thousands of packets per second:
 *
 *   netblast: 537 kpps sent, 0 kpps dropped
 *
 * "sent" counts the send() calls that succeeded; "dropped" those that
 * failed (ENOBUFS: the interface's queue was full, the seed's "the
 * hardware dropped the rest"). To a loopback address netblast holds the
 * port itself with a socket it never reads, so that every datagram travels
 * the whole way up and the kernel has no ICMP to answer; the second line
 * says how many of them that socket had no room for (the growth of
 * RcvbufErrors in /proc/net/snmp).
 *
 * Usage: netblast [-n datagrams] <host> <port> <payload bytes> <seconds>
 * With -n it sends exactly that many and ignores the seconds (the
 * deterministic runs of tools/bench, where a second is 10^9 instructions);
 * either way it also prints METRIC records: instructions per datagram
 * and, on Toll, the kernel's events per 1000 datagrams. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

enum { k_max_payload = 65507, k_clock_every = 256 };

static char g_payload[k_max_payload];

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Udp RcvbufErrors from /proc/net/snmp, or 0 when there is none. */
static unsigned long long rcvbuf_errors(void)
{
    char text[4096];
    int fd = open("/proc/net/snmp", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char* names = strstr(text, "\nUdp: ");
    char* values = names ? strstr(names + 1, "\nUdp: ") : NULL;
    if (!values)
        return 0;
    /* Count which field RcvbufErrors is, then read that field of values. */
    int index = 0;
    char* p = names + 6;
    char* end = strchr(p, '\n');
    while (p < end && strncmp(p, "RcvbufErrors", 12) != 0) {
        p = strchr(p, ' ');
        if (!p || p > end)
            return 0;
        ++p;
        ++index;
    }
    p = values + 6;
    for (int i = 0; i < index && p; ++i) {
        p = strchr(p, ' ');
        if (p)
            ++p;
    }
    return p ? strtoull(p, NULL, 10) : 0;
}

/* Linux starts with the loopback interface down (an initramfs brings up
 * nothing): bring it up, as `ip link set lo up` would. Toll's is up, and it
 * answers these requests ENOTTY, which is ignored. */
static void loopback_up(int s)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
        ifr.ifr_flags |= IFF_UP;
        (void)ioctl(s, SIOCSIFFLAGS, &ifr);
    }
}

/* True when /proc/net/arp (Linux's and Toll's) lists a resolved neighbour
 * (flags 0x2); false when it lists none or cannot be read. */
static int neighbour_resolved(void)
{
    char text[2048];
    int fd = open("/proc/net/arp", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    return strstr(text, " 0x2 ") != NULL;
}

/* Waits until the next hop's Ethernet address is known, sending one more
 * datagram now and then (each may be the one ARP holds): in deterministic
 * mode a guest sleep passes no host time, and the emulator's network
 * answers in host time, so this polls rather than sleeps, for a bounded
 * number of rounds. */
static void wait_for_neighbour(int s, const char* payload, uint64_t size)
{
    enum { k_rounds = 20000 };
    for (int i = 0; i < k_rounds && !neighbour_resolved(); ++i) {
        if (i % 1000 == 0)
            (void)!send(s, payload, size, 0);
        struct timespec pause = {0, 100 * 1000};
        nanosleep(&pause, NULL);
    }
    if (!neighbour_resolved())
        fprintf(stderr, "netblast: the next hop's address is still unknown; measuring anyway\n");
}

int main(int argc, char** argv)
{
    uint64_t count = 0;
    int first = bench_iterations(argc, argv, 0, &count);
    if (argc - first != 4)
        bench_fail("usage: netblast [-n datagrams] <host> <port> <payload bytes> <seconds>");
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    if (inet_pton(AF_INET, argv[first], &to.sin_addr) != 1)
        bench_fail("%s is not an IPv4 address", argv[first]);
    uint64_t port = bench_number(argv[first + 1], "port");
    uint64_t size = bench_number(argv[first + 2], "payload size");
    uint64_t seconds = bench_number(argv[first + 3], "seconds");
    if (port == 0 || port > 65535 || size > k_max_payload || (!count && !seconds))
        bench_fail("port 1..65535, payload up to %d bytes, seconds or -n above 0", k_max_payload);
    to.sin_port = htons((unsigned short)port);
    bench_init("netblast");

    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0)
        bench_fail("socket: %s", strerror(errno));
    int loopback = (ntohl(to.sin_addr.s_addr) >> 24) == 127;
    if (loopback) {
        loopback_up(s);
        int sink = socket(AF_INET, SOCK_DGRAM, 0);
        if (sink < 0 || bind(sink, (struct sockaddr*)&to, sizeof to) != 0)
            fprintf(stderr, "netblast: port %llu is held elsewhere; not sinking it\n",
                    (unsigned long long)port);
    }
    if (connect(s, (struct sockaddr*)&to, sizeof to) != 0)
        bench_fail("connect %s:%llu: %s", argv[first], (unsigned long long)port, strerror(errno));
    /* Warm up: the first send binds the port and faults in what it needs;
     * to another host it also asks for the next hop's Ethernet address, so
     * give the answer a moment before the clock starts. */
    (void)!send(s, g_payload, size, 0);
    if (!loopback)
        wait_for_neighbour(s, g_payload, size);

    unsigned long long drops_before = rcvbuf_errors();
    uint64_t sent = 0, failed = 0, last_errno = 0;
    struct BenchSpan span;
    double start = now_seconds(), stop = start + (double)seconds, end = start;
    bench_begin(&span);
    for (uint64_t i = 0; count ? i < count : 1; ++i) {
        if (send(s, g_payload, size, 0) == (ssize_t)size) {
            ++sent;
        } else {
            ++failed;
            last_errno = (uint64_t)errno;
        }
        if (!count && i % k_clock_every == 0 && (end = now_seconds()) >= stop)
            break;
    }
    bench_end(&span);
    end = now_seconds();
    unsigned long long dropped_up = rcvbuf_errors() - drops_before;
    double elapsed = end - start;
    uint64_t datagrams = sent + failed;
    double kpps_sent = 0, kpps_dropped = 0;
    if (elapsed > 0) {
        kpps_sent = (double)sent / elapsed / 1000.0;
        kpps_dropped = (double)failed / elapsed / 1000.0;
        printf("netblast: %.0f kpps sent, %.0f kpps dropped\n", kpps_sent, kpps_dropped);
    } else {
        printf("netblast: too short for the clock to time; no rates\n");
    }
    printf("netblast: %llu sent, %llu failed (last errno %llu), %llu dropped by the receiver, "
           "%.3f s\n",
           (unsigned long long)sent, (unsigned long long)failed, (unsigned long long)last_errno,
           dropped_up, elapsed);
    char name[64];
    snprintf(name, sizeof name, "netblast.%s.%llu", loopback ? "loopback" : "remote",
             (unsigned long long)size);
    bench_report(name, &span, datagrams);
    if (elapsed > 0) {
        char metric[96];
        snprintf(metric, sizeof metric, "%s.kpps_sent", name);
        bench_metric(metric, (long long)(kpps_sent + 0.5), "kpps");
        snprintf(metric, sizeof metric, "%s.kpps_dropped", name);
        bench_metric(metric, (long long)(kpps_dropped + 0.5), "kpps");
    }
    return 0;
}
