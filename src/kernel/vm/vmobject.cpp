// File mappings' objects: their references, and the regions that map them.
#include "kernel/vm/vmobject.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/pageref.h"
#include "kernel/vm/vmspace_internal.h"
#include "lib/string.h"

namespace toll::vm {

VmObject* vmobject_create(size_t count)
{
    VmObject* object = make<VmObject>();
    if (!object)
        return nullptr;
    object->pages = static_cast<PhysAddr*>(kmalloc(count ? count * sizeof(PhysAddr) : 1));
    if (!object->pages) {
        destroy(object);
        return nullptr;
    }
    memset(object->pages, 0, count * sizeof(PhysAddr));
    object->count = count;
    return object;
}

void vmobject_hold(VmObject* object)
{
    __atomic_add_fetch(&object->refs, 1, __ATOMIC_RELAXED);
}

void vmobject_drop(VmObject* object)
{
    if (__atomic_sub_fetch(&object->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    for (size_t i = 0; i < object->count; ++i)
        if (PhysAddr pa = object->pages[i]; pa && pageref_release(pa) == 0)
            free_page(pa);
    kfree(object->pages);
    destroy(object);
}

Errno vmspace_map_object(VmSpace* space, uintptr_t start, size_t length, unsigned prot, bool shared,
                         VmObject* object, size_t first)
{
    TRY(vmspace_map(space, start, length, prot));
    Region* r = vmspace_find(space, start);
    r->shared = shared;
    r->object = object;
    r->object_page = first;
    vmobject_hold(object);
    return k_ok;
}

size_t vmspace_shared_objects(VmSpace* space, uintptr_t start, uintptr_t end, VmObject** out,
                              size_t max)
{
    size_t n = 0;
    for (Region* r = space->regions.first_ending_after(start); r && r->start < end && n < max;
         r = r->next)
        if (r->shared && r->object) {
            vmobject_hold(r->object);
            out[n++] = r->object;
        }
    return n;
}

} // namespace toll::vm
