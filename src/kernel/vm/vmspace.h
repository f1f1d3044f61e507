// A user address space: the regions a program may touch (with their rights)
// over a pmap. Anonymous memory is demand-zero: a page appears on its first
// touch. fork shares every present page copy-on-write (vm.fork=cow, the
// default): both processes map it read-only, and the first write to it makes
// a private copy, or takes the page back writable when no one else maps it.
// vm.fork=copy copies every present page at fork instead.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/result.h"
#include "kernel/kern/spinlock.h"
#include "kernel/vm/arch.h"
#include "kernel/vm/region_tree.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::vm {

/// A process's address space. Its lock ("vm.space") guards the regions,
/// the break and the pmap: each mmap, munmap, mprotect and brk holds it for
/// the whole call (sys_mem.cpp), a page fault for its handling, fork for the
/// walk of the parent. A copy to or from user memory is never made with it
/// held, since the copy may fault and take it again.
struct VmSpace {
    Spinlock lock{"vm.space"}; ///< guards everything below
    Pmap* pmap = nullptr;      ///< its page tables (what is mapped now)
    RegionTree regions;        ///< what may be mapped: the regions, with their rights
    uintptr_t image_start = 0; ///< the lowest page of the program's segments (/proc/PID/maps)
    uintptr_t brk_start = 0;   ///< end of the program's data: where the heap starts
    uintptr_t brk = 0;         ///< current program break (page-rounded up in regions)
    size_t resident_pages = 0; ///< pages mapped now (counted once per mapping)
    /// How many processes run in it: more than one after vfork or
    /// clone(CLONE_VM); the last to leave destroys it (proc::vm_drop).
    int processes = 1;
};

/// The lowest address a user mapping may cover (Linux's mmap_min_addr). The
/// pages below it are never mapped, so a null pointer, and a null pointer
/// plus any offset up to this much, always faults. The size is 1 MB + 64
/// KB, just above the reach of a real-mode segment:offset address
/// (0xffff:0xffff is 0x10ffef), so
/// that on a port with such a mode a program that slips into it finds
/// nothing of its own to execute there.
constexpr uintptr_t k_user_space_floor = (uintptr_t(1) << 20) + (uintptr_t(64) << 10);

/// Size of the user stack region created by exec.
constexpr size_t k_user_stack_size = 8u << 20;

/// Creates an empty address space; nullptr when memory is short.
VmSpace* vmspace_create();

/// Frees every page, region and page table of @p space, then @p space itself.
void vmspace_destroy(VmSpace* space);

/// Makes [start, start+length) a demand-zero region with @p prot, replacing
/// whatever was mapped there. Both must be page aligned and inside user space.
Errno vmspace_map(VmSpace* space, uintptr_t start, size_t length, unsigned prot);

/// Grows by @p length bytes the private region with rights @p prot that
/// ends at @p end (page aligned), in place, when there is one and nothing
/// lies in the way; otherwise maps [end, end+length) as vmspace_map does.
/// The caller checks that the new range overlaps no region. brk uses it, so
/// that the heap stays one region however many steps it grows by, and a
/// reservation can cover any aligned stretch of it (a fault in the heap may
/// reserve past the break, up to the next region).
Errno vmspace_grow(VmSpace* space, uintptr_t end, size_t length, unsigned prot);

/// Like vmspace_map, for MAP_SHARED anonymous memory: every page is made
/// present now (so that a child forked later maps the very same pages, even
/// those nobody touched yet), and fork shares them writable instead of
/// copy-on-write. k_enomem, with nothing mapped, when memory is short.
Errno vmspace_map_shared(VmSpace* space, uintptr_t start, size_t length, unsigned prot);

/// Removes [start, start+length): frees its pages; splits regions as needed.
Errno vmspace_unmap(VmSpace* space, uintptr_t start, size_t length);

/// Changes the rights of [start, start+length); k_enomem if any of it is unmapped.
Errno vmspace_protect(VmSpace* space, uintptr_t start, size_t length, unsigned prot);

/// Finds a free, page-aligned hole of @p length below the stack: its start,
/// or k_enomem if there is none.
Result<uintptr_t> vmspace_find_hole(VmSpace* space, size_t length);

/// Decides whether a new anonymous mapping of @p length bytes may be made.
/// Like Linux's heuristic overcommit, a request for more than the memory
/// now free (less a reserve for page tables and kernel stacks) is refused
/// with ENOMEM up front; smaller ones are granted and filled on demand, so a
/// program touching more than exists can still be killed by a fault.
bool vm_can_commit(size_t length);

/// Duplicates @p parent for fork: its regions, and every present page shared
/// copy-on-write (or copied, under vm.fork=copy or when page reference
/// counts are unavailable). Only mapped pages are visited: an empty page
/// table is skipped whole. nullptr when memory is short (nothing is left
/// allocated then; pages already shared stay read-only in the parent, and
/// its next write to each takes it back).
VmSpace* vmspace_fork(VmSpace* parent);

/// The region holding @p address, or nullptr. O(log regions). Inline: the
/// page fault asks it first, from another file.
inline Region* vmspace_find(VmSpace* space, uintptr_t address)
{
    return space->regions.find(address);
}

/// Whether any region overlaps [start, end). O(log regions).
bool vmspace_overlaps(VmSpace* space, uintptr_t start, uintptr_t end);

/// Makes the page holding @p address present, as a fault would: fills a
/// demand-zero page, or, for a write to a page shared copy-on-write, copies
/// it (or reuses it if this is its last mapping). Returns k_ok; k_efault if
/// the address is in no region or the access is not allowed; k_enomem when
/// memory is short (a page, or a page table, could not be had).
Errno vmspace_fault(VmSpace* space, uintptr_t address, bool write);

/// The page-fault handler for user addresses (from user mode, or from the
/// kernel inside copyin/copyout) in address space @p space, which the trap
/// code passes in (the running process's; nullptr in a kernel thread): fills
/// a demand-zero page or breaks copy-on-write sharing. Returns k_ok if the
/// access may be retried; k_efault for a real bad access; k_enomem if memory
/// is short (Linux then kills a program that faulted in user mode, as its
/// out-of-memory killer would; a copy in a system call fails).
Errno handle_user_fault(VmSpace* space, uintptr_t address, bool write, bool present);

} // namespace toll::vm
