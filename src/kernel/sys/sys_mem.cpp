// System calls on the address space: brk, mmap (anonymous memory, and the
// files of the mounted disk), munmap, mprotect, msync.
#include "kernel/fs/mount.h"
#include "kernel/proc/process.h"
#include "kernel/sys/syscalls.h"
#include "kernel/vm/vmobject.h"

namespace toll::sys {
namespace {

// Linux's mmap flags and protections.
constexpr uintptr_t k_map_shared = 0x01, k_map_private = 0x02, k_map_fixed = 0x10,
                    k_map_anonymous = 0x20, k_map_fixed_noreplace = 0x100000;
constexpr uintptr_t k_map_known = k_map_shared | k_map_private | k_map_fixed | k_map_anonymous |
                                  k_map_fixed_noreplace | 0x4000 /*NORESERVE*/ | 0x20000 /*STACK*/ |
                                  0x0100 /*GROWSDOWN*/ | 0x8000 /*POPULATE*/;
// Linux, include/uapi/asm-generic/mman-common.h: msync's flags.
constexpr uintptr_t k_ms_async = 1, k_ms_invalidate = 2, k_ms_sync = 4;
constexpr uintptr_t k_prot_known = arch::k_prot_read | arch::k_prot_write | arch::k_prot_exec;
constexpr uintptr_t k_page_mask = arch::k_page_size - 1;

uintptr_t page_round_up(uintptr_t v)
{
    return (v + k_page_mask) & ~k_page_mask;
}

long map_at(vm::VmSpace* space, uintptr_t address, uintptr_t length, uintptr_t prot,
            uintptr_t flags, vm::VmObject* object);

} // namespace

long sys_brk(const SyscallArgs& a)
{
    vm::VmSpace* space = proc::current_process()->vm;
    SpinGuard g(space->lock);
    uintptr_t want = a.a[0];
    // Linux: an impossible request leaves the break where it is and returns it.
    if (want < space->brk_start || want >= arch::user_space_limit() - vm::k_user_stack_size)
        return static_cast<long>(space->brk);
    uintptr_t old_end = page_round_up(space->brk), new_end = page_round_up(want);
    if (new_end > old_end) {
        if (!vm::vm_can_commit(new_end - old_end) ||
            vm::vmspace_overlaps(space, old_end, new_end) ||
            vm::vmspace_grow(space, old_end, new_end - old_end,
                             arch::k_prot_read | arch::k_prot_write) != k_ok)
            return static_cast<long>(space->brk);
    } else if (new_end < old_end) {
        vm::vmspace_unmap(space, new_end, old_end - new_end);
    }
    space->brk = want;
    return static_cast<long>(want);
}

long sys_mmap_pages(const SyscallArgs& a)
{
    uintptr_t address = a.a[0], length = a.a[1], prot = a.a[2], flags = a.a[3];
    vm::VmSpace* space = proc::current_process()->vm;
    if (!length || (prot & ~k_prot_known) || (flags & ~k_map_known))
        return -k_einval;
    if (!(flags & (k_map_shared | k_map_private)))
        return -k_einval;
    length = page_round_up(length);
    if (length == 0 || length >= arch::user_space_limit())
        return -k_enomem;
    // A file of the disk: its pages, read into the page cache now (the
    // fault that maps them later cannot wait for the disk). The ramdisk's
    // files are not mappable.
    vm::VmObject* object = nullptr;
    if (!(flags & k_map_anonymous)) {
        Result<vm::VmObject*> made =
            fs::mount_map_fd(static_cast<int>(a.a[4]), a.a[5], length / arch::k_page_size,
                             flags & k_map_shared, prot & arch::k_prot_write);
        if (!made)
            return -made.error();
        object = made.value();
    } else if (!vm::vm_can_commit(length)) {
        return -k_enomem;
    }
    long r = map_at(space, address, length, prot, flags, object);
    if (object)
        vm::vmobject_drop(object); // the region holds its own reference
    return r;
}

namespace {

long map_at(vm::VmSpace* space, uintptr_t address, uintptr_t length, uintptr_t prot,
            uintptr_t flags, vm::VmObject* object)
{
    bool fixed = flags & (k_map_fixed | k_map_fixed_noreplace);
    if (fixed) {
        if (address & k_page_mask)
            return -k_einval;
        if (address < vm::k_user_space_floor)
            return -k_eperm; // as Linux refuses mappings below mmap_min_addr
        if (address + length < address || address + length > arch::user_space_limit())
            return -k_enomem;
    }
    // From the choice of the address to the mapping, one hold of the lock:
    // another thread of the process must not map the same hole between.
    SpinGuard g(space->lock);
    if (fixed) {
        if ((flags & k_map_fixed_noreplace) &&
            vm::vmspace_overlaps(space, address, address + length))
            return -k_eexist;
    } else {
        Result<uintptr_t> hole = vm::vmspace_find_hole(space, length);
        if (!hole)
            return -hole.error();
        address = hole.value();
    }
    // MAP_SHARED anonymous memory is shared with the children forked later;
    // MAP_PRIVATE is copied (on write) for them.
    Errno e = object ? vm::vmspace_map_object(space, address, length, static_cast<unsigned>(prot),
                                              flags & k_map_shared, object, 0)
              : (flags & k_map_shared)
                  ? vm::vmspace_map_shared(space, address, length, static_cast<unsigned>(prot))
                  : vm::vmspace_map(space, address, length, static_cast<unsigned>(prot));
    if (e != k_ok)
        return -e;
    return static_cast<long>(address);
}

} // namespace

long sys_munmap(const SyscallArgs& a)
{
    uintptr_t address = a.a[0], length = page_round_up(a.a[1]);
    if ((address & k_page_mask) || !length || address + length < address ||
        address + length > arch::user_space_limit())
        return -k_einval;
    vm::VmSpace* space = proc::current_process()->vm;
    SpinGuard g(space->lock);
    Errno e = vm::vmspace_unmap(space, address, length);
    return e == k_ok ? 0 : -e;
}

long sys_mprotect(const SyscallArgs& a)
{
    uintptr_t address = a.a[0], length = page_round_up(a.a[1]), prot = a.a[2];
    if ((address & k_page_mask) || (prot & ~k_prot_known))
        return -k_einval;
    if (!length)
        return 0;
    if (address + length < address || address + length > arch::user_space_limit())
        return -k_enomem;
    vm::VmSpace* space = proc::current_process()->vm;
    SpinGuard g(space->lock);
    Errno e = vm::vmspace_protect(space, address, length, static_cast<unsigned>(prot));
    return e == k_ok ? 0 : -e;
}

long sys_msync(const SyscallArgs& a)
{
    uintptr_t address = a.a[0], length = page_round_up(a.a[1]), flags = a.a[2];
    if ((address & k_page_mask) || (flags & ~(k_ms_async | k_ms_invalidate | k_ms_sync)) ||
        ((flags & k_ms_async) && (flags & k_ms_sync)))
        return -k_einval;
    if (address + length < address || address + length > arch::user_space_limit())
        return -k_enomem;
    vm::VmSpace* space = proc::current_process()->vm;
    // The objects of the shared file mappings in the range, taken under the
    // space's lock; written back without it (it sleeps on the disk). The
    // pages are the page cache's, so every reader sees the changes at once:
    // msync makes them durable. Linux: ENOMEM for a range with a hole.
    constexpr size_t k_max_objects = 16;
    vm::VmObject* objects[k_max_objects];
    size_t n = 0;
    {
        SpinGuard g(space->lock);
        uintptr_t covered = address;
        for (vm::Region* r = space->regions.first_ending_after(address);
             r && r->start < address + length && r->start <= covered; r = r->next)
            covered = r->end;
        if (length && covered < address + length)
            return -k_enomem;
        n = vm::vmspace_shared_objects(space, address, address + length, objects, k_max_objects);
    }
    Errno e = k_ok;
    for (size_t i = 0; i < n; ++i) {
        if (objects[i]->writeback && e == k_ok)
            e = objects[i]->writeback(*objects[i]);
        vm::vmobject_drop(objects[i]);
    }
    return -e;
}

} // namespace toll::sys
