// The system-call dispatcher every port shares. A port supplies its table,
// built here from its column of the shared list (linux_calls.h) and lists of
// its own {number, handler} entries, and the register
// accessors (the number, the six arguments, the register the result goes
// to); the look-up, the ENOSYS for a number without a handler and the
// restart of an interrupted call are the core's.
#pragma once
#include "kernel/sys/linux_calls.h"
#include "kernel/sys/syscalls.h"
#include "user/include/toll/abi.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::sys {

/// One system call of a port's table.
struct SyscallEntry {
    uint16_t number;
    SyscallHandler handler;
};

/// Toll's own calls that every port has (numbers: toll/abi.h, which user
/// programs include too). A port adds its own list for calls of its own.
inline constexpr SyscallEntry k_toll_calls[] = {
    {TOLL_SYS_counter_get, sys_counter_get}, {TOLL_SYS_counter_list, sys_counter_list},
    {TOLL_SYS_tlb_reach, sys_tlb_reach},     {TOLL_SYS_fail_alloc, sys_fail_alloc},
    {TOLL_SYS_profile, sys_profile},
};

/// A number inside the table that no list names: counted, -ENOSYS.
long sys_not_implemented(const SyscallArgs& args);

/// Which column of k_linux_calls a port's table reads (&LinuxCall::nr_i386).
using LinuxColumn = uint16_t LinuxCall::*;

/// Never defined, and not constexpr: a table whose construction reaches it
/// does not compile. Reached when a row of k_linux_calls with a null handler
/// (the port writes its own) names a number the port's lists leave empty, or
/// when two rows name one number in the same column.
void linux_call_left_unfilled_or_numbered_twice();

/// One past the highest number in @p linux's @p column and in @p lists: the
/// size of their table.
template <size_t L, size_t... N>
constexpr unsigned syscall_table_size(const LinuxCall (&linux)[L], LinuxColumn column,
                                      const SyscallEntry (&... lists)[N])
{
    unsigned size = 0;
    for (const LinuxCall& c : linux)
        if (c.*column != k_none)
            size = c.*column + 1u > size ? c.*column + 1u : size;
    auto scan = [&size](const auto& list) {
        for (const SyscallEntry& e : list)
            size = e.number + 1u > size ? e.number + 1u : size;
    };
    (scan(lists), ...);
    return size;
}

/// A port's dispatch table, built at compile time from the shared list's
/// column and the port's own entry lists (a constexpr object in .rodata: no
/// constructor runs at boot). A port's entry replaces the shared row's
/// handler of its number. Every slot holds a handler, sys_not_implemented
/// where nothing names it, so a dispatch checks only the bound.
template <unsigned Size>
struct SyscallTable {
    SyscallHandler slots[Size];

    template <size_t L, size_t... N>
    constexpr SyscallTable(const LinuxCall (&linux)[L], LinuxColumn column,
                           const SyscallEntry (&... lists)[N])
        : slots{}
    {
        for (SyscallHandler& s : slots)
            s = sys_not_implemented;
        bool named[Size] = {};
        for (const LinuxCall& c : linux) {
            if (c.*column == k_none)
                continue;
            if (named[c.*column])
                linux_call_left_unfilled_or_numbered_twice();
            named[c.*column] = true;
            if (c.handler)
                slots[c.*column] = c.handler;
        }
        auto fill = [this](const auto& list) {
            for (const SyscallEntry& e : list)
                slots[e.number] = e.handler;
        };
        (fill(lists), ...);
        for (const LinuxCall& c : linux)
            if (c.*column != k_none && slots[c.*column] == sys_not_implemented)
                linux_call_left_unfilled_or_numbered_twice();
    }
};

/// Runs system call @p number with @p args through @p table and returns what
/// goes in the result register. A number past the table is -ENOSYS; a call
/// interrupted by a signal (-ERESTARTSYS) becomes EINTR for now, with
/// @p overwritten (the result register's value before the call) kept so that
/// the way out can restart it instead (syscall_interrupted).
template <unsigned Size>
inline long syscall_dispatch(const SyscallTable<Size>& table, uintptr_t number,
                             const SyscallArgs& args, uintptr_t overwritten)
{
    if (number >= Size)
        return sys_unknown(number);
    SyscallHandler handler = table.slots[number];
    long result = handler(args);
    if (result == -k_erestartsys)
        result = syscall_interrupted(handler, overwritten);
    return result;
}

} // namespace toll::sys
