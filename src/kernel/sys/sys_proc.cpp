// System calls on processes: fork, execve, exit, wait, kill, the identity
// calls and yield.
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/proc/process.h"
#include "kernel/sys/dispatch.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmalloc.h"

namespace toll::sys {
namespace {

TOLL_COUNTER(g_unknown_syscalls, "sys.unknown");

// Big enough for the environment of busybox's testsuite (its OPTIONFLAGS
// alone is 10 KB); Linux allows far more (MAX_ARG_STRLEN is 128 KB).
constexpr size_t k_exec_strings = 65536;
constexpr size_t k_exec_max_args = 64;

// execve's arguments copied into the kernel: the strings and pointers to them.
struct ExecArgs {
    char strings[k_exec_strings];
    size_t used = 0;
    char path[256];
    const char* argv[k_exec_max_args + 1];
    const char* envp[k_exec_max_args + 1];
};

long copy_vector(ExecArgs& ea, uintptr_t user_vector, const char** out)
{
    size_t i = 0;
    if (user_vector) {
        for (;; ++i) {
            uintptr_t pointer;
            if (Errno e = copyin(&pointer, user_vector + i * sizeof pointer, sizeof pointer);
                e != k_ok)
                return -e;
            if (!pointer)
                break;
            if (i == k_exec_max_args)
                return -k_e2big;
            Result<size_t> n = copyinstr(ea.strings + ea.used, pointer, k_exec_strings - ea.used);
            if (n.error() == k_enametoolong)
                return -k_e2big;
            if (!n)
                return -n.error();
            out[i] = ea.strings + ea.used;
            ea.used += n.value() + 1;
        }
    }
    out[i] = nullptr;
    return 0;
}

} // namespace

namespace {
// How often each number below k_unknown_tracked came without a handler
// (lock: unknown), and whether the console has been told (once per boot).
constexpr uintptr_t k_unknown_tracked = 1024;
uint32_t g_unknown_by_number[k_unknown_tracked];
bool g_unknown_said_large;
} // namespace

long sys_unknown(uintptr_t number)
{
    g_unknown_syscalls.add();
    bool first;
    if (number < k_unknown_tracked) {
        first = g_unknown_by_number[number]++ == 0;
    } else {
        first = !g_unknown_said_large;
        g_unknown_said_large = true;
    }
    if (first) {
        proc::Process* p = proc::current_process();
        kprintf("sys: system call %lu is not implemented (ENOSYS), first asked by %s\n",
                static_cast<unsigned long>(number), p ? p->name : "the kernel");
    }
    return -k_enosys;
}

uint32_t unknown_call_count(uintptr_t number)
{
    return number < k_unknown_tracked ? g_unknown_by_number[number] : 0;
}

long sys_not_implemented(const SyscallArgs& a)
{
    return sys_unknown(arch::syscall_number(*a.frame));
}

long sys_fork(const SyscallArgs& a)
{
    Result<int> child = proc::fork(*a.frame);
    return child ? child.value() : -child.error();
}

long sys_clone(const SyscallArgs& a)
{
    // clone(flags, stack, parent_tid, tls, child_tid): this order on i386
    // and on arm64 alike (Linux's CONFIG_CLONE_BACKWARDS; x86-64 swaps the
    // last two).
    proc::CloneRequest r{a.a[0], a.a[1], a.a[2], a.a[3], a.a[4]};
    // The flags are an unsigned long; on a 64-bit port the high half is
    // clone3's, which the legacy call does not take.
    if (r.flags >> 32)
        return -k_einval;
    Result<int> child = proc::clone(*a.frame, r);
    return child ? child.value() : -child.error();
}

long sys_vfork(const SyscallArgs& a)
{
    proc::CloneRequest r{proc::k_clone_vm | proc::k_clone_vfork | TOLL_SIGCHLD, 0, 0, 0, 0};
    Result<int> child = proc::clone(*a.frame, r);
    return child ? child.value() : -child.error();
}

long sys_execve(const SyscallArgs& a)
{
    ExecArgs* ea = make_unzeroed<ExecArgs>(); // 64 KB, written before it is read
    if (!ea)
        return -k_enomem;
    Result<size_t> path = copyinstr(ea->path, a.a[0], sizeof ea->path);
    long r = path ? 0 : -path.error();
    if (r >= 0)
        r = copy_vector(*ea, a.a[1], ea->argv);
    if (r >= 0)
        r = copy_vector(*ea, a.a[2], ea->envp);
    if (r >= 0)
        r = -proc::exec(ea->path, ea->argv, ea->envp);
    destroy(ea);
    return r;
}

long sys_exit(const SyscallArgs& a)
{
    proc::exit_thread(static_cast<int>((a.a[0] & 0xFF) << 8)); // this thread alone
}

long sys_exit_group(const SyscallArgs& a)
{
    proc::exit_current(static_cast<int>((a.a[0] & 0xFF) << 8)); // every thread
}

long sys_wait4(const SyscallArgs& a)
{
    constexpr uintptr_t k_known_options = 1 /*WNOHANG*/ | 2 /*WUNTRACED*/ | 8 /*WCONTINUED*/ |
                                          0x40000000 /*__WALL*/ | 0x80000000 /*__WCLONE*/;
    int pid = static_cast<int>(a.a[0]);
    // The options are an int: a 64-bit port sees __WCLONE sign-extended.
    uintptr_t options = static_cast<uint32_t>(a.a[2]);
    if (options & ~k_known_options)
        return -k_einval;
    if (pid == INT32_MIN)
        return -k_esrch; // Linux: -INT_MIN names no group
    // Both result pointers are checked before a child is reaped, so a bad
    // one costs the caller an EFAULT, not a lost child.
    // Linux's struct rusage: two timevals and fourteen longs, 18 words.
    long rusage[18] = {};
    if ((a.a[1] && !user_range_ok(a.a[1], sizeof(int))) ||
        (a.a[3] && !user_range_ok(a.a[3], sizeof rusage)))
        return -k_efault;
    int status = 0;
    Result<int> waited = proc::wait_child(pid, &status, static_cast<int>(options));
    if (!waited)
        return -waited.error();
    int r = waited.value();
    if (r > 0 && a.a[1])
        if (Errno e = copyout(a.a[1], &status, sizeof status); e != k_ok)
            return -e;
    // Toll keeps no resource accounting: the child used nothing it counts.
    if (r > 0 && a.a[3])
        if (Errno e = copyout(a.a[3], rusage, sizeof rusage); e != k_ok)
            return -e;
    return r;
}

long sys_waitpid(const SyscallArgs& a)
{
    SyscallArgs b = a;
    b.a[3] = 0;
    return sys_wait4(b);
}

long sys_getpid(const SyscallArgs&)
{
    return proc::current_process()->pid;
}

long sys_gettid(const SyscallArgs&)
{
    return proc::current()->tid;
}

long sys_getppid(const SyscallArgs&)
{
    proc::Process* parent = proc::current_process()->parent;
    return parent ? parent->pid : 0;
}

long sys_kill(const SyscallArgs& a)
{
    return -proc::kill(static_cast<int>(a.a[0]), static_cast<int>(a.a[1]));
}

long sys_setpgid(const SyscallArgs& a)
{
    return -proc::set_process_group(static_cast<int>(a.a[0]), static_cast<int>(a.a[1]));
}

long sys_getpgid(const SyscallArgs& a)
{
    Result<int> g = proc::group_of(static_cast<int>(a.a[0]), false);
    return g ? g.value() : -g.error();
}

long sys_getpgrp(const SyscallArgs&)
{
    return proc::current_process()->pgid;
}

long sys_getsid(const SyscallArgs& a)
{
    Result<int> s = proc::group_of(static_cast<int>(a.a[0]), true);
    return s ? s.value() : -s.error();
}

long sys_setsid(const SyscallArgs&)
{
    Result<int> s = proc::new_session();
    return s ? s.value() : -s.error();
}

long sys_sched_yield(const SyscallArgs&)
{
    proc::yield();
    return 0;
}

long sys_set_tid_address(const SyscallArgs& a)
{
    proc::Thread* t = proc::current();
    t->clear_child_tid = a.a[0];
    return t->tid;
}

long sys_getuid(const SyscallArgs&)
{
    return 0; // Toll has one user, root
}

} // namespace toll::sys
