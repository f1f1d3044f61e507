// Linux's i386 system call numbers (arch/x86/entry/syscalls/syscall_32.tbl)
// mapped to Toll's implementations, plus the i386-only set_thread_area.
// int 0x80: the number in eax, arguments in ebx, ecx, edx, esi, edi, ebp.
#include "arch/i386/cpu.h"
#include "arch/i386/trap.h"
#include "kernel/arch/cpu.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"

namespace toll::sys {
long sys_check_isolation(const SyscallArgs& a);
}

namespace toll::i386 {
namespace {

using namespace toll::sys;

// Linux's struct user_desc (asm/ldt.h): what set_thread_area reads and writes.
struct UserDesc {
    uint32_t entry_number;
    uint32_t base_addr;
    uint32_t limit;
    uint32_t flags; // seg_32bit:1 contents:2 read_exec_only:1 limit_in_pages:1 seg_not_present:1
                    // useable:1
};
constexpr uint32_t k_desc_limit_in_pages = 1u << 4, k_desc_not_present = 1u << 5;

long sys_set_thread_area(const SyscallArgs& a)
{
    UserDesc d;
    if (copyin(&d, a.a[0], sizeof d) != k_ok)
        return -k_efault;
    // Toll has one TLS slot; -1 asks the kernel to choose it.
    if (d.entry_number != k_gdt_user_tls && d.entry_number != ~0u)
        return -k_einval;
    d.entry_number = k_gdt_user_tls;
    if (copyout(a.a[0], &d, sizeof d) != k_ok)
        return -k_efault;
    arch::TlsSegment& tls = proc::current()->context.tls;
    uint32_t limit = d.limit;
    if (!(d.flags & k_desc_limit_in_pages))
        limit = (limit + 4095) >> 12; // byte granular: round up to pages
    tls = {d.base_addr, limit, !(d.flags & k_desc_not_present)};
    gdt_set_user_tls(tls.base, tls.limit_pages, tls.present);
    // A segment register of this thread may already hold the TLS selector.
    // If the segment is now absent, restoring that register on the way out
    // would fault inside the kernel's exit path (with the user's CR3 loaded
    // under the isolated layouts). Null it: the program faults, not the kernel.
    if (!tls.present) {
        arch::TrapFrame& f = *a.frame;
        uint32_t* segments[] = {&f.ds, &f.es, &f.fs, &f.gs};
        for (uint32_t* seg : segments)
            if ((*seg >> 3) == k_gdt_user_tls)
                *seg = 0;
    }
    return 0;
}

struct Entry {
    uint16_t number;
    SyscallHandler handler;
};

constexpr Entry k_linux_calls[] = {
    {1, sys_exit},
    {2, sys_fork},
    {3, sys_read},
    {4, sys_write},
    {5, sys_open},
    {6, sys_close},
    {7, sys_waitpid},
    {11, sys_execve},
    {19, sys_lseek},
    {20, sys_getpid},
    {24, sys_getuid},
    {33, sys_access},
    {37, sys_kill},
    {41, sys_dup},
    {42, sys_pipe},
    {45, sys_brk},
    {47, sys_getuid},
    {49, sys_getuid},
    {50, sys_getuid},
    {54, sys_ioctl},
    {55, sys_fcntl},
    {63, sys_dup2},
    {64, sys_getppid},
    {91, sys_munmap},
    {114, sys_wait4},
    {125, sys_mprotect},
    {140, sys_llseek},
    {145, sys_readv},
    {146, sys_writev},
    {158, sys_sched_yield},
    {162, sys_nanosleep},
    {174, sys_rt_sigaction},
    {175, sys_rt_sigprocmask},
    {192, sys_mmap_pages},
    {199, sys_getuid},
    {200, sys_getuid},
    {201, sys_getuid},
    {202, sys_getuid},
    {221, sys_fcntl},
    {224, sys_gettid},
    {243, sys_set_thread_area},
    {252, sys_exit_group},
    {258, sys_set_tid_address},
    {265, sys_clock_gettime},
    {330, sys_dup3},
    {331, sys_pipe2},
};

// Toll's own calls, above Linux's range (src/user/include/toll/toll.h).
constexpr Entry k_toll_calls[] = {
    {1000, sys_counter_get},
    {1001, sys_counter_list},
    {1003, sys_check_isolation}, // i386 only: isolation.cpp
};

constexpr unsigned k_table_size = 1004;
SyscallHandler g_table[k_table_size];

struct TableBuilder {
    TableBuilder()
    {
        for (const Entry& e : k_linux_calls)
            g_table[e.number] = e.handler;
        for (const Entry& e : k_toll_calls)
            g_table[e.number] = e.handler;
    }
};
TableBuilder g_builder; // a static constructor fills the table at boot

} // namespace

void syscall_dispatch(arch::TrapFrame& f)
{
    uint32_t number = f.eax;
    long result;
    if (number < k_table_size && g_table[number]) {
        SyscallArgs args{{f.ebx, f.ecx, f.edx, f.esi, f.edi, f.ebp}, &f};
        result = g_table[number](args);
    } else {
        result = sys_unknown(number);
    }
    // exec rewrote the frame: its eax is the new program's, leave the 0.
    f.eax = static_cast<uint32_t>(result);
}

} // namespace toll::i386
