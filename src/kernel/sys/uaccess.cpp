// The checked user-memory copies over the architecture's fault-recovering
// primitives, with the copy counters every measurement reads.
#include "kernel/sys/uaccess.h"
#include "kernel/arch/pmap.h"
#include "kernel/arch/uaccess.h"
#include "kernel/kern/counters.h"

namespace toll::sys {
namespace {
TOLL_COUNTER(g_copyin_calls, "vm.copyin.calls");
TOLL_COUNTER(g_copyin_bytes, "vm.copyin.bytes");
TOLL_COUNTER(g_copyout_calls, "vm.copyout.calls");
TOLL_COUNTER(g_copyout_bytes, "vm.copyout.bytes");
TOLL_COUNTER(g_copy_faults, "vm.copy.faults");

// A copy the port's primitive refused: counted, and answered with the
// primitive's reason. k_enomem when a page (say the private copy of a
// copy-on-write page) could not be had, which the program is told as
// ENOMEM: Linux answers EFAULT there (its allocator runs the out-of-memory
// killer before it fails); Toll has no such killer, and says which it was.
Errno copy_failed(Errno e)
{
    g_copy_faults.add();
    return e;
}
} // namespace

bool user_range_ok(uintptr_t address, size_t length)
{
    uintptr_t limit = arch::user_space_limit();
    return address <= limit && length <= limit - address;
}

Errno copyin(void* to, uintptr_t from, size_t length)
{
    g_copyin_calls.add();
    g_copyin_bytes.add(length);
    if (!user_range_ok(from, length)) {
        g_copy_faults.add();
        return k_efault;
    }
    if (Errno e = arch::copy_from_user(to, from, length); e != k_ok)
        return copy_failed(e);
    return k_ok;
}

Errno copyout(uintptr_t to, const void* from, size_t length)
{
    g_copyout_calls.add();
    g_copyout_bytes.add(length);
    if (!user_range_ok(to, length)) {
        g_copy_faults.add();
        return k_efault;
    }
    if (Errno e = arch::copy_to_user(to, from, length); e != k_ok)
        return copy_failed(e);
    return k_ok;
}

Result<size_t> copyinstr(char* to, uintptr_t from, size_t size)
{
    g_copyin_calls.add();
    uintptr_t limit = arch::user_space_limit();
    if (from >= limit) {
        g_copy_faults.add();
        return k_efault;
    }
    size_t room = limit - from < size ? limit - from : size;
    Result<size_t> n = arch::copy_string_from_user(to, from, room);
    if (n.error() == k_enametoolong) // no NUL: running into the end of user space is a bad address
        return room < size ? k_efault : k_enametoolong;
    if (!n)
        return copy_failed(n.error());
    g_copyin_bytes.add(n.value() + 1);
    return n;
}

Result<Timespec> copyin_timespec(uintptr_t user, bool time64)
{
    Timespec ts;
    if (time64) {
        int64_t fields[2];
        TRY(copyin(fields, user, sizeof fields));
        ts = {fields[0], fields[1]};
    } else {
        long fields[2];
        TRY(copyin(fields, user, sizeof fields));
        ts = {fields[0], fields[1]};
    }
    constexpr int64_t k_ns_per_s = 1000000000;
    if (ts.seconds < 0 || ts.nanoseconds < 0 || ts.nanoseconds >= k_ns_per_s)
        return k_einval;
    return ts;
}

Errno copyout_timespec(uintptr_t to, const Timespec& ts, bool time64)
{
    if (time64) {
        int64_t fields[2] = {ts.seconds, ts.nanoseconds};
        return copyout(to, fields, sizeof fields);
    }
    long fields[2] = {static_cast<long>(ts.seconds), static_cast<long>(ts.nanoseconds)};
    return copyout(to, fields, sizeof fields);
}

} // namespace toll::sys
