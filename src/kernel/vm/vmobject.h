// The pages a file mapping maps: a run of a file's page-cache pages, held
// (pinned) for as long as any region maps them, so that a page fault in the
// mapping only enters a page that is in memory already and never waits for
// the disk (the fault runs under the address space's spinlock). The file
// system fills an object at mmap or exec, with its own lock, and says how
// changes made through a shared mapping go back to the file (msync).
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/vm/arch.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::vm {

struct VmObject;

/// Writes the pages of @p object back to its file (msync of a shared mapping).
using VmWriteBack = Errno (*)(VmObject& object);

/// The pages of one file mapping: a run of the file's page-cache pages, each
/// pinned by a page reference of the object's, for as long as a region maps
/// them; who the file is, for its write-back.
struct VmObject {
    int refs = 1;              ///< regions that map it, and the file system's hold while it fills
    size_t count = 0;          ///< pages
    PhysAddr* pages = nullptr; ///< [count], each with one page reference of the object's
    uint64_t file_page = 0;    ///< the file's page number of pages[0]
    void* owner = nullptr;     ///< the file system's note of the file
    uint32_t ino = 0;          ///< the file's inode number (for the file system)
    VmWriteBack writeback = nullptr; ///< nullptr: nothing to write back
};

/// A new object of @p count pages, none filled yet (0 entries), with one
/// reference; nullptr when memory is short.
VmObject* vmobject_create(size_t count);

/// One more region maps @p object.
void vmobject_hold(VmObject* object);

/// Drops a reference: the last one gives back the object's page references
/// (a page nobody else holds is freed) and frees the object.
void vmobject_drop(VmObject* object);

/// Whether the instructions in page @p pa are known to be visible to
/// instruction fetch: set once a page-cache page has been synced, cleared
/// whenever it is written. Kept per physical page beside its reference
/// count (as Linux keeps PG_dcache_clean in the page's flags).
bool page_icache_clean(PhysAddr pa);
/// Records that @p pa was synced (@p clean) or written. A page that a
/// shared writable mapping may change at any moment is never recorded
/// clean while page_set_writable_shared says so.
void page_set_icache_clean(PhysAddr pa, bool clean);
void page_set_writable_shared(PhysAddr pa, bool writable);

/// Maps [start, start+length) privately or shared with @p prot, its pages
/// those of @p object from index @p first on (replacing whatever was mapped
/// there). A fault enters the object's page; a write to a private mapping
/// copies it first. The region holds a reference on @p object.
Errno vmspace_map_object(struct VmSpace* space, uintptr_t start, size_t length, unsigned prot,
                         bool shared, VmObject* object, size_t first);

/// The objects of the shared regions overlapping [start, end), each with a
/// reference for the caller (up to @p max); how many.
size_t vmspace_shared_objects(struct VmSpace* space, uintptr_t start, uintptr_t end, VmObject** out,
                              size_t max);

} // namespace toll::vm
