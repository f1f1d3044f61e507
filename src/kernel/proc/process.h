// Processes: an address space, open files and one or more threads; clone,
// fork, exec, exit, wait and kill, with Linux's wait-status encoding.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/signal.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/file.h"
#include "kernel/sys/vfs.h"
#include "kernel/vm/vmspace.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::proc {

constexpr int k_max_fds = 64; // one bit each in Process::close_on_exec
constexpr int k_max_processes = 256;

constexpr int k_max_threads = 256; // of one process: past it clone answers EAGAIN

/// A process: one user program with its threads, its address space and its
/// open files. The entry stays, as a zombie, from the exit of its last
/// thread until the parent collects the wait status. Its pid is the id of
/// its first thread (Linux's thread group id: what getpid returns in each).
struct Process {
    int pid = 0;                   ///< process id; 1 is init
    Process* parent = nullptr;     ///< who forked it; nullptr for a spawned one (init) and orphans
    Thread* threads = nullptr;     ///< its threads, linked through Thread::peer; none once a zombie
    int live_threads = 0;          ///< how many are on @c threads
    bool group_exiting = false;    ///< exit_group or a fatal signal: every thread is to exit
    int group_status = 0;          ///< the wait status the group exit gives
    Thread* exec_thread = nullptr; ///< the thread in execve, waiting for the others to exit
    vm::VmSpace* vm = nullptr;     ///< its address space
    sys::FileRef files[k_max_fds]; ///< open file descriptors, each a reference; empty = free
    Spinlock files_lock{"proc.files"}; ///< guards files and close_on_exec while they change
    uint64_t close_on_exec = 0;        ///< bit n: descriptor n closes at execve (FD_CLOEXEC)
    bool zombie = false;               ///< exited; waits for its parent's wait4
    int wait_status = 0;               ///< Linux encoding: exit code << 8, or the signal number
    Signals signals;                   ///< actions and the signals sent to the whole process
    int exit_signal = TOLL_SIGCHLD;    ///< what its parent is sent when it ends (clone's low byte)
    Thread* vfork_parent = nullptr;    ///< the thread asleep in vfork until this one execs or exits
    bool orphan = false;               ///< its parent exited: nobody will wait for it
    int pgid = 0;                      ///< its process group (the pid of the group's leader)
    int sid = 0;                       ///< its session (the pid of the session's leader)
    bool execed = false;               ///< it ran execve since fork (setpgid refuses its parent)
    char name[16] = {};                ///< the program's name, for the console
    sys::NodeRef cwd;                  ///< its working directory (empty: the root)
    char disk_cwd[256] = {}; ///< the working directory when on the disk (fs/mount.h), else ""
    uint32_t umask = 022;    ///< umask(2): permission bits a create leaves out
    char exe[128] = {};      ///< the program's path, for /proc/PID/exe
    char cmdline[128] = {};  ///< its arguments, each NUL-ended (/proc/PID/cmdline)
    size_t cmdline_length = 0;
};

/// The process of the running thread, or nullptr for a kernel thread.
Process* current_process();

/// The address space of the running thread's process, or nullptr for a
/// kernel thread: what the trap code hands to vm::handle_user_fault.
vm::VmSpace* current_vm();

/// Creates the first user process running @p path with @p argv (NULL-ended)
/// and makes it runnable. Returns its pid, or why it could not (k_enomem,
/// k_eagain, or load_program's error: k_enoent, k_enoexec, ...).
Result<int> spawn(const char* path, const char* const* argv);

/// Waits (in a kernel thread) for process @p pid to end; returns its wait status.
int wait_for(int pid);

/// Makes a parentless process owning thread @p t and address space @p space
/// (for spawn). Returns it; k_eagain when the process table is full (or no
/// memory is left for the entry), and @p t and @p space stay the caller's.
Result<Process*> make_process_for_spawn(Thread* t, vm::VmSpace* space);

// clone()'s flags (Linux, include/uapi/linux/sched.h): the low byte is the
// signal the parent gets when the child ends (k_clone_signal_mask).
constexpr uint64_t k_clone_signal_mask = 0xFF, k_clone_vm = 0x100, k_clone_fs = 0x200,
                   k_clone_files = 0x400, k_clone_sighand = 0x800, k_clone_pidfd = 0x1000,
                   k_clone_ptrace = 0x2000, k_clone_vfork = 0x4000, k_clone_parent = 0x8000,
                   k_clone_thread = 0x10000, k_clone_newns = 0x20000, k_clone_sysvsem = 0x40000,
                   k_clone_settls = 0x80000, k_clone_parent_settid = 0x100000,
                   k_clone_child_cleartid = 0x200000, k_clone_detached = 0x400000,
                   k_clone_untraced = 0x800000, k_clone_child_settid = 0x1000000,
                   k_clone_newcgroup = 0x2000000, k_clone_newuts = 0x4000000,
                   k_clone_newipc = 0x8000000, k_clone_newuser = 0x10000000,
                   k_clone_newpid = 0x20000000, k_clone_newnet = 0x40000000,
                   k_clone_io = 0x80000000;

/// What clone() was asked for, in the architecture-neutral order (the
/// ports' system-call tables put the registers in it).
struct CloneRequest {
    uint64_t flags = TOLL_SIGCHLD; ///< k_clone_* bits and the exit signal
    uintptr_t stack = 0;           ///< the child's user stack pointer; 0: the caller's
    uintptr_t parent_tid = 0;      ///< k_clone_parent_settid: where the caller gets the child's id
    uintptr_t tls = 0;             ///< k_clone_settls: the architecture's TLS argument
    uintptr_t child_tid = 0; ///< k_clone_child_settid / k_clone_child_cleartid: the child's word
};

/// clone(): a new process (a copy of the caller's, or sharing its address
/// space with k_clone_vm) or, with k_clone_thread, a new thread of the
/// caller's process, returning from the system call @p frame belongs to
/// with 0. k_clone_vfork puts the caller to sleep until the child execs or
/// exits. Returns the child's id; k_einval for a combination Linux refuses
/// (k_clone_thread without k_clone_sighand, k_clone_sighand without
/// k_clone_vm, k_clone_fs with a new mount namespace, ...) and for what
/// Toll does not have (namespaces, pidfds, k_clone_files, k_clone_fs or
/// k_clone_sighand between processes); k_eagain when the process table is
/// full, k_enomem when memory is short, or the architecture's error for
/// a bad TLS argument.
Result<int> clone(arch::TrapFrame& frame, const CloneRequest& request);

/// fork(): clone(SIGCHLD), a copy of the current process.
Result<int> fork(arch::TrapFrame& frame);

/// Wakes the thread of another process asleep in vfork for @p p, if one
/// is: @p p has let go of the address space they share (it execs or exits).
void vfork_release(Process& p);

/// Gives up one process's use of address space @p space (exec and exit):
/// destroys it, unless another process still runs in it (a vfork parent,
/// or a clone with k_clone_vm).
void vm_drop(vm::VmSpace* space);

/// Where exec maps the port's signal-return code (arch::signal_trampoline)
/// in every program: the return address of a handler without SA_RESTORER.
uintptr_t signal_trampoline_address();

/// execve(): replaces the current program: on k_ok, @p frame's thread
/// resumes in the new program (the old one is gone); otherwise why not
/// (load_program's error), with the old program untouched.
Errno exec(const char* path, const char* const* argv, const char* const* envp);

/// Ends the current process with a Linux wait status (exit_group, a fatal
/// signal, a fault): every other thread is told to exit, and the last one
/// to go makes the zombie.
[[noreturn]] void exit_current(int wait_status);

/// Ends the running thread (exit): its clear-child-tid word is zeroed and
/// its futex woken; if it is its process's last thread, the process ends
/// with @p wait_status (or the status of a group exit under way).
[[noreturn]] void exit_thread(int wait_status);

/// Zeroes the clear-child-tid word of thread @p t (set_tid_address,
/// CLONE_CHILD_CLEARTID) in @p space and wakes one futex waiter there, as
/// Linux's mm_release does at a thread's exit and at execve; then forgets
/// the word.
void clear_child_tid(Thread& t, vm::VmSpace* space);

/// execve's point of no return in a process with several threads (Linux's
/// de_thread): tells the others to exit and waits until they have; the
/// caller then takes the process's id as its thread id. k_eagain if another
/// thread is in execve already or the process is exiting (the caller exits
/// on its way out).
Errno exec_kill_other_threads();

/// The thread numbered @p tid, of a process that is not a zombie; nullptr
/// if there is none. Costs a pass over the process table and its threads,
/// under the table lock (process_table_lock()), which the caller holds.
Thread* find_thread(int tid);

/// Wakes @p t if it sleeps, so that a blocking call looks again at what
/// it waits for (and notices a signal or an exit).
void thread_kick(Thread& t);

/// wait4(): waits for a child: @p pid itself if positive, any (-1), any in
/// the caller's process group (0) or in group -pid (< -1). Stores the status; returns
/// the child's pid, or 0 with WNOHANG and nothing ready; k_echild when there
/// is no such child, k_erestartsys when a signal interrupted the wait.
Result<int> wait_child(int pid, int* status, int options);

/// kill(), as Linux reads @p pid: > 0 that process, 0 the caller's process
/// group, -1 every process but init and the caller, < -1 the group -pid. A
/// zombie that is still to be waited for counts as found (the signal does
/// nothing to it). Signal 0 only checks that a target exists. @p code is the
/// siginfo's si_code (TOLL_SI_USER for kill, TOLL_SI_TKILL for tkill and tgkill).
/// Returns k_ok, k_einval for a bad signal number, k_esrch when no process
/// matched. Costs one pass over the process table.
Errno kill(int pid, int signal, int code = TOLL_SI_USER);

/// The process numbered @p pid, zombies that their parent may still wait
/// for included; nullptr if there is none.
Process* find_process(int pid);

/// The process table's lock: find_process's caller holds it for as long as
/// it uses the process found (an exiting process is freed under it).
Spinlock& process_table_lock();

/// setpgid(): moves process @p pid (0: the caller) into group @p pgid (0: a
/// group of its own, numbered @p pid), with Linux's rules: only the caller
/// or a child of it that has not run execve (k_eacces) may be moved, within
/// the caller's session (k_eperm), never a session leader (k_eperm), and
/// only into a group that exists in that session or the new one of its own
/// (k_eperm). k_esrch when @p pid is neither the caller nor its child,
/// k_einval for a negative @p pgid.
Errno set_process_group(int pid, int pgid);

/// getpgid() and getsid(): the process group (@p session false) or the
/// session of process @p pid (0: the caller); k_esrch when there is none.
Result<int> group_of(int pid, bool session);

/// setsid(): makes the caller the leader of a new session and of a new
/// process group, both numbered by its pid, which it returns; k_eperm when a
/// process group of that number exists already (the caller leads one).
Result<int> new_session();

/// Called on every return to user mode with the frame about to be resumed.
/// The usual return, with no signal pending and nothing to finish, costs one
/// test of the thread's exit work (a k_exit_* bit for each kind); anything
/// else goes to return_to_user_work. A pending signal that is blocked takes
/// that path too and finds nothing.
inline void return_to_user_checks(arch::TrapFrame& frame)
{
    Thread* t = current();
    if (t->exit_work && t->process)
        return_to_user_work(*t->process, *t, frame);
}

/// The way out of every trap, on every port: when exit_pending says there is
/// anything to do, the checks above (if the trap came from user mode), then
/// the scheduler's preemption point. A port calls
/// it last in its trap handler (and its system-call path).
inline void trap_exit(arch::TrapFrame& frame, bool from_user)
{
    // Nothing pending (no exit work, no reschedule): one test, and out.
    if (!exit_pending(*current())) [[likely]]
        return;
    if (from_user)
        return_to_user_checks(frame);
    if (sched_preempt_wanted()) [[unlikely]]
        sched_preempt_point(from_user);
}

/// Calls @p visit for every process in existence (zombies included).
void for_each_process(void (*visit)(Process& process, void* context), void* context);

/// Number of processes in existence (zombies included).
int process_count();

} // namespace toll::proc
