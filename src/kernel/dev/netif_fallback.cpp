// Stand-ins for the network stack's two entry points, so that a kernel
// without the stack (kernel/net/) still links its drivers: weak symbols,
// which the stack's own definitions replace at link time. Without the
// stack an interface is only noted and its frames are dropped; the
// driver's tests watch frames through its receive hook instead.
#include "kernel/kern/console.h"
#include "kernel/net/netif.h"

namespace toll::net {

[[gnu::weak]] void net_register(NetInterface& nif)
{
    kprintf("%s: no network stack in this kernel; frames received are dropped\n", nif.name);
}

[[gnu::weak]] void net_receive(NetInterface& nif, const uint8_t*, size_t)
{
    ++nif.rx_dropped;
}

} // namespace toll::net
