// What exec.cpp, elf.cpp and exec_load.cpp share: the program's bytes as
// exec reads them, the image its ELF headers describe, and the loading of
// that image into a new address space. Not for the rest of the kernel.
#pragma once
#include "kernel/arch/physmem.h"
#include "kernel/kern/errno.h"
#include "kernel/vm/vmobject.h"
#include "kernel/vm/vmspace.h"
#include "lib/checked.h"
#include "lib/string.h"
#include <stddef.h>
#include <stdint.h>

namespace toll::proc {

/// A program header's p_flags (System V gABI, chapter 4).
constexpr uint32_t k_pf_x = 1, k_pf_w = 2, k_pf_r = 4;

/// The program's bytes: contiguous (the ramdisk's), or a disk file's pages.
struct ExecFile {
    const uint8_t* data = nullptr;  ///< the ramdisk's bytes, or nullptr
    vm::VmObject* object = nullptr; ///< the disk's pages, or nullptr
    size_t size = 0;

    // Copies [offset, offset+n) of the file to @p to; false past the end.
    bool read(uint64_t offset, void* to, size_t n) const
    {
        if (!range_within<uint64_t>(offset, n, size))
            return false;
        auto* out = static_cast<uint8_t*>(to);
        while (n) {
            size_t chunk = n;
            const uint8_t* from = piece(offset, &chunk);
            memcpy(out, from, chunk);
            out += chunk;
            offset += chunk;
            n -= chunk;
        }
        return true;
    }

    // Where byte @p offset is in memory; *n is cut to what lies contiguous there.
    const uint8_t* piece(uint64_t offset, size_t* n) const
    {
        if (data)
            return data + offset;
        size_t within = static_cast<size_t>(offset % arch::k_page_size);
        if (*n > arch::k_page_size - within)
            *n = arch::k_page_size - within;
        arch::PhysAddr pa = object->pages[offset / arch::k_page_size];
        return static_cast<const uint8_t*>(arch::phys_to_virt(pa)) + within;
    }
};

/// One PT_LOAD segment: where its bytes are in the file and go in memory.
struct Segment {
    uint64_t offset, vaddr, filesz, memsz;
    uint32_t flags;
};

/// What exec needs of a program's ELF headers: the entry point, where the
/// program headers are mapped (AT_PHDR), and the segments to load.
struct Image {
    uintptr_t entry = 0;
    uintptr_t phdr = 0;
    size_t phnum = 0, phent = 0;
    Segment segments[16];
    size_t count = 0;
};

/// Reads the ELF headers of @p file into @p image: a static executable of
/// the running port's class and machine, every segment inside the file and
/// below the stack. k_ok; k_enoexec for anything else; k_eperm for a
/// segment below the lowest user address (Linux's mmap_min_addr).
Errno elf_read(const ExecFile& file, Image& image);

/// Maps and fills @p image's segments in @p space (not active): read-only
/// segments of a disk file map its page-cache pages, the rest are copied.
/// Sets the break above the highest. k_ok, or k_enomem.
Errno load_segments(vm::VmSpace* space, const ExecFile& file, const Image& image);

/// Copies @p length bytes to user address @p to of @p space (not active),
/// faulting the pages in; they are left writable until load_segments or the
/// caller gives them their rights. False when memory is short.
bool write_user(vm::VmSpace* space, uintptr_t to, const void* from, size_t length);

} // namespace toll::proc
