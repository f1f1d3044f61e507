// kernel_main: the architecture-independent boot flow, from the banner to the
// in-kernel tests (test=<glob>) or the first user program.
#include "kernel/kern/arch.h"
#include "kernel/kern/boot.h"
#include "kernel/kern/console.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"

// Bounds of the static-constructor table, provided by each arch's linker script.
extern "C" void (*__init_array_start[])();
extern "C" void (*__init_array_end[])();

namespace toll {

TOLL_PARAM(param_run, "run", "run this user program with its arguments, then power off");

const char* mem_map_source_name(MemMapSource source)
{
    switch (source) {
    case MemMapSource::none:
        return "none";
    case MemMapSource::multiboot:
        return "multiboot";
    case MemMapSource::device_tree:
        return "device tree";
    case MemMapSource::bios_probe:
        return "BIOS probe";
    }
    return "?";
}

namespace {

const char* mem_type_name(MemType type)
{
    switch (type) {
    case MemType::usable:
        return "usable";
    case MemType::reserved:
        return "reserved";
    case MemType::acpi_reclaimable:
        return "ACPI reclaimable";
    case MemType::acpi_nvs:
        return "ACPI NVS";
    case MemType::bad:
        return "bad";
    }
    return "unknown";
}

void print_memory_map(const BootInfo& info)
{
    kprintf("memory map (%s):\n", mem_map_source_name(info.source));
    uint64_t usable = 0;
    for (size_t i = 0; i < info.region_count; ++i) {
        const MemRegion& r = info.regions[i];
        kprintf("  [%016llx-%016llx] %s\n", (unsigned long long)r.base,
                (unsigned long long)(r.base + r.length - 1), mem_type_name(r.type));
        if (r.type == MemType::usable)
            usable += r.length;
    }
    if (info.region_count == 0)
        kprintf("  (the loader gave no memory map; assuming a safe minimum)\n");
    kprintf("usable memory: %llu KB\n", (unsigned long long)(usable / 1024));
}

void run_static_constructors()
{
    for (auto** ctor = __init_array_start; ctor < __init_array_end; ++ctor)
        (*ctor)();
}

} // namespace

void kernel_main(BootInfo& info)
{
    run_static_constructors();
    param_init(info.cmdline);
    kprintf("\nToll teaching kernel (%s), booted by %s\n", arch::name(), info.loader);
    kprintf("command line: %s\n", info.cmdline);
    char nonce[33];
    if (param_get("nonce", nonce, sizeof nonce))
        console_set_nonce(nonce, sizeof nonce);
    param_report_unknown(info.cmdline);
    print_memory_map(info);

    char glob[64];
    if (param_get("test", glob, sizeof glob))
        ktest::run_and_power_off(glob);

    kprintf("nothing to run (give test=<glob>); powering off\n");
    arch::poweroff(true);
}

} // namespace toll
