// Boot-time device start-up: see devices.h.
#include "kernel/dev/devices.h"
#include "kernel/dev/e1000.h"
#include "kernel/dev/pci.h"
#include "kernel/kern/console.h"

namespace toll::dev {

void devices_init()
{
    size_t found = pci_enumerate();
    if (found == 0) {
        kprintf("pci: no configuration space\n");
        return;
    }
    e1000_init();
}

} // namespace toll::dev
