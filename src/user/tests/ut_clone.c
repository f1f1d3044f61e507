/* ut_clone: clone's process forms and vfork, with Linux's answers: the
 * fork form clone(SIGCHLD), the form glibc's fork() uses (the child's id
 * stored in the child's memory only), CLONE_PARENT_SETTID, an exit signal
 * of 0 (a "clone child" that only __WCLONE or __WALL waits for), vfork
 * (the parent sleeps until the child exits or execs, and shares its memory
 * until then: musl's vfork, the vfork call on i386 and a plain fork on
 * arm64, and clone(CLONE_VM|CLONE_VFORK|SIGCHLD) itself) and the flag
 * combinations Linux refuses with EINVAL. The i386
 * build runs on an x86-64 Linux host too, and gives the same answers there. */
#define _GNU_SOURCE
#include "toll/utest.h"
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* Linux, include/uapi/linux/sched.h and wait.h: what musl does not spell. */
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef __WCLONE
#define __WCLONE 0x80000000
#endif
#ifndef __WALL
#define __WALL 0x40000000
#endif

/* clone(flags, stack, parent_tid, tls, child_tid): the order of i386 and
 * arm64 (x86-64 swaps the last two; this suite is built for i386 and arm64). */
static long raw_clone(unsigned long flags, int* ptid, int* ctid)
{
    return syscall(SYS_clone, flags, 0, ptid, 0, ctid);
}

/* Waits for @p pid with @p options: its exit code, or -errno. */
static int reap(pid_t pid, int options)
{
    int status;
    pid_t r = waitpid(pid, &status, options);
    if (r < 0)
        return -errno;
    if (r != pid || !WIFEXITED(status))
        return -1000;
    return WEXITSTATUS(status);
}

static void test_fork_form(void)
{
    long pid = raw_clone(SIGCHLD, NULL, NULL);
    if (pid == 0)
        _exit(7);
    CHECK_MSG(pid > 0, "clone(SIGCHLD) makes a child");
    CHECK_EQ(reap(pid, 0), 7);
}

/* glibc's fork(): the child finds its id in its own copy of the word, and
 * the parent's copy stays as it was. */
static int g_ctid;

static void test_glibc_fork_form(void)
{
    g_ctid = -1;
    long pid = raw_clone(CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD, NULL, &g_ctid);
    if (pid == 0)
        _exit(g_ctid == getpid() ? 0 : 1);
    CHECK_MSG(pid > 0, "clone(CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD) makes a child");
    CHECK_MSG(reap(pid, 0) == 0, "the child's copy of child_tid holds its id");
    CHECK_MSG(g_ctid == -1, "the parent's copy of child_tid is untouched");
}

static void test_parent_settid(void)
{
    int ptid = 0;
    long pid = raw_clone(CLONE_PARENT_SETTID | SIGCHLD, &ptid, NULL);
    if (pid == 0)
        _exit(0);
    CHECK_MSG(pid > 0 && ptid == pid, "CLONE_PARENT_SETTID stores the child's id for the parent");
    reap(pid, 0);
}

/* Exit signal 0: wait without __WCLONE finds no such child (ECHILD). */
static void test_clone_child(void)
{
    long pid = raw_clone(0, NULL, NULL);
    if (pid == 0)
        _exit(5);
    CHECK_MSG(pid > 0, "clone(0) makes a child that signals nobody");
    CHECK_EQ(reap(pid, 0), -ECHILD);
    CHECK_EQ(reap(pid, __WCLONE), 5);
    pid = raw_clone(0, NULL, NULL);
    if (pid == 0)
        _exit(6);
    CHECK_EQ(reap(pid, __WALL), 6);
}

/* vfork: the child borrows the parent's memory; the parent resumes only
 * after the child has exited (its store is seen, though the child yielded
 * the CPU many times before making it) or exec'd. */
static volatile int g_shared;

static void test_vfork(void)
{
    g_shared = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        for (int i = 0; i < 20; ++i)
            sched_yield();
        g_shared = 42;
        _exit(3);
    }
    CHECK_MSG(pid > 0, "vfork makes a child");
#if defined(__i386__) /* musl's arm64 vfork is fork: its child's store stays its own */
    CHECK_MSG(g_shared == 42, "vfork's parent waits for the child and sees its store");
#endif
    CHECK_EQ(reap(pid, 0), 3);

    char* const argv[] = {"false", NULL};
    g_shared = 0;
    pid = vfork();
    if (pid == 0) {
        g_shared = 1;
        execve(utest_bin("false"), argv, NULL);
        _exit(127);
    }
#if defined(__i386__)
    CHECK_MSG(pid > 0 && g_shared == 1, "vfork then exec: the parent resumes");
#endif
    CHECK_EQ(reap(pid, 0), 1);
}

/* clone(CLONE_VM|CLONE_VFORK|SIGCHLD) itself, as glibc's vfork and
 * posix_spawn call it: the child yields the CPU 20 times, stores 42 at
 * @p where and exits with 4, all in registers, since it runs on the
 * parent's stack (no C code may run in it). Returns clone's result. */
static long raw_vfork_store_exit(volatile int* where)
{
    unsigned long flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
#if defined(__i386__)
    long r = SYS_clone;
    __asm__ volatile("int $0x80\n\t"
                     "test %%eax, %%eax\n\t"
                     "jnz 1f\n\t"
                     "movl $20, %%esi\n"
                     "2:\tmovl %[yield], %%eax\n\t"
                     "int $0x80\n\t"
                     "dec %%esi\n\t"
                     "jnz 2b\n\t"
                     "movl $42, (%%edi)\n\t"
                     "movl %[exit], %%eax\n\t"
                     "movl $4, %%ebx\n\t"
                     "int $0x80\n"
                     "1:"
                     : "+a"(r)
                     : "b"(flags), "c"(0), "d"(0), "S"(0), "D"(where), [yield] "i"(SYS_sched_yield),
                       [exit] "i"(SYS_exit)
                     : "memory", "cc");
    return r;
#elif defined(__aarch64__)
    register long x0 __asm__("x0") = (long)flags;
    register long x1 __asm__("x1") = 0, x2 __asm__("x2") = 0, x3 __asm__("x3") = 0,
                  x4 __asm__("x4") = 0;
    register volatile int* x5 __asm__("x5") = where;
    register long x8 __asm__("x8") = SYS_clone;
    __asm__ volatile("svc #0\n\t"
                     "cbnz x0, 1f\n\t"
                     "mov x9, #20\n"
                     "2:\tmov x8, %[yield]\n\t"
                     "svc #0\n\t"
                     "subs x9, x9, #1\n\t"
                     "b.ne 2b\n\t"
                     "mov w10, #42\n\t"
                     "str w10, [x5]\n\t"
                     "mov x0, #4\n\t"
                     "mov x8, %[exit]\n\t"
                     "svc #0\n"
                     "1:"
                     : "+r"(x0), "+r"(x8)
                     : "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5), [yield] "i"(SYS_sched_yield),
                       [exit] "i"(SYS_exit)
                     : "memory", "cc", "x9", "x10");
    return x0;
#endif
}

static void test_raw_vfork(void)
{
    g_shared = 0;
    long pid = raw_vfork_store_exit(&g_shared);
    CHECK_MSG(pid > 0, "clone(CLONE_VM|CLONE_VFORK|SIGCHLD) makes a child");
    CHECK_MSG(g_shared == 42, "the parent resumes after the child exits, and sees its store");
    CHECK_EQ(reap((pid_t)pid, 0), 4);
}

static void test_bad_flags(void)
{
    errno = 0;
    CHECK_ERR(raw_clone(CLONE_THREAD | CLONE_VM | SIGCHLD, NULL, NULL), EINVAL);
    CHECK_ERR(raw_clone(CLONE_SIGHAND | SIGCHLD, NULL, NULL), EINVAL);
    CHECK_ERR(raw_clone(CLONE_NEWNS | CLONE_FS | SIGCHLD, NULL, NULL), EINVAL);
    int ptid;
    CHECK_ERR(raw_clone(CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD, &ptid, NULL), EINVAL);
}

int main(void)
{
    test_fork_form();
    test_glibc_fork_form();
    test_parent_settid();
    test_clone_child();
    test_vfork();
    test_raw_vfork();
    test_bad_flags();
    return utest_done();
}
