/* toll/abi.h: the numbers Toll's kernel and its programs share, written once.
 * Programs get them through toll/toll.h; the kernel's system-call tables
 * (src/kernel/sys/dispatch.h) include this file itself. Plain C, so that
 * both sides can read it. */
#ifndef TOLL_ABI_H
#define TOLL_ABI_H

/** Toll's own system call numbers, above Linux's range (Linux's i386 table
 * ends far below 1000; on Linux each of these fails with ENOSYS). */
enum {
    TOLL_SYS_counter_get = 1000,     /**< read one event counter by name */
    TOLL_SYS_counter_list = 1001,    /**< list every counter as text */
    TOLL_SYS_sysctl = 1002,          /**< reserved for a sysctl-style interface */
    TOLL_SYS_check_isolation = 1003, /**< i386: check every user directory's isolation */
    TOLL_SYS_tlb_reach = 1004,       /**< TLB entries the caller's mappings need */
    TOLL_SYS_fail_alloc = 1005,      /**< steer the memory fault injector */
    TOLL_SYS_profile = 1006,         /**< start (1) or stop (0) the kernel's sampling profiler */
};

#endif
