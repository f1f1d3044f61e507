// Toll's own system calls: reading the event counters from user space, and
// the TLB reach of the caller's address space, steering the memory fault
// injector, and switching the sampling profiler.
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/profile.h"
#include "kernel/proc/process.h"
#include "kernel/sys/syscalls.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/failpoint.h"
#include "kernel/vm/vmspace.h"
#include "lib/format.h"

namespace toll::sys {

long sys_counter_get(const SyscallArgs& a)
{
    char name[64];
    if (Result<size_t> n = copyinstr(name, a.a[0], sizeof name); !n)
        return -n.error();
    Counter* c = counter_find(name);
    if (!c)
        return -k_enoent;
    uint64_t value = c->read();
    return -copyout(a.a[1], &value, sizeof value); // 0, or -errno
}

long sys_counter_list(const SyscallArgs& a)
{
    struct Listing {
        uintptr_t buffer;
        size_t size;
        size_t used;
        Errno fault;
    } listing{a.a[0], a.a[1], 0, k_ok};
    if (!user_range_ok(listing.buffer, listing.size))
        return -k_efault;
    counters_for_each(
        [](Counter& c, void* context) {
            auto* l = static_cast<Listing*>(context);
            char line[96];
            size_t n = lib::snformat(line, sizeof line, "%s %llu\n", c.name,
                                     static_cast<unsigned long long>(c.read()));
            if (l->fault != k_ok || l->used + n > l->size)
                return;
            l->fault = copyout(l->buffer + l->used, line, n);
            l->used += n;
        },
        &listing);
    return listing.fault != k_ok ? -listing.fault : static_cast<long>(listing.used);
}

long sys_tlb_reach(const SyscallArgs&)
{
    proc::Process* p = proc::current_process();
    if (!p || !p->vm)
        return -k_esrch;
    return static_cast<long>(arch::pmap_tlb_entries(p->vm->pmap, 0, arch::user_space_limit()));
}

long sys_fail_alloc(const SyscallArgs& a)
{
    Errno e = vm::fail_alloc_set(static_cast<uint32_t>(a.a[0]), static_cast<uint32_t>(a.a[1]));
    return e == k_ok ? 0 : -e;
}

long sys_profile(const SyscallArgs& a)
{
    return profile_control(a.a[0] != 0);
}

} // namespace toll::sys
