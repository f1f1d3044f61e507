/* ut_net: UDP sockets over the loopback interface, the way Linux answers.
 * Datagrams arrive whole and in order with their sender's address; every
 * bad argument gets Linux's errno; a receive waits until a datagram comes
 * and poll says when one is there; a flood past SO_RCVBUF is dropped and
 * counted in /proc/net/snmp; a connected socket hears ECONNREFUSED from a
 * closed port; ICMP echo to 127.0.0.1 is answered; and nothing leaks: the
 * sockets and the queued datagrams are gone after close. The same binary
 * passes on Linux. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_port = 5001,      /* the seed's netblast port */
    k_delay_ms = 100,   /* how long a child waits before it sends */
    k_min_blocked = 50, /* a receive that returned sooner did not wait */
    k_flood = 2000,     /* datagrams in the flood: far past a small buffer */
};

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static int udp_bound(int port)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = loopback(port);
    if (s >= 0 && bind(s, (struct sockaddr*)&a, sizeof a) != 0) {
        close(s);
        return -1;
    }
    return s;
}

/* A field of /proc/net/snmp: @group ("Udp") and @name ("RcvbufErrors"),
 * found by the header line's names; -1 when missing. */
static long long snmp(const char* group, const char* name)
{
    char text[4096];
    int fd = open("/proc/net/snmp", O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    size_t glen = strlen(group);
    for (char* line = text; line && *line;) {
        char* next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strncmp(line, group, glen) == 0 && line[glen] == ':' && next) {
            /* line: the names; next: the values */
            char* values = next;
            char* vend = strchr(values, '\n');
            if (vend)
                *vend = '\0';
            char *np, *vp;
            char* nt = strtok_r(line + glen + 1, " ", &np);
            char* vt = strtok_r(values + glen + 1, " ", &vp);
            while (nt && vt) {
                if (strcmp(nt, name) == 0)
                    return atoll(vt);
                nt = strtok_r(NULL, " ", &np);
                vt = strtok_r(NULL, " ", &vp);
            }
            return -1;
        }
        line = next;
    }
    return -1;
}

static void test_round_trip(void)
{
    int r = udp_bound(k_port);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (!CHECK(r >= 0) || !CHECK(s >= 0))
        return;
    struct sockaddr_in to = loopback(k_port);
    CHECK_EQ(sendto(s, "hello", 5, 0, (struct sockaddr*)&to, sizeof to), 5);
    CHECK_EQ(sendto(s, "", 0, 0, (struct sockaddr*)&to, sizeof to), 0);
    CHECK_EQ(sendto(s, "second", 6, 0, (struct sockaddr*)&to, sizeof to), 6);
    /* The sender was bound to an ephemeral port by its first send. */
    struct sockaddr_in me;
    socklen_t len = sizeof me;
    CHECK_EQ(getsockname(s, (struct sockaddr*)&me, &len), 0);
    CHECK_EQ(len, sizeof me);
    CHECK(ntohs(me.sin_port) >= 1024);
    char buf[64];
    struct sockaddr_in from;
    len = sizeof from;
    memset(&from, 0, sizeof from);
    CHECK_EQ(recvfrom(r, buf, sizeof buf, 0, (struct sockaddr*)&from, &len), 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    CHECK_EQ(from.sin_family, AF_INET);
    CHECK_EQ(from.sin_port, me.sin_port);
    CHECK_EQ(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
    CHECK_EQ(recv(r, buf, sizeof buf, 0), 0); /* the empty datagram, in order */
    /* MSG_PEEK leaves it; a short buffer cuts it, MSG_TRUNC says how long. */
    CHECK_EQ(recv(r, buf, 3, MSG_PEEK), 3);
    CHECK_EQ(recv(r, buf, 3, MSG_TRUNC), 6);
    CHECK(memcmp(buf, "sec", 3) == 0);
    /* The rest of a cut datagram is gone: the queue is empty now. */
    CHECK_ERR(recv(r, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
    close(s);
    close(r);
}

static void test_msg_vectors(void)
{
    int r = udp_bound(k_port);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = loopback(k_port);
    if (!CHECK(r >= 0) || !CHECK_EQ(connect(s, (struct sockaddr*)&to, sizeof to), 0))
        return;
    struct iovec out[3] = {{"ab", 2}, {"", 0}, {"cdefg", 5}};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = out;
    m.msg_iovlen = 3;
    CHECK_EQ(sendmsg(s, &m, 0), 7);
    char a[3], b[10];
    struct iovec in[2] = {{a, sizeof a}, {b, 2}};
    struct sockaddr_in from;
    memset(&m, 0, sizeof m);
    m.msg_name = &from;
    m.msg_namelen = sizeof from;
    m.msg_iov = in;
    m.msg_iovlen = 2;
    CHECK_EQ(recvmsg(r, &m, 0), 5);
    CHECK(memcmp(a, "abc", 3) == 0 && memcmp(b, "de", 2) == 0);
    CHECK(m.msg_flags & MSG_TRUNC);
    CHECK_EQ(m.msg_namelen, sizeof from);
    struct sockaddr_in peer;
    socklen_t len = sizeof peer;
    CHECK_EQ(getpeername(s, (struct sockaddr*)&peer, &len), 0);
    CHECK_EQ(ntohs(peer.sin_port), k_port);
    /* write and read work on a connected socket */
    CHECK_EQ(write(s, "xyz", 3), 3);
    CHECK_EQ(read(r, b, sizeof b), 3);
    /* More iovecs than UIO_MAXIOV: EMSGSIZE. */
    memset(&m, 0, sizeof m);
    m.msg_iov = out;
    m.msg_iovlen = 1025;
    CHECK_ERR(sendmsg(s, &m, 0), EMSGSIZE);
    close(s);
    close(r);
}

static void test_bad_arguments(void)
{
    CHECK_ERR(socket(AF_INET6 + 100, SOCK_DGRAM, 0), EAFNOSUPPORT);
    CHECK_ERR(socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP), EPROTONOSUPPORT);
    CHECK_ERR(socket(AF_INET, 77, 0), EINVAL);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (!CHECK(s >= 0))
        return;
    CHECK(fcntl(s, F_GETFD) & FD_CLOEXEC);
    CHECK(fcntl(s, F_GETFL) & O_NONBLOCK);
    struct sockaddr_in a = loopback(k_port);
    char buf[16];
    CHECK_ERR(bind(s, (struct sockaddr*)&a, 3), EINVAL);
    CHECK_ERR(bind(s, (struct sockaddr*)1, sizeof a), EFAULT);
    struct sockaddr_in other = a;
    other.sin_family = 99;
    CHECK_ERR(bind(s, (struct sockaddr*)&other, sizeof other), EAFNOSUPPORT);
    other = a;
    other.sin_addr.s_addr = inet_addr("192.0.2.1"); /* TEST-NET-1: not ours */
    CHECK_ERR(bind(s, (struct sockaddr*)&other, sizeof other), EADDRNOTAVAIL);
    CHECK_ERR(send(s, "x", 1, 0), EDESTADDRREQ);
    CHECK_ERR(sendto(s, (void*)1, 4, 0, (struct sockaddr*)&a, sizeof a), EFAULT);
    CHECK_ERR(sendto(s, "x", 1, 0, (struct sockaddr*)&a, 2), EINVAL);
    CHECK_ERR(sendto(s, "x", 1, MSG_OOB, (struct sockaddr*)&a, sizeof a), EOPNOTSUPP);
    static char big[70000];
    CHECK_ERR(sendto(s, big, sizeof big, 0, (struct sockaddr*)&a, sizeof a), EMSGSIZE);
    CHECK_ERR(recv(s, buf, sizeof buf, 0), EAGAIN); /* non-blocking, nothing there */
    CHECK_ERR(getpeername(s, (struct sockaddr*)&a, &(socklen_t){sizeof a}), ENOTCONN);
    socklen_t bad = (socklen_t)-1;
    CHECK_ERR(getsockname(s, (struct sockaddr*)&a, &bad), EINVAL);
    CHECK_ERR(getsockname(s, (struct sockaddr*)&a, (socklen_t*)1), EFAULT);
    int one = 1;
    CHECK_ERR(setsockopt(s, SOL_SOCKET, 12345, &one, sizeof one), ENOPROTOOPT);
    CHECK_ERR(setsockopt(s, 4242, 1, &one, sizeof one), ENOPROTOOPT);
    CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &one, 1), EINVAL);
    CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_RCVBUF, (void*)1, sizeof one), EFAULT);
    int v = 0;
    socklen_t vl = sizeof v;
    CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &vl), 0);
    CHECK_EQ(v, SOCK_DGRAM);
    /* Linux doubles SO_RCVBUF and reports the doubled size. */
    int want = 8192;
    CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &want, sizeof want), 0);
    vl = sizeof v;
    CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &vl), 0);
    CHECK_EQ(v, 2 * want);
    CHECK_ERR(shutdown(s, 7), EINVAL);
    CHECK_ERR(listen(s, 1), EOPNOTSUPP);
    /* A file is not a socket; a closed descriptor is not a file. */
    int fd = open("/proc/net/snmp", O_RDONLY);
    CHECK_ERR(bind(fd, (struct sockaddr*)&a, sizeof a), ENOTSOCK);
    CHECK_ERR(sendto(fd, "x", 1, 0, (struct sockaddr*)&a, sizeof a), ENOTSOCK);
    close(fd);
    CHECK_ERR(connect(999, (struct sockaddr*)&a, sizeof a), EBADF);
    close(s);
}

static void test_ports(void)
{
    int a = udp_bound(k_port + 1);
    CHECK(a >= 0);
    CHECK_ERR(udp_bound(k_port + 1), EADDRINUSE);
    /* With SO_REUSEADDR on both, two sockets share a port. */
    int one = 1;
    int b = socket(AF_INET, SOCK_DGRAM, 0), c = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in p = loopback(k_port + 2);
    setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    CHECK_EQ(bind(b, (struct sockaddr*)&p, sizeof p), 0);
    CHECK_EQ(bind(c, (struct sockaddr*)&p, sizeof p), 0);
    CHECK_ERR(bind(c, (struct sockaddr*)&p, sizeof p), EINVAL); /* bound already */
    close(a);
    close(b);
    close(c);
    /* Closing frees the port. */
    a = udp_bound(k_port + 1);
    CHECK(a >= 0);
    close(a);
}

static void test_blocking_and_poll(void)
{
    int r = udp_bound(k_port);
    if (!CHECK(r >= 0))
        return;
    struct pollfd p = {r, POLLIN, 0};
    CHECK_EQ(poll(&p, 1, 0), 0); /* nothing queued: not readable */
    CHECK_EQ(p.revents, 0);
    long long before = now_ms();
    CHECK_EQ(poll(&p, 1, 120), 0); /* the timeout passes */
    CHECK(now_ms() - before >= 100);
    pid_t pid = fork();
    if (pid == 0) {
        sleep_ms(k_delay_ms);
        int s = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in to = loopback(k_port);
        sendto(s, "late", 4, 0, (struct sockaddr*)&to, sizeof to);
        sleep_ms(k_delay_ms);
        sendto(s, "later", 5, 0, (struct sockaddr*)&to, sizeof to);
        _exit(0);
    }
    before = now_ms();
    CHECK_EQ(poll(&p, 1, 5000), 1); /* woken by the datagram */
    CHECK(p.revents & POLLIN);
    CHECK(now_ms() - before >= k_min_blocked);
    int queued = 0;
    CHECK_EQ(ioctl(r, FIONREAD, &queued), 0);
    CHECK_EQ(queued, 4);
    char buf[16];
    CHECK_EQ(recv(r, buf, sizeof buf, 0), 4);
    before = now_ms();
    CHECK_EQ(recv(r, buf, sizeof buf, 0), 5); /* blocks until the second */
    CHECK(now_ms() - before >= k_min_blocked);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    /* select sees the same readiness, and a pipe's too. */
    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(r, &rd);
    FD_SET(fds[0], &rd);
    struct timeval tv = {0, 0};
    CHECK_EQ(select(fds[0] > r ? fds[0] + 1 : r + 1, &rd, NULL, NULL, &tv), 0);
    CHECK_EQ(write(fds[1], "p", 1), 1);
    FD_ZERO(&rd);
    FD_SET(r, &rd);
    FD_SET(fds[0], &rd);
    tv.tv_usec = 0;
    CHECK_EQ(select(fds[0] > r ? fds[0] + 1 : r + 1, &rd, NULL, NULL, &tv), 1);
    CHECK(FD_ISSET(fds[0], &rd) && !FD_ISSET(r, &rd));
    close(fds[1]);
    struct pollfd pp = {fds[0], POLLIN, 0};
    CHECK_EQ(poll(&pp, 1, 0), 1);
    CHECK(pp.revents & POLLHUP); /* no writer left */
    close(fds[0]);
    /* shutdown(SHUT_RD) makes a waiting-free end of file. */
    shutdown(r, SHUT_RD);
    CHECK_EQ(recv(r, buf, sizeof buf, 0), 0);
    close(r);
}

static void test_refused(void)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = loopback(k_port + 9); /* nobody there */
    if (!CHECK_EQ(connect(s, (struct sockaddr*)&to, sizeof to), 0))
        return;
    long long unreach = snmp("Icmp", "InDestUnreachs");
    CHECK_EQ(send(s, "x", 1, 0), 1);
    /* The port-unreachable answer comes back through the loopback
     * interface before send returns; the next call reports it, once. */
    char buf[4];
    CHECK_ERR(recv(s, buf, sizeof buf, MSG_DONTWAIT), ECONNREFUSED);
    CHECK_ERR(recv(s, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
    CHECK(snmp("Icmp", "InDestUnreachs") > unreach);
    close(s);
}

static void test_flood(void)
{
    int r = udp_bound(k_port);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    int small = 2048;
    CHECK_EQ(setsockopt(r, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    struct sockaddr_in to = loopback(k_port);
    long long drops = snmp("Udp", "RcvbufErrors");
    long long in = snmp("Udp", "InDatagrams");
    if (!CHECK(drops >= 0))
        return;
    int sent = 0;
    for (int i = 0; i < k_flood; ++i)
        sent += sendto(s, "0123456789", 10, 0, (struct sockaddr*)&to, sizeof to) == 10;
    CHECK_EQ(sent, k_flood); /* the sender never sees the receiver's drops */
    int got = 0;
    char buf[16];
    while (recv(r, buf, sizeof buf, MSG_DONTWAIT) == 10)
        ++got;
    long long dropped = snmp("Udp", "RcvbufErrors") - drops;
    NOTE("flood: %d queued, %lld dropped", got, dropped);
    CHECK(got > 0 && got < k_flood);
    CHECK_EQ(got + dropped, k_flood);
    CHECK_EQ(snmp("Udp", "InDatagrams") - in, got);
    close(s);
    close(r);
}

/* ICMP echo to 127.0.0.1 through a raw socket, as ping sends it. */
static void test_ping(void)
{
    int s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
    if (!CHECK(s >= 0))
        return;
    unsigned char echo[16] = {8, 0, 0, 0, 0x12, 0x34, 0, 1, 'p', 'i', 'n', 'g'};
    unsigned sum = 0;
    for (int i = 0; i < 16; i += 2)
        sum += (unsigned)(echo[i] << 8 | echo[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    sum = ~sum & 0xFFFF;
    echo[2] = (unsigned char)(sum >> 8);
    echo[3] = (unsigned char)sum;
    struct sockaddr_in to = loopback(0);
    long long replies = snmp("Icmp", "OutEchoReps");
    CHECK_EQ(sendto(s, echo, sizeof echo, 0, (struct sockaddr*)&to, sizeof to), 16);
    /* The raw socket sees the request and then the reply, IPv4 header first. */
    unsigned char in[128];
    int seen_reply = 0;
    for (int i = 0; i < 4 && !seen_reply; ++i) {
        ssize_t n = recv(s, in, sizeof in, MSG_DONTWAIT);
        if (n < 0)
            break;
        size_t ihl = (size_t)(in[0] & 15) * 4;
        seen_reply = n == (ssize_t)(ihl + 16) && in[ihl] == 0 && memcmp(in + ihl + 4, echo + 4, 12) == 0;
    }
    CHECK_MSG(seen_reply, "the echo reply comes back with the request's id, sequence and data");
    CHECK_EQ(snmp("Icmp", "OutEchoReps"), replies + 1);
    /* A bad checksum is counted, not answered. */
    long long bad = snmp("Icmp", "InCsumErrors");
    echo[2] ^= 0xFF;
    CHECK_EQ(sendto(s, echo, sizeof echo, 0, (struct sockaddr*)&to, sizeof to), 16);
    CHECK_EQ(snmp("Icmp", "InCsumErrors"), bad + 1);
    CHECK_EQ(snmp("Icmp", "OutEchoReps"), replies + 1);
    close(s);
}

/* Bad pointers inside the calls' structures, and i386's socketcall. */
static void test_bad_pointers(void)
{
    int r = udp_bound(k_port);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = loopback(k_port);
    if (!CHECK(r >= 0) || !CHECK_EQ(connect(s, (struct sockaddr*)&to, sizeof to), 0))
        return;
    struct msghdr m;
    memset(&m, 0, sizeof m);
    /* Straight to the kernel: the C library reads a msghdr itself first. */
    CHECK_ERR(syscall(SYS_sendmsg, s, 1, 0), EFAULT);
    m.msg_iov = (struct iovec*)1;
    m.msg_iovlen = 1;
    CHECK_ERR(sendmsg(s, &m, 0), EFAULT);
    struct iovec bad = {(void*)1, 4};
    m.msg_iov = &bad;
    CHECK_ERR(sendmsg(s, &m, 0), EFAULT);
    /* A receive into a bad buffer fails, and the datagram is gone (Linux). */
    CHECK_EQ(send(s, "abcd", 4, 0), 4);
    CHECK_ERR(recv(r, (void*)1, 4, 0), EFAULT);
    CHECK_ERR(recv(r, (char[4]){0}, 4, MSG_DONTWAIT), EAGAIN);
    CHECK_EQ(send(s, "abcd", 4, 0), 4);
    CHECK_ERR(syscall(SYS_recvmsg, r, 1, 0), EFAULT);
    char buf[8];
    CHECK_EQ(recv(r, buf, sizeof buf, 0), 4); /* a bad msghdr took nothing */
#if defined(__i386__)
    /* socketcall(SYS_SOCKET, args): the same call through the multiplexer. */
    long args[3] = {AF_INET, SOCK_DGRAM, 0};
    long fd = syscall(102, 1, args);
    CHECK(fd >= 0);
    if (fd >= 0)
        close((int)fd);
    CHECK_ERR(syscall(102, 1, (void*)1), EFAULT);
    CHECK_ERR(syscall(102, 99, args), EINVAL);
    long sargs[6] = {s, (long)"xy", 2, 0, 0, 0};
    CHECK_EQ(syscall(102, 9, sargs), 2); /* SYS_SEND */
    long rargs[4] = {r, (long)buf, sizeof buf, 0};
    CHECK_EQ(syscall(102, 10, rargs), 2); /* SYS_RECV */
#endif
    close(s);
    close(r);
}

/* Many sockets, each flooded past its buffer, and a raw socket's queue too. */
static void test_flood_everything(void)
{
    enum { k_sockets = 16 };
    int rs[k_sockets];
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    int raw = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
    int opened = 0;
    int small = 2048;
    for (int i = 0; i < k_sockets; ++i) {
        rs[i] = udp_bound(k_port + 10 + i);
        opened += rs[i] >= 0 && setsockopt(rs[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small) == 0;
    }
    CHECK_EQ(opened, k_sockets);
    long long drops = snmp("Udp", "RcvbufErrors");
    for (int round = 0; round < 200; ++round)
        for (int i = 0; i < k_sockets; ++i) {
            struct sockaddr_in to = loopback(k_port + 10 + i);
            sendto(s, "flood", 5, 0, (struct sockaddr*)&to, sizeof to);
        }
    /* Every socket's queue is full, and the rest was counted. */
    int full = 0;
    for (int i = 0; i < k_sockets; ++i) {
        struct pollfd p = {rs[i], POLLIN, 0};
        full += poll(&p, 1, 0) == 1;
    }
    CHECK_EQ(full, k_sockets);
    /* Each took what its buffer holds and no more: count what is queued. */
    long long queued = 0;
    char buf[8];
    for (int i = 0; i < k_sockets; ++i)
        while (recv(rs[i], buf, sizeof buf, MSG_DONTWAIT) == 5)
            ++queued;
    CHECK(queued > 0 && queued < 200 * k_sockets);
    CHECK_EQ(snmp("Udp", "RcvbufErrors") - drops + queued, 200 * k_sockets);
    /* The raw socket saw ICMP for none of those (they all found a socket),
     * and pings past its buffer do not stop the replies being counted. */
    unsigned char echo[8] = {8, 0, 0xf7, 0xff, 0, 0, 0, 0}; /* checksum of 0800 0000 0000 0000 */
    struct sockaddr_in lo = loopback(0);
    long long replies = snmp("Icmp", "OutEchoReps");
    for (int i = 0; i < 2000; ++i)
        sendto(raw, echo, sizeof echo, 0, (struct sockaddr*)&lo, sizeof lo);
    CHECK_EQ(snmp("Icmp", "OutEchoReps") - replies, 2000);
    for (int i = 0; i < k_sockets; ++i)
        close(rs[i]);
    close(s);
    close(raw);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    unsigned long long sockets_before = 0, queued_before = 0, files_before = 0;
    int toll = counter_get("net.sockets.live", &sockets_before) == 0;
    counter_get("net.datagrams.queued", &queued_before);
    counter_get("sys.files.live", &files_before);
    test_round_trip();
    test_msg_vectors();
    test_bad_arguments();
    test_ports();
    test_blocking_and_poll();
    test_refused();
    test_flood();
    test_ping();
    test_bad_pointers();
    test_flood_everything();
    if (toll) {
        /* Every socket closed, every queued datagram freed, every File gone. */
        unsigned long long sockets = 0, queued = 0, files = 0;
        counter_get("net.sockets.live", &sockets);
        counter_get("net.datagrams.queued", &queued);
        counter_get("sys.files.live", &files);
        CHECK_EQ(sockets, sockets_before);
        CHECK_EQ(queued, queued_before);
        CHECK_EQ(files, files_before);
    }
    return utest_done();
}
