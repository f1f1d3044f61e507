// kernel_main: the architecture-independent boot flow, from the banner to the
// in-kernel tests (test=<glob>) or the first user program.
#include "kernel/arch/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/dev/devices.h"
#include "kernel/fs/mount.h"
#include "kernel/kern/boot.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"
#include "kernel/proc/initrd.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/file.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/vm_init.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

// Bounds of the static-constructor table, provided by each arch's linker script.
extern "C" void (*__init_array_start[])();
extern "C" void (*__init_array_end[])();

namespace toll {

TOLL_PARAM(param_run, "run",
           "run this user program with its arguments (several: a,b), then power off");

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
    kprintf("memory map (%s):\n", info.source ? info.source : "none");
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

// run=<program> <args>: runs one program, reports its status as a TEST record.
void run_program(const char* command)
{
    constexpr size_t k_max_argv = 16;
    static char words[256];
    static char path[80];
    const char* argv[k_max_argv + 1] = {};
    lib::snformat(words, sizeof words, "%s", command);
    size_t argc = lib::split_arguments(words, argv, k_max_argv);
    char name[96];
    if (argc == 0) {
        ktest::report("run", false, "run= names no program");
        return;
    }
    if (argc > k_max_argv) {
        ktest::report("run", false, "run= gives a program more than 16 arguments");
        return;
    }
    lib::snformat(path, sizeof path, "%s%s", strchr(argv[0], '/') ? "" : "/bin/", argv[0]);
    lib::snformat(name, sizeof name, "run:%s", argv[0]);
    Result<int> pid = proc::spawn(path, argv);
    if (!pid) {
        char reason[64];
        lib::snformat(reason, sizeof reason, "cannot start %s (errno %d)", path, pid.error());
        ktest::report(name, false, reason);
        return;
    }
    int status = proc::wait_for(pid.value());
    char reason[64];
    if ((status & 0x7F) != 0)
        lib::snformat(reason, sizeof reason, "killed by signal %d", status & 0x7F);
    else
        lib::snformat(reason, sizeof reason, "exit status %d", (status >> 8) & 0xFF);
    // Exit status 77 (automake's convention): the program could not test
    // what it tests here, and said why on the console.
    constexpr int k_exit_skipped = 77;
    if ((status & 0x7F) == 0 && ((status >> 8) & 0xFF) == k_exit_skipped)
        ktest::report_skip(name,
                           "exit status 77: the program cannot test this here (see its output)");
    else
        ktest::report(name, status == 0, reason);
}

// With nothing to test or run: the interactive system, /bin/init on the console.
[[noreturn]] void run_init()
{
    static const char* const argv[] = {"init", nullptr};
    Result<int> pid = proc::spawn("/bin/init", argv);
    if (!pid) {
        static const char* const sh_argv[] = {"sh", nullptr};
        pid = proc::spawn("/bin/sh", sh_argv);
    }
    if (!pid) {
        kprintf("no /bin/init or /bin/sh in the ramdisk (errno %d); powering off\n", pid.error());
        arch::poweroff(false);
    }
    int status = proc::wait_for(pid.value());
    kprintf("init exited (status 0x%x); powering off\n", status);
    fs::mount_sync();
    arch::poweroff(status == 0);
}

// Out of line, so that a breakpoint on kernel_main stops in kernel_main's
// own frame and line, as the debugging appendix of the book shows.
[[gnu::noinline]] void run_static_constructors()
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

    Cpu& boot_cpu = cpu_boot_prepare();
    arch::cpu_init(boot_cpu);
    cpu_mark_online(boot_cpu);
    vm::vm_init(info);
    proc::sched_init();
    arch::cpus_start();
    arch::console_input_init();
    size_t programs = proc::initrd_init(info.extra_ramdisk, info.extra_ramdisk_size);
    kprintf("ramdisk: %zu files\n", programs);
    sys::vfs_init(); // the file tree: the ramdisk's files, writable from here on
    fs::mount_init();
    dev::devices_init(); // PCI and its network card

    char glob[64];
    bool testing = param_get("test", glob, sizeof glob);
    static char command[512]; // as long as the whole command line can be
    bool running = param_get("run", command, sizeof command);
    if (testing)
        ktest::run_matching(glob);
    // run=a x,b y,...: several programs in one boot, one after the other,
    // each reported as its own TEST record.
    char* cursor = running ? command : nullptr;
    while (char* program = lib::next_program(cursor))
        run_program(program);
    // What the programs wrote reaches the disk before the power goes.
    fs::mount_sync();
    if (testing || running)
        ktest::finish();
    run_init();
}

} // namespace toll
