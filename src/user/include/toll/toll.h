/* toll.h: Toll's own system calls, numbered above Linux's range, with inline
 * wrappers. On Linux these numbers are unused: each call fails with ENOSYS. */
#ifndef TOLL_TOLL_H
#define TOLL_TOLL_H

#include "toll/abi.h" /* the call numbers, shared with the kernel */
#include <unistd.h>

/**
 * Read the 64-bit event counter called @p name (e.g. "cpu.cr3_loads") into
 * *@p value. Returns 0, or -1 with errno ENOENT for an unknown name, EFAULT
 * for a bad pointer, ENOSYS on a kernel without Toll's calls (Linux).
 */
static inline long counter_get(const char* name, unsigned long long* value)
{
    return syscall(TOLL_SYS_counter_get, name, value);
}

/**
 * Write every counter into @p buf as "name value\n" lines, at most @p size
 * bytes. Returns the number of bytes written, or -1 with errno EFAULT for a
 * bad buffer, ENOSYS on a kernel without Toll's calls.
 */
static inline long counter_list(char* buf, unsigned long size)
{
    return syscall(TOLL_SYS_counter_list, buf, size);
}

/**
 * The number of TLB entries the calling process's present mappings would
 * need: one per page, contiguous run or block, counted by walking its page
 * tables (an architectural figure: QEMU's own TLB holds one entry per 4 KB
 * page whatever is mapped). Returns the count, or -1 with errno ENOSYS on a
 * kernel without Toll's calls.
 */
static inline long tlb_reach(void)
{
    return syscall(TOLL_SYS_tlb_reach);
}

/**
 * Make kernel memory allocations fail, to test how the kernel copes: with
 * @p every > 0, every Nth page or heap allocation made for a program fails
 * (with @p seed non-zero: each one with probability 1/every, seeded); 0 stops
 * it. Returns 0, or -1 with errno EPERM when the kernel was not booted with
 * fail.alloc= (fault injection is a test facility), ENOSYS on Linux.
 */
static inline long fail_alloc(unsigned long every, unsigned long seed)
{
    return syscall(TOLL_SYS_fail_alloc, every, seed);
}

/**
 * Start (@p on non-zero) or stop the kernel's sampling profiler: stopping
 * prints the program counters sampled since the start on the console, as
 * PROFILE records (tools/bench --profile). Returns 0, or -1 with errno ENODEV
 * when the kernel was booted without profile.us=, ENOSYS on Linux.
 */
static inline long profile(int on)
{
    return syscall(TOLL_SYS_profile, on);
}

#endif /* TOLL_TOLL_H */
