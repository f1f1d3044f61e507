// Sockets: AF_INET datagram sockets (UDP) and raw ICMP sockets, as Files,
// with the system calls that make and drive them and i386's socketcall.
//
// A socket is a File whose object is a Socket. Sending copies the payload
// from user memory into a frame on the kernel stack and sends it through
// IPv4 at once (stack.cpp): there is no send queue, so SO_SNDBUF is kept
// and reported but limits nothing, and a full transmit queue is ENOBUFS,
// as on FreeBSD. Receiving takes datagrams off the socket's queue, which
// udp_deliver fills up to SO_RCVBUF bytes (each datagram charged its bytes
// and k_datagram_overhead, as Linux charges an skb's truesize) and past
// that drops, counting RcvbufErrors.
//
// Locks: `net.ports` guards the list of bound sockets and every socket's
// addresses (bind, connect, delivery's look-up); `net.socket`, one per
// socket, its queue, options and pending error. A delivery takes the
// socket's lock under the ports lock, so a socket taken off the list is out
// of every delivery's reach. Sleepers wait for a datagram on &Socket::head
// under the socket's lock.
#include "kernel/kern/placement_new.h"
#include "kernel/kern/spinlock.h"
#include "kernel/net/net.h"
#include "kernel/proc/process.h"
#include "kernel/proc/signal.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/file.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::net {
namespace {

using sys::copyin;
using sys::copyout;
using sys::File;

// Linux's ABI: include/linux/socket.h, include/uapi/linux/in.h,
// include/uapi/asm-generic/socket.h (the same numbers on i386 and arm64).
constexpr int k_af_unspec = 0, k_af_inet = 2;
constexpr int k_sock_stream = 1, k_sock_dgram = 2, k_sock_raw = 3, k_sock_max = 11;
constexpr int k_sock_nonblock = 04000, k_sock_cloexec = 02000000;
constexpr int k_ipproto_ip = 0, k_ipproto_icmp = 1, k_ipproto_udp = 17;
constexpr int k_sol_socket = 1;
constexpr int k_so_reuseaddr = 2, k_so_type = 3, k_so_error = 4, k_so_broadcast = 6,
              k_so_sndbuf = 7, k_so_rcvbuf = 8, k_so_protocol = 38, k_so_domain = 39;
constexpr int k_ip_tos = 1, k_ip_ttl = 2;
constexpr int k_msg_oob = 0x1, k_msg_peek = 0x2, k_msg_trunc = 0x20, k_msg_dontwait = 0x40,
              k_msg_nosignal = 0x4000;
constexpr int k_shut_rd = 0, k_shut_wr = 1, k_shut_rdwr = 2;
// asm-generic/ioctls.h: FIONREAD (SIOCINQ) and FIONBIO.
constexpr unsigned long k_fionread = 0x541B, k_fionbio = 0x5421;
// include/uapi/linux/uio.h: the most iovecs one call takes.
constexpr size_t k_uio_maxiov = 1024;
constexpr int k_s_ifsock = 0140000;

// Linux's defaults: net.core.rmem_default, wmem_default and the largest
// SO_RCVBUF / SO_SNDBUF an unprivileged setsockopt may ask (rmem_max,
// wmem_max), and the floors (SOCK_MIN_RCVBUF, SOCK_MIN_SNDBUF, rounded).
// As Linux, setsockopt doubles what it is given, for the bookkeeping.
constexpr size_t k_default_buffer = 212992, k_max_buffer = 212992;
constexpr size_t k_min_rcvbuf = 2048, k_min_sndbuf = 4096;
// What a queued datagram costs against SO_RCVBUF beyond its payload: Toll's
// stand-in for Linux's skb overhead, so that a buffer holds about as many
// small datagrams as Linux's does.
constexpr size_t k_datagram_overhead = 256;

/// struct sockaddr_in: family, port and address in network byte order.
struct SockaddrIn {
    uint16_t family;
    uint8_t port[2];
    uint8_t address[4];
    uint8_t zero[8];
};
static_assert(sizeof(SockaddrIn) == 16, "Linux's struct sockaddr_in");

/// struct iovec and struct msghdr (user_msghdr): words of the ABI's size.
struct Iovec {
    uintptr_t base;
    size_t length;
};
struct Msghdr {
    uintptr_t name;
    uint32_t name_length;
    uintptr_t iov;
    size_t iov_count;
    uintptr_t control;
    size_t control_length;
    uint32_t flags;
};

NET_COUNTER(g_sockets_made, "net.sockets.made");
TOLL_GAUGE(g_sockets_live, "net.sockets.live");
TOLL_GAUGE(g_datagrams_queued, "net.datagrams.queued");

struct Datagram {
    Datagram* next = nullptr;
    uint32_t address = 0; ///< the sender's
    uint16_t port = 0;
    uint16_t length = 0; ///< payload bytes, which follow the struct
    uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
};

enum class Kind : uint8_t { udp, raw };

struct Socket {
    Spinlock lock{"net.socket"}; ///< guards the queue, options, error, shutdown
    Kind kind = Kind::udp;
    int type = k_sock_dgram, protocol = k_ipproto_udp;
    // Under the ports lock (delivery reads them there):
    uint32_t local_address = 0, remote_address = 0;
    uint16_t local_port = 0, remote_port = 0;
    bool bound = false, connected = false, listed = false;
    bool reuse_address = false;
    Socket* next = nullptr; ///< on g_bound (bound UDP sockets) or g_raw
    // Under the socket's lock:
    bool broadcast = false;
    uint8_t ttl = k_default_ttl, tos = 0;
    uint8_t shut = 0; ///< 1: no more receiving, 2: no more sending
    Errno error = k_ok;
    Datagram* head = nullptr;
    Datagram* tail = nullptr;
    size_t queued = 0; ///< bytes charged against rcvbuf
    size_t rcvbuf = k_default_buffer, sndbuf = k_default_buffer;
    unsigned sleepers = 0;
};

Spinlock g_ports_lock{"net.ports"};
Socket* g_bound; // bound UDP sockets
Socket* g_raw;   // raw ICMP sockets
uint16_t g_next_ephemeral = k_ephemeral_first;

size_t charge(const Datagram* d)
{
    return d->length + k_datagram_overhead;
}

// Puts @p d on @p s's queue if the buffer has room (the socket's lock held);
// false when it is full (the caller frees @p d and counts the drop).
bool enqueue_locked(Socket* s, Datagram* d)
{
    if (s->shut & 1 || s->queued + charge(d) > s->rcvbuf)
        return false;
    if (s->tail)
        s->tail->next = d;
    else
        s->head = d;
    s->tail = d;
    s->queued += charge(d);
    g_datagrams_queued.raise();
    if (s->sleepers)
        proc::wakeup(&s->head);
    return true;
}

Datagram* datagram_new(uint32_t address, uint16_t port, const uint8_t* data, size_t length)
{
    auto* d = static_cast<Datagram*>(vm::kmalloc(sizeof(Datagram) + length));
    if (!d)
        return nullptr;
    new (d) Datagram{};
    d->address = address;
    d->port = port;
    d->length = static_cast<uint16_t>(length);
    memcpy(d->data(), data, length);
    return d;
}

void datagram_free(Datagram* d)
{
    g_datagrams_queued.lower();
    vm::kfree(d);
}

bool port_taken_locked(uint16_t port, uint32_t address, bool reuse, const Socket* self)
{
    for (Socket* o = g_bound; o; o = o->next)
        if (o != self && o->local_port == port &&
            (o->local_address == 0 || address == 0 || o->local_address == address) &&
            !(reuse && o->reuse_address))
            return true;
    return false;
}

// Binds @p s to @p address : @p port (0: an ephemeral port), the ports lock
// held. k_eaddrinuse, or k_eagain when every ephemeral port is taken.
Errno bind_locked(Socket* s, uint32_t address, uint16_t port)
{
    if (s->kind == Kind::raw) {
        s->local_address = address;
        s->bound = true;
        return k_ok;
    }
    if (port == 0) {
        constexpr unsigned k_range = k_ephemeral_last - k_ephemeral_first + 1;
        for (unsigned tries = 0; tries < k_range && !port; ++tries) {
            uint16_t candidate = g_next_ephemeral;
            g_next_ephemeral = candidate == k_ephemeral_last ? k_ephemeral_first : candidate + 1;
            if (!port_taken_locked(candidate, address, false, s))
                port = candidate;
        }
        if (!port)
            return k_eagain; // Linux's answer when the range is used up
    } else if (port_taken_locked(port, address, s->reuse_address, s)) {
        return k_eaddrinuse;
    }
    s->local_address = address;
    s->local_port = port;
    s->bound = true;
    s->next = g_bound;
    g_bound = s;
    s->listed = true;
    return k_ok;
}

void unlist_locked(Socket* s)
{
    if (!s->listed)
        return;
    for (Socket** link = s->kind == Kind::raw ? &g_raw : &g_bound; *link; link = &(*link)->next)
        if (*link == s) {
            *link = s->next;
            break;
        }
    s->listed = false;
}

// --- Addresses in user memory ----------------------------------------------

struct Endpoint {
    uint32_t address = 0;
    uint16_t port = 0;
};

// Reads a struct sockaddr_in of @p length bytes at @p user, as Linux's
// inet checks it: shorter than sockaddr_in is EINVAL, another family
// EAFNOSUPPORT (AF_UNSPEC is left to the caller: *unspec).
Errno endpoint_in(uintptr_t user, uintptr_t length, Endpoint* out, bool* unspec)
{
    if (static_cast<int>(length) < 0)
        return k_einval;
    if (length < sizeof(uint16_t))
        return k_einval;
    SockaddrIn sin{};
    TRY(copyin(&sin, user, length < sizeof sin ? length : sizeof sin));
    *unspec = sin.family == k_af_unspec;
    if (!*unspec && sin.family != k_af_inet)
        return k_eafnosupport;
    if (length < sizeof sin)
        return k_einval;
    out->port = load16(sin.port);
    out->address = load32(sin.address);
    return k_ok;
}

// Writes @p e as a sockaddr_in to @p user, whose room *@p length_user says
// (an int, in and out): the address cut to the room, the full length back.
Errno endpoint_out(uintptr_t user, uintptr_t length_user, const Endpoint& e)
{
    if (!length_user)
        return k_ok;
    int room;
    TRY(copyin(&room, length_user, sizeof room));
    if (room < 0)
        return k_einval;
    SockaddrIn sin{};
    sin.family = k_af_inet;
    store16(sin.port, e.port);
    store32(sin.address, e.address);
    size_t n = static_cast<size_t>(room) < sizeof sin ? static_cast<size_t>(room) : sizeof sin;
    if (n)
        TRY(copyout(user, &sin, n));
    int full = sizeof sin;
    return copyout(length_user, &full, sizeof full);
}

// --- Vectors of user buffers -----------------------------------------------

// A user buffer list: an iovec array in user memory, or one buffer.
struct UserVector {
    uintptr_t iov = 0;
    size_t count = 0;
    Iovec single{};
};

Errno vector_entry(const UserVector& v, size_t i, Iovec* out)
{
    if (!v.iov) {
        *out = v.single;
        return k_ok;
    }
    return copyin(out, v.iov + i * sizeof(Iovec), sizeof(Iovec));
}

// The total length, or EINVAL when it passes ssize_t (Linux's check).
Result<size_t> vector_total(const UserVector& v)
{
    size_t total = 0;
    size_t n = v.iov ? v.count : 1;
    for (size_t i = 0; i < n; ++i) {
        Iovec e;
        TRY(vector_entry(v, i, &e));
        if (e.length > static_cast<size_t>(__PTRDIFF_MAX__) - total)
            return k_einval;
        total += e.length;
    }
    return total;
}

// Moves @p length bytes between @p kernel and the vector, in order.
Errno vector_copy(const UserVector& v, uint8_t* kernel, size_t length, bool out)
{
    size_t n = v.iov ? v.count : 1;
    for (size_t i = 0; i < n && length; ++i) {
        Iovec e;
        TRY(vector_entry(v, i, &e));
        size_t run = e.length < length ? e.length : length;
        if (run)
            TRY(out ? copyout(e.base, kernel, run) : copyin(kernel, e.base, run));
        kernel += run;
        length -= run;
    }
    return k_ok;
}

// --- The socket File --------------------------------------------------------

long socket_read(File& f, uintptr_t buffer, size_t count);
long socket_write(File& f, uintptr_t buffer, size_t count);
long socket_ioctl(File& f, unsigned long request, uintptr_t argument);
void socket_release(File& f);
int socket_poll(File& f);

const sys::FileOps k_socket_ops = {socket_read,    socket_write, socket_ioctl,
                                   socket_release, k_s_ifsock,   socket_poll};

// The socket behind descriptor @p fd: k_ebadf, or k_enotsock for a file.
Result<Socket*> socket_of(uintptr_t fd, File** file = nullptr)
{
    File* f = sys::fd_get(static_cast<int>(fd));
    if (!f)
        return k_ebadf;
    if (f->ops != &k_socket_ops)
        return k_enotsock;
    if (file)
        *file = f;
    return static_cast<Socket*>(f->object);
}

void socket_release(File& f)
{
    auto* s = static_cast<Socket*>(f.object);
    {
        SpinGuard g(g_ports_lock);
        unlist_locked(s);
    }
    // Off the list: no delivery can reach it now.
    Datagram* d = s->head;
    while (d) {
        Datagram* next = d->next;
        datagram_free(d);
        d = next;
    }
    destroy(s);
    g_sockets_live.lower();
}

int socket_poll(File& f)
{
    auto* s = static_cast<Socket*>(f.object);
    SpinGuard g(s->lock);
    int ready = 0;
    if (s->head || s->shut & 1)
        ready |= sys::k_pollin | sys::k_pollrdnorm;
    if (!(s->shut & 2))
        ready |= sys::k_pollout | sys::k_pollwrnorm;
    if (s->error != k_ok)
        ready |= sys::k_pollerr;
    if (s->shut == 3)
        ready |= sys::k_pollhup;
    return ready;
}

long socket_ioctl(File& f, unsigned long request, uintptr_t argument)
{
    auto* s = static_cast<Socket*>(f.object);
    if (request == k_fionread) {
        // Linux's SIOCINQ on a datagram socket: the next datagram's size.
        int next;
        {
            SpinGuard g(s->lock);
            next = s->head ? s->head->length : 0;
        }
        return -sys::copyout(argument, &next, sizeof next);
    }
    if (request == k_fionbio) {
        int on;
        if (Errno e = sys::copyin(&on, argument, sizeof on); e != k_ok)
            return -e;
        f.flags = on ? f.flags | sys::k_o_nonblock : f.flags & ~sys::k_o_nonblock;
        return 0;
    }
    return -k_enotty;
}

// --- Sending ----------------------------------------------------------------

// Takes the pending asynchronous error, if any (the socket's lock held).
Errno take_error_locked(Socket* s)
{
    Errno e = s->error;
    s->error = k_ok;
    return e;
}

// Binds @p s to an ephemeral port if it is not bound yet (send, connect).
Errno autobind(Socket* s)
{
    SpinGuard g(g_ports_lock);
    if (s->bound)
        return k_ok;
    return bind_locked(s, 0, 0);
}

// sendto and sendmsg: sends the vector @p v (@p total bytes) to @p to, or
// to the connected peer when @p to is null.
long socket_send(Socket* s, const UserVector& v, size_t total, const Endpoint* to, int flags)
{
    if (flags & k_msg_oob)
        return -k_eopnotsupp;
    Endpoint peer;
    uint8_t ttl;
    bool broadcast_ok;
    {
        SpinGuard g(s->lock);
        if (Errno e = take_error_locked(s); e != k_ok)
            return -e;
        if (s->shut & 2) {
            if (!(flags & k_msg_nosignal))
                proc::signal_send(*proc::current_process(), TOLL_SIGPIPE, SigInfo{});
            return -k_epipe;
        }
        ttl = s->ttl;
        broadcast_ok = s->broadcast;
    }
    if (to) {
        peer = *to;
    } else {
        SpinGuard g(g_ports_lock);
        if (!s->connected)
            return -k_edestaddrreq;
        peer = Endpoint{s->remote_address, s->remote_port};
    }
    if (peer.address == 0)
        peer.address = k_loopback_address; // Linux: INADDR_ANY is this host
    bool udp = s->kind == Kind::udp;
    if (udp && peer.port == 0)
        return -k_einval;
    size_t header = udp ? k_udp_header : 0;
    if (total > (udp ? k_udp_max_payload : k_udp_max_payload + k_udp_header))
        return -k_emsgsize;
    Route route;
    if (Errno e = route_lookup(peer.address, &route); e != k_ok)
        return -e;
    // Toll does not fragment: a datagram must fit the interface's MTU.
    if (k_ip_header + header + total > k_ethernet_mtu)
        return -k_emsgsize;
    if (route.broadcast && !broadcast_ok)
        return -k_eacces;
    if (udp)
        if (Errno e = autobind(s); e != k_ok)
            return -e;
    uint32_t source = route.source;
    uint16_t source_port;
    {
        SpinGuard g(g_ports_lock);
        if (s->local_address && !route.broadcast)
            source = s->local_address;
        source_port = s->local_port;
    }
    Frame frame;
    uint8_t* transport = frame.bytes + k_transport_at;
    if (Errno e = vector_copy(v, transport + header, total, false); e != k_ok)
        return -e;
    if (udp)
        udp_header_write(transport, source_port, peer.port, source, peer.address, total);
    Errno e = ip_output(frame, header + total, udp ? k_proto_udp : k_proto_icmp, source,
                        peer.address, route, ttl);
    if (e != k_ok) {
        if (udp && e == k_enobufs)
            g_udp_sndbuf_errors.add();
        return -e;
    }
    if (udp)
        g_udp_out_datagrams.add();
    return static_cast<long>(total);
}

long socket_write(File& f, uintptr_t buffer, size_t count)
{
    UserVector v;
    v.single = Iovec{buffer, count};
    return socket_send(static_cast<Socket*>(f.object), v, count, nullptr, 0);
}

// --- Receiving ----------------------------------------------------------------

struct Received {
    long result = 0; ///< bytes (or the full length with MSG_TRUNC), or -errno
    bool truncated = false;
    Endpoint from;
};

Received socket_receive(Socket* s, File& f, const UserVector& v, size_t room, int flags)
{
    Received r;
    bool wait = !(flags & k_msg_dontwait) && !(f.flags & sys::k_o_nonblock);
    s->lock.lock();
    while (!s->head) {
        Errno e = take_error_locked(s);
        if (e == k_ok && s->shut & 1) {
            s->lock.unlock();
            return r; // shut down for reading: end of file
        }
        if (e == k_ok && !wait)
            e = k_eagain;
        if (e == k_ok && proc::interrupted())
            e = k_erestartsys;
        if (e != k_ok) {
            s->lock.unlock();
            r.result = -e;
            return r;
        }
        ++s->sleepers;
        proc::sleep_on_interruptible(&s->head, s->lock);
        --s->sleepers;
    }
    Datagram* d = s->head;
    size_t n = d->length < room ? d->length : room;
    r.truncated = n < d->length;
    r.from = Endpoint{d->address, d->port};
    Errno e;
    if (flags & k_msg_peek) {
        // Copied under the lock, the datagram staying queued (a fault in
        // the copy takes vm.space, below; pipes copy so too).
        e = vector_copy(v, d->data(), n, true);
        s->lock.unlock();
    } else {
        s->head = d->next;
        if (!s->head)
            s->tail = nullptr;
        s->queued -= charge(d);
        s->lock.unlock();
        e = vector_copy(v, d->data(), n, true);
    }
    r.result = e != k_ok             ? -static_cast<long>(errno_value(e))
               : flags & k_msg_trunc ? static_cast<long>(d->length)
                                     : static_cast<long>(n);
    if (!(flags & k_msg_peek))
        datagram_free(d); // Linux drops it too when the copy faults
    return r;
}

long socket_read(File& f, uintptr_t buffer, size_t count)
{
    UserVector v;
    v.single = Iovec{buffer, count};
    return socket_receive(static_cast<Socket*>(f.object), f, v, count, 0).result;
}

// --- Options --------------------------------------------------------------------

size_t buffer_size(int value, size_t floor)
{
    // Linux: the value as unsigned, capped at the maximum, then doubled.
    size_t v = static_cast<uint32_t>(value);
    if (v > k_max_buffer)
        v = k_max_buffer;
    v *= 2;
    return v < floor ? floor : v;
}

long set_option(Socket* s, int level, int name, uintptr_t value_user, uintptr_t length)
{
    if (level != k_sol_socket && level != k_ipproto_ip)
        return -k_enoprotoopt;
    bool known = level == k_sol_socket ? (name == k_so_reuseaddr || name == k_so_broadcast ||
                                          name == k_so_sndbuf || name == k_so_rcvbuf)
                                       : (name == k_ip_ttl || name == k_ip_tos);
    if (!known)
        return -k_enoprotoopt;
    if (static_cast<int>(length) < static_cast<int>(sizeof(int)))
        return -k_einval;
    int value;
    if (Errno e = sys::copyin(&value, value_user, sizeof value); e != k_ok)
        return -e;
    if (level == k_sol_socket && name == k_so_reuseaddr) {
        SpinGuard g(g_ports_lock);
        s->reuse_address = value != 0;
        return 0;
    }
    SpinGuard g(s->lock);
    if (level == k_ipproto_ip) {
        if (name == k_ip_ttl) {
            if (value == -1)
                value = k_default_ttl;
            if (value < 1 || value > 255)
                return -k_einval;
            s->ttl = static_cast<uint8_t>(value);
        } else {
            s->tos = static_cast<uint8_t>(value);
        }
        return 0;
    }
    switch (name) {
    case k_so_broadcast:
        s->broadcast = value != 0;
        break;
    case k_so_sndbuf:
        s->sndbuf = buffer_size(value, k_min_sndbuf);
        break;
    default:
        s->rcvbuf = buffer_size(value, k_min_rcvbuf);
        break;
    }
    return 0;
}

long get_option(Socket* s, int level, int name, uintptr_t value_user, uintptr_t length_user)
{
    int room;
    if (Errno e = sys::copyin(&room, length_user, sizeof room); e != k_ok)
        return -e;
    if (room < 0)
        return -k_einval;
    int value;
    if (level == k_sol_socket) {
        SpinGuard g(s->lock);
        switch (name) {
        case k_so_reuseaddr:
            value = s->reuse_address;
            break;
        case k_so_type:
            value = s->type;
            break;
        case k_so_error:
            value = errno_value(take_error_locked(s));
            break;
        case k_so_broadcast:
            value = s->broadcast;
            break;
        case k_so_sndbuf:
            value = static_cast<int>(s->sndbuf);
            break;
        case k_so_rcvbuf:
            value = static_cast<int>(s->rcvbuf);
            break;
        case k_so_protocol:
            value = s->protocol;
            break;
        case k_so_domain:
            value = k_af_inet;
            break;
        default:
            return -k_enoprotoopt;
        }
    } else if (level == k_ipproto_ip && (name == k_ip_ttl || name == k_ip_tos)) {
        SpinGuard g(s->lock);
        value = name == k_ip_ttl ? s->ttl : s->tos;
    } else {
        return -k_enoprotoopt;
    }
    size_t n = static_cast<size_t>(room) < sizeof value ? static_cast<size_t>(room) : sizeof value;
    if (Errno e = sys::copyout(value_user, &value, n); e != k_ok)
        return -e;
    int written = static_cast<int>(n);
    return -sys::copyout(length_user, &written, sizeof written);
}

// --- The calls, by their arguments ------------------------------------------------

long do_socket(int family, int type_and_flags, int protocol)
{
    int flags = type_and_flags & (k_sock_nonblock | k_sock_cloexec);
    int type = type_and_flags & ~(k_sock_nonblock | k_sock_cloexec);
    if (type <= 0 || type >= k_sock_max)
        return -k_einval;
    if (family != k_af_inet)
        return -k_eafnosupport; // Toll has IPv4 only
    Kind kind;
    if (type == k_sock_dgram && (protocol == k_ipproto_ip || protocol == k_ipproto_udp))
        kind = Kind::udp;
    else if (type == k_sock_raw && protocol == k_ipproto_icmp)
        kind = Kind::raw;
    else if (type == k_sock_dgram || type == k_sock_raw || type == k_sock_stream)
        return -k_eprotonosupport; // no TCP, no ping sockets, no other raw protocol
    else
        return -k_esocktnosupport;
    Socket* s = make<Socket>();
    if (!s)
        return -k_enomem;
    s->kind = kind;
    s->type = type;
    s->protocol = kind == Kind::udp ? k_ipproto_udp : k_ipproto_icmp;
    g_sockets_made.add();
    g_sockets_live.raise();
    sys::FileRef f = sys::file_new(&k_socket_ops, sys::k_o_rdwr | (flags & k_sock_nonblock));
    if (!f) {
        destroy(s);
        g_sockets_live.lower();
        return -k_enomem;
    }
    f->object = s;
    if (kind == Kind::raw) {
        // Every raw ICMP socket sees every ICMP message: listed from birth.
        SpinGuard g(g_ports_lock);
        s->next = g_raw;
        g_raw = s;
        s->listed = true;
    }
    proc::Process* p = proc::current_process();
    Result<int> fd = sys::fd_install(p, f);
    if (!fd)
        return -fd.error(); // f's reference released the socket
    sys::fd_set_cloexec(p, fd.value(), flags & k_sock_cloexec);
    return fd.value();
}

long do_bind(uintptr_t fd, uintptr_t address, uintptr_t length)
{
    Result<Socket*> s = socket_of(fd);
    if (!s)
        return -s.error();
    Endpoint e;
    bool unspec;
    if (Errno err = endpoint_in(address, length, &e, &unspec); err != k_ok)
        return -err;
    // Linux: AF_UNSPEC binds only as INADDR_ANY.
    if (unspec && e.address != 0)
        return -k_eafnosupport;
    if (e.address != 0 && !address_is_local(e.address) && !address_is_broadcast(e.address))
        return -k_eaddrnotavail;
    SpinGuard g(g_ports_lock);
    if (s.value()->bound)
        return -k_einval;
    return -bind_locked(s.value(), e.address, e.port);
}

long do_connect(uintptr_t fd, uintptr_t address, uintptr_t length)
{
    Result<Socket*> sr = socket_of(fd);
    if (!sr)
        return -sr.error();
    Socket* s = sr.value();
    Endpoint e;
    bool unspec = false;
    Errno err = endpoint_in(address, length, &e, &unspec);
    if (unspec) {
        // AF_UNSPEC dissolves the association (Linux's udp_disconnect).
        SpinGuard g(g_ports_lock);
        s->connected = false;
        s->remote_address = 0;
        s->remote_port = 0;
        return 0;
    }
    if (err != k_ok)
        return -err;
    if (e.address == 0)
        e.address = k_loopback_address;
    Route route;
    if (Errno r = route_lookup(e.address, &route); r != k_ok)
        return -r;
    {
        SpinGuard g(s->lock);
        if (route.broadcast && !s->broadcast)
            return -k_eacces;
    }
    if (s->kind == Kind::udp)
        if (Errno b = autobind(s); b != k_ok)
            return -b;
    SpinGuard g(g_ports_lock);
    if (!s->local_address && !route.broadcast)
        s->local_address = route.source;
    s->remote_address = e.address;
    s->remote_port = e.port;
    s->connected = true;
    return 0;
}

long do_name(uintptr_t fd, uintptr_t address, uintptr_t length, bool peer)
{
    Result<Socket*> s = socket_of(fd);
    if (!s)
        return -s.error();
    Endpoint e;
    {
        SpinGuard g(g_ports_lock);
        if (peer && !s.value()->connected)
            return -k_enotconn;
        e = peer ? Endpoint{s.value()->remote_address, s.value()->remote_port}
                 : Endpoint{s.value()->local_address, s.value()->local_port};
    }
    return -endpoint_out(address, length, e);
}

long do_sendto(uintptr_t fd, uintptr_t buffer, uintptr_t length, int flags, uintptr_t address,
               uintptr_t address_length)
{
    Result<Socket*> s = socket_of(fd);
    if (!s)
        return -s.error();
    UserVector v;
    v.single = Iovec{buffer, length};
    if (static_cast<intptr_t>(length) < 0)
        return -k_einval;
    Endpoint to;
    if (address) {
        bool unspec;
        // Linux's udp_sendmsg takes AF_UNSPEC as AF_INET here.
        if (Errno e = endpoint_in(address, address_length, &to, &unspec); e != k_ok)
            return -e;
    }
    return socket_send(s.value(), v, length, address ? &to : nullptr, flags);
}

long do_recvfrom(uintptr_t fd, uintptr_t buffer, uintptr_t length, int flags, uintptr_t address,
                 uintptr_t address_length)
{
    File* f;
    Result<Socket*> s = socket_of(fd, &f);
    if (!s)
        return -s.error();
    if (address_length) {
        // Check the room before waiting, so a bad pointer fails at once.
        int room;
        if (Errno e = sys::copyin(&room, address_length, sizeof room); e != k_ok)
            return -e;
        if (room < 0)
            return -k_einval;
    }
    UserVector v;
    v.single = Iovec{buffer, length};
    Received r = socket_receive(s.value(), *f, v, length, flags);
    if (r.result < 0)
        return r.result;
    if (address && address_length && (r.result || r.from.address))
        if (Errno e = endpoint_out(address, address_length, r.from); e != k_ok)
            return -e;
    return r.result;
}

// Reads a msghdr and checks its vector: Linux's EMSGSIZE past UIO_MAXIOV.
Errno msghdr_in(uintptr_t user, Msghdr* m, UserVector* v)
{
    TRY(sys::copyin(m, user, sizeof *m));
    if (m->iov_count > k_uio_maxiov)
        return k_emsgsize;
    v->iov = m->iov;
    v->count = m->iov_count;
    if (!m->iov && m->iov_count)
        return k_efault;
    if (!m->iov) {
        v->iov = 0;
        v->single = Iovec{0, 0};
    }
    return k_ok;
}

long do_sendmsg(uintptr_t fd, uintptr_t message, int flags)
{
    Result<Socket*> s = socket_of(fd);
    if (!s)
        return -s.error();
    Msghdr m;
    UserVector v;
    if (Errno e = msghdr_in(message, &m, &v); e != k_ok)
        return -e;
    Result<size_t> total = vector_total(v);
    if (!total)
        return -total.error();
    Endpoint to;
    if (m.name) {
        bool unspec;
        if (Errno e = endpoint_in(m.name, m.name_length, &to, &unspec); e != k_ok)
            return -e;
    }
    // Ancillary data (control messages) is not supported and ignored.
    return socket_send(s.value(), v, total.value(), m.name ? &to : nullptr, flags);
}

long do_recvmsg(uintptr_t fd, uintptr_t message, int flags)
{
    File* f;
    Result<Socket*> s = socket_of(fd, &f);
    if (!s)
        return -s.error();
    Msghdr m;
    UserVector v;
    if (Errno e = msghdr_in(message, &m, &v); e != k_ok)
        return -e;
    if (static_cast<int>(m.name_length) < 0)
        return -k_einval;
    Result<size_t> room = vector_total(v);
    if (!room)
        return -room.error();
    Received r = socket_receive(s.value(), *f, v, room.value(), flags);
    if (r.result < 0)
        return r.result;
    // The address (cut to the room msg_namelen gives), its full length,
    // no control data, and MSG_TRUNC when the datagram was cut.
    uint32_t name_length = 0;
    if (m.name) {
        SockaddrIn sin{};
        sin.family = k_af_inet;
        store16(sin.port, r.from.port);
        store32(sin.address, r.from.address);
        size_t n = m.name_length < sizeof sin ? m.name_length : sizeof sin;
        if (Errno e = sys::copyout(m.name, &sin, n); e != k_ok)
            return -e;
        name_length = sizeof sin;
    }
    m.name_length = name_length;
    m.control_length = 0;
    m.flags = r.truncated ? k_msg_trunc : 0;
    if (Errno e = sys::copyout(message, &m, sizeof m); e != k_ok)
        return -e;
    return r.result;
}

long do_shutdown(uintptr_t fd, int how)
{
    Result<Socket*> s = socket_of(fd);
    if (!s)
        return -s.error();
    if (how != k_shut_rd && how != k_shut_wr && how != k_shut_rdwr)
        return -k_einval;
    bool connected;
    {
        SpinGuard g(g_ports_lock);
        connected = s.value()->connected;
    }
    {
        SpinGuard g(s.value()->lock);
        s.value()->shut |= static_cast<uint8_t>(how + 1);
        if (s.value()->sleepers)
            proc::wakeup(&s.value()->head);
    }
    sys::poll_notify();
    // Linux marks even an unconnected datagram socket, and says ENOTCONN.
    return connected ? 0 : -k_enotconn;
}

long do_setsockopt(uintptr_t fd, int level, int name, uintptr_t value, uintptr_t length)
{
    Result<Socket*> s = socket_of(fd);
    if (!s)
        return -s.error();
    return set_option(s.value(), level, name, value, length);
}

long do_getsockopt(uintptr_t fd, int level, int name, uintptr_t value, uintptr_t length)
{
    Result<Socket*> s = socket_of(fd);
    if (!s)
        return -s.error();
    return get_option(s.value(), level, name, value, length);
}

// listen and accept: a datagram socket takes no connections.
long no_connections(uintptr_t fd)
{
    Result<Socket*> s = socket_of(fd);
    return s ? -k_eopnotsupp : -s.error();
}

} // namespace

// --- Input from the stack ---------------------------------------------------------

void udp_deliver(uint32_t source, uint16_t source_port, uint32_t destination,
                 uint16_t destination_port, const uint8_t* payload, size_t length,
                 const uint8_t* ip, size_t ip_length, bool broadcast)
{
    bool found = false, delivered = false;
    {
        SpinGuard g(g_ports_lock);
        // The most specific match: a connected socket over a bound address
        // over a wildcard, as Linux scores them.
        Socket* best = nullptr;
        int best_score = -1;
        for (Socket* s = g_bound; s; s = s->next) {
            if (s->local_port != destination_port)
                continue;
            if (s->local_address && s->local_address != destination && !broadcast)
                continue;
            if (s->connected && (s->remote_address != source || s->remote_port != source_port))
                continue;
            int score = (s->local_address != 0) + 2 * s->connected;
            if (score > best_score) {
                best = s;
                best_score = score;
            }
        }
        if (best) {
            found = true;
            SpinGuard sg(best->lock);
            if (!(best->shut & 1) && best->queued + length + k_datagram_overhead <= best->rcvbuf) {
                Datagram* d = datagram_new(source, source_port, payload, length);
                if (!d)
                    g_udp_mem_errors.add();
                else
                    delivered = enqueue_locked(best, d);
            }
        }
    }
    if (!found) {
        g_udp_no_ports.add();
        if (!broadcast)
            icmp_send_unreachable(ip, ip_length, k_icmp_port_unreachable);
        return;
    }
    if (!delivered) {
        // A full queue drops, as Linux and FreeBSD drop, and counts it.
        g_udp_rcvbuf_errors.add();
        g_udp_in_errors.add();
        return;
    }
    g_udp_in_datagrams.add();
    sys::poll_notify();
}

void udp_error(uint32_t destination, uint16_t source_port, uint16_t destination_port, Errno error)
{
    bool told = false;
    {
        SpinGuard g(g_ports_lock);
        for (Socket* s = g_bound; s; s = s->next) {
            // Only a connected socket hears of it (Linux, BSD): an
            // unconnected one could not tell which datagram failed.
            if (s->local_port != source_port || !s->connected || s->remote_address != destination ||
                s->remote_port != destination_port)
                continue;
            SpinGuard sg(s->lock);
            s->error = error;
            if (s->sleepers)
                proc::wakeup(&s->head);
            told = true;
        }
    }
    if (told)
        sys::poll_notify();
}

void raw_deliver(uint32_t source, const uint8_t* ip, size_t length)
{
    bool any = false;
    {
        SpinGuard g(g_ports_lock);
        for (Socket* s = g_raw; s; s = s->next) {
            SpinGuard sg(s->lock);
            if (s->shut & 1 || s->queued + length + k_datagram_overhead > s->rcvbuf)
                continue;
            Datagram* d = datagram_new(source, 0, ip, length);
            if (d && enqueue_locked(s, d))
                any = true;
            else if (d)
                datagram_free(d);
        }
    }
    if (any)
        sys::poll_notify();
}

} // namespace toll::net

namespace toll::sys {

using namespace toll::net;

long sys_socket(const SyscallArgs& a)
{
    return do_socket(static_cast<int>(a.a[0]), static_cast<int>(a.a[1]), static_cast<int>(a.a[2]));
}

long sys_socketpair(const SyscallArgs& a)
{
    // Linux: AF_INET has no pairs (EOPNOTSUPP); Toll has no AF_UNIX yet.
    int family = static_cast<int>(a.a[0]);
    return family == k_af_inet ? -k_eopnotsupp : -k_eafnosupport;
}

long sys_bind(const SyscallArgs& a)
{
    return do_bind(a.a[0], a.a[1], a.a[2]);
}

long sys_connect(const SyscallArgs& a)
{
    return do_connect(a.a[0], a.a[1], a.a[2]);
}

long sys_listen(const SyscallArgs& a)
{
    return no_connections(a.a[0]);
}

long sys_accept(const SyscallArgs& a)
{
    return no_connections(a.a[0]);
}

long sys_accept4(const SyscallArgs& a)
{
    return no_connections(a.a[0]);
}

long sys_getsockname(const SyscallArgs& a)
{
    return do_name(a.a[0], a.a[1], a.a[2], false);
}

long sys_getpeername(const SyscallArgs& a)
{
    return do_name(a.a[0], a.a[1], a.a[2], true);
}

long sys_sendto(const SyscallArgs& a)
{
    return do_sendto(a.a[0], a.a[1], a.a[2], static_cast<int>(a.a[3]), a.a[4], a.a[5]);
}

long sys_recvfrom(const SyscallArgs& a)
{
    return do_recvfrom(a.a[0], a.a[1], a.a[2], static_cast<int>(a.a[3]), a.a[4], a.a[5]);
}

long sys_sendmsg(const SyscallArgs& a)
{
    return do_sendmsg(a.a[0], a.a[1], static_cast<int>(a.a[2]));
}

long sys_recvmsg(const SyscallArgs& a)
{
    return do_recvmsg(a.a[0], a.a[1], static_cast<int>(a.a[2]));
}

long sys_shutdown(const SyscallArgs& a)
{
    return do_shutdown(a.a[0], static_cast<int>(a.a[1]));
}

long sys_setsockopt(const SyscallArgs& a)
{
    return do_setsockopt(a.a[0], static_cast<int>(a.a[1]), static_cast<int>(a.a[2]), a.a[3],
                         a.a[4]);
}

long sys_getsockopt(const SyscallArgs& a)
{
    return do_getsockopt(a.a[0], static_cast<int>(a.a[1]), static_cast<int>(a.a[2]), a.a[3],
                         a.a[4]);
}

long sys_socketcall(const SyscallArgs& a)
{
    // Linux, include/uapi/linux/net.h: SYS_SOCKET (1) to SYS_SENDMMSG (20),
    // and how many argument words each takes (net/socket.c's nargs).
    constexpr unsigned k_last = 20;
    constexpr uint8_t k_words[k_last + 1] = {0, 3, 3, 3, 2, 3, 3, 3, 4, 4, 4,
                                             6, 6, 2, 5, 5, 3, 3, 4, 5, 4};
    uintptr_t call = a.a[0];
    if (call < 1 || call > k_last)
        return -k_einval;
    uint32_t w[6] = {};
    if (Errno e = copyin(w, a.a[1], k_words[call] * sizeof(uint32_t)); e != k_ok)
        return -e;
    SyscallArgs b{{w[0], w[1], w[2], w[3], w[4], w[5]}, a.frame};
    switch (call) {
    case 1:
        return sys_socket(b);
    case 2:
        return sys_bind(b);
    case 3:
        return sys_connect(b);
    case 4:
        return sys_listen(b);
    case 5:
        return sys_accept(b);
    case 6:
        return sys_getsockname(b);
    case 7:
        return sys_getpeername(b);
    case 8:
        return sys_socketpair(b);
    case 9: // send: sendto without an address
        return do_sendto(w[0], w[1], w[2], static_cast<int>(w[3]), 0, 0);
    case 10: // recv: recvfrom without an address
        return do_recvfrom(w[0], w[1], w[2], static_cast<int>(w[3]), 0, 0);
    case 11:
        return sys_sendto(b);
    case 12:
        return sys_recvfrom(b);
    case 13:
        return sys_shutdown(b);
    case 14:
        return sys_setsockopt(b);
    case 15:
        return sys_getsockopt(b);
    case 16:
        return sys_sendmsg(b);
    case 17:
        return sys_recvmsg(b);
    case 18:
        return sys_accept4(b);
    default:
        return -k_enosys; // recvmmsg and sendmmsg: not yet
    }
}

} // namespace toll::sys
