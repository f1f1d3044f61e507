// Loading a program's segments into a new address space: the read-only
// segments of a disk file map its page-cache pages, the others are copied
// in page by page through the kernel's view of the new space's memory.
#include "kernel/arch/cpu.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/proc/exec_image.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_exec_pages_mapped, "proc.exec.file_pages_mapped");
TOLL_COUNTER(g_exec_bytes_copied, "proc.exec.bytes_copied");

unsigned prot_of(uint32_t flags)
{
    return ((flags & k_pf_r) ? arch::k_prot_read : 0) |
           ((flags & k_pf_w) ? arch::k_prot_write : 0) | ((flags & k_pf_x) ? arch::k_prot_exec : 0);
}

// Returns the kernel address of user page @p va in @p space, faulting it in.
uint8_t* user_page(vm::VmSpace* space, uintptr_t va)
{
    Optional<arch::Mapping> m = arch::pmap_extract(space->pmap, va);
    if (!m) {
        vm::Region* r = vm::vmspace_find(space, va);
        if (!r)
            return nullptr;
        unsigned saved = r->prot;
        r->prot = arch::k_prot_read | arch::k_prot_write; // the kernel fills it
        // The region is there and writable now: the only failure left is
        // k_enomem, which is what load_segments reports for a nullptr.
        bool ok = vm::vmspace_fault(space, va, true) == k_ok;
        r->prot = saved;
        // The page stays writable until load_segments gives each region
        // its rights in one pass: whole superpages keep their size, and an
        // executable one has its instruction cache synced once.
        if (!ok || !(m = arch::pmap_extract(space->pmap, va)))
            return nullptr;
    }
    arch::PhysAddr pa = m.value().pa;
    return static_cast<uint8_t*>(arch::phys_to_virt(pa & ~arch::PhysAddr(arch::k_page_size - 1)));
}

} // namespace

// Copies @p length bytes to user address @p to of @p space (not active).
bool write_user(vm::VmSpace* space, uintptr_t to, const void* from, size_t length)
{
    auto* src = static_cast<const uint8_t*>(from);
    while (length) {
        uintptr_t page = to & ~uintptr_t(arch::k_page_size - 1);
        size_t offset = to - page;
        size_t n = arch::k_page_size - offset < length ? arch::k_page_size - offset : length;
        uint8_t* k = user_page(space, page);
        if (!k)
            return false;
        memcpy(k + offset, src, n);
        src += n;
        to += n;
        length -= n;
    }
    return true;
}

namespace {

// Copies file bytes [offset, offset+length) to user address @p to of @p space.
bool copy_segment(vm::VmSpace* space, uintptr_t to, const ExecFile& file, uint64_t offset,
                  size_t length)
{
    g_exec_bytes_copied.add(length);
    while (length) {
        size_t n = length;
        const uint8_t* from = file.piece(offset, &n);
        if (!write_user(space, to, from, n))
            return false;
        to += n;
        offset += n;
        length -= n;
    }
    return true;
}

constexpr uintptr_t k_page_mask = arch::k_page_size - 1;

// Whether segment @p i can be mapped from the file's pages: a read-only
// segment of a disk file, at the same offset within its page in the file
// as in memory, with no zero-filled tail, sharing no page with any other
// segment (a shared page takes both segments' bytes and rights, so it is
// the program's own copy).
bool mappable(const ExecFile& file, const Image& image, size_t i)
{
    const Segment& s = image.segments[i];
    if (!file.object || (s.flags & k_pf_w) || s.filesz != s.memsz || s.filesz == 0 ||
        (s.offset & k_page_mask) != (s.vaddr & k_page_mask))
        return false;
    uint64_t start = s.vaddr & ~uint64_t(k_page_mask),
             end = (s.vaddr + s.memsz + k_page_mask) & ~uint64_t(k_page_mask);
    for (size_t j = 0; j < image.count; ++j) {
        const Segment& o = image.segments[j];
        uint64_t o_start = o.vaddr & ~uint64_t(k_page_mask),
                 o_end = (o.vaddr + o.memsz + k_page_mask) & ~uint64_t(k_page_mask);
        if (j != i && o_start < end && start < o_end)
            return false;
    }
    uint64_t last_page = (s.offset + s.filesz - 1) / arch::k_page_size;
    return last_page < file.object->count;
}

} // namespace

Errno load_segments(vm::VmSpace* space, const ExecFile& file, const Image& image)
{
    constexpr uintptr_t k_mask = k_page_mask;
    uintptr_t highest = 0, lowest = UINTPTR_MAX;
    for (size_t i = 0; i < image.count; ++i) {
        const Segment& s = image.segments[i];
        uintptr_t start = static_cast<uintptr_t>(s.vaddr) & ~k_mask;
        uintptr_t end = static_cast<uintptr_t>(s.vaddr + s.memsz + k_mask) & ~k_mask;
        if (start < lowest)
            lowest = start;
        if (mappable(file, image, i)) {
            // The file's pages themselves, entered at the first touch of each.
            TRY(vm::vmspace_map_object(space, start, end - start, prot_of(s.flags), false,
                                       file.object,
                                       static_cast<size_t>(s.offset / arch::k_page_size)));
            g_exec_pages_mapped.add((end - start) / arch::k_page_size);
            if (end > highest)
                highest = end;
            continue;
        }
        // A page shared with the previous segment keeps its contents and gets
        // the union of both segments' rights.
        for (vm::Region* r = space->regions.first(); r; r = r->next)
            if (r->end > start && r->start < end) {
                r->prot |= prot_of(s.flags);
                arch::pmap_protect(space->pmap, start, start + arch::k_page_size, r->prot);
                start = r->end;
            }
        if (end > start)
            TRY(vm::vmspace_map(space, start, end - start, prot_of(s.flags)));
        if (!copy_segment(space, static_cast<uintptr_t>(s.vaddr), file, s.offset,
                          static_cast<size_t>(s.filesz)))
            return k_enomem;
        if (end > highest)
            highest = end;
    }
    for (vm::Region* r = space->regions.first(); r; r = r->next)
        TRY(arch::pmap_protect(space->pmap, r->start, r->end, r->prot));
    space->brk_start = space->brk = highest;
    space->image_start = lowest < highest ? lowest : highest;
    return k_ok;
}

} // namespace toll::proc
