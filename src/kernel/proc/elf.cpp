// The ELF file format as exec reads it (System V gABI, chapter 4): the file
// header and program headers of both classes, checked field by field before
// anything is loaded.
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/proc/exec_image.h"

namespace toll::proc {
namespace {

// ELF header fields (System V gABI, chapter 4), for both classes.
struct Elf32Header {
    uint8_t ident[16];
    uint16_t type, machine;
    uint32_t version, entry, phoff, shoff, flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct Elf32Phdr {
    uint32_t type, offset, vaddr, paddr, filesz, memsz, flags, align;
};
struct Elf64Header {
    uint8_t ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct Elf64Phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};
constexpr uint32_t k_pt_load = 1;
constexpr uint16_t k_et_exec = 2;

// Every size and address below comes from the file: each sum is checked
// before it is compared, so a field near the top of its type cannot wrap a
// bound check into passing (checked_add, lib/checked.h).
template <typename Header, typename Phdr>
Errno parse(const ExecFile& file, Image& image)
{
    Header header;
    if (!file.read(0, &header, sizeof header))
        return k_enoexec;
    const Header* h = &header;
    uint64_t table_size = uint64_t(h->phnum) * sizeof(Phdr);
    if (h->type != k_et_exec || h->phentsize != sizeof(Phdr) ||
        !range_within<uint64_t>(h->phoff, table_size, file.size))
        return k_enoexec;
    image.entry = static_cast<uintptr_t>(h->entry);
    image.phnum = h->phnum;
    image.phent = sizeof(Phdr);
    // Segments must end below the stack, with room to round up to a page.
    const uint64_t top = arch::user_space_limit() - vm::k_user_stack_size - arch::k_page_size;
    for (size_t i = 0; i < h->phnum; ++i) {
        Phdr p;
        if (!file.read(h->phoff + i * sizeof(Phdr), &p, sizeof p))
            return k_enoexec;
        const Phdr* ph = &p;
        if (ph->type != k_pt_load)
            continue;
        uint64_t offset = ph->offset, filesz = ph->filesz, vaddr = ph->vaddr, memsz = ph->memsz;
        if (image.count == sizeof image.segments / sizeof image.segments[0] ||
            !range_within<uint64_t>(offset, filesz, file.size) || filesz > memsz ||
            !range_within<uint64_t>(vaddr, memsz, top))
            return k_enoexec;
        if (vaddr < vm::k_user_space_floor)
            return k_eperm; // below mmap_min_addr, as Linux refuses it
        image.segments[image.count++] = {offset, vaddr, filesz, memsz, ph->flags};
        if (h->phoff >= offset && h->phoff - offset < filesz)
            image.phdr = static_cast<uintptr_t>(vaddr + (h->phoff - offset));
    }
    return image.count ? k_ok : k_enoexec;
}

} // namespace

Errno elf_read(const ExecFile& file, Image& image)
{
    uint8_t ident[20];
    if (!file.read(0, ident, sizeof ident) || memcmp(ident,
                                                     "\x7f"
                                                     "ELF",
                                                     4) != 0)
        return k_enoexec;
    unsigned cls = ident[4];
    if (cls != arch::elf_class())
        return k_enoexec;
    Errno e = cls == 1 ? parse<Elf32Header, Elf32Phdr>(file, image)
                       : parse<Elf64Header, Elf64Phdr>(file, image);
    if (e != k_ok)
        return e;
    uint16_t machine =
        static_cast<uint16_t>(ident[18] | (ident[19] << 8)); // e_machine, little-endian
    if (machine != arch::elf_machine())
        return k_enoexec;
    return k_ok;
}

} // namespace toll::proc
