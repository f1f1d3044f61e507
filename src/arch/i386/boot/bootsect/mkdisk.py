#!/usr/bin/python3
"""Builds toll-disk.img, the raw disk of the loaderless boot (bootsect.S).

LBA 0 the boot sector, its header patched with the kernel's size and entry,
and how many 4 KB pages the kernel spans in memory (.bss included), so that
tools/run --add can append an extra ramdisk the kernel's .bss does not cover;
LBA 1 the command-line sector (empty here; tools/run writes it per run);
LBA 2 onwards the kernel as a flat binary (llvm-objcopy -O binary of the ELF,
which starts at the kernel's lowest load address, 1 MB). The image is padded
to whole cylinders of 16 heads x 63 sectors, the geometry Bochs derives from
a flat image's size, so that its BIOS can read every sector.
"""

import argparse
import struct
import sys

SECTOR = 512
CMDLINE_LBA = 1
KERNEL_LBA = 2
# bootsect.S: header at 0x1F0 = magic "TBS1", kernel sectors, kernel entry,
# kernel pages (16 bits).
HEADER_OFFSET = 0x1F0
HEADER_MAGIC = 0x31534254
# src/arch/i386/layout.h: KERNEL_LOAD_PHYS, where bootsect.S copies the flat kernel.
KERNEL_LOAD_PHYS = 0x100000
# The boot sector copies above 1 MB with 32-bit offsets; keep the kernel well
# below the smallest memory Toll is run with.
MAX_KERNEL_BYTES = 64 << 20
CYLINDER_SECTORS = 16 * 63
PAGE_SIZE = 4096

# ELF specification (System V ABI, i386 supplement): the fields read here.
ELF_MAGIC = b"\x7fELF"
ELFCLASS32, ELFDATA2LSB, EM_386, PT_LOAD = 1, 1, 3, 1


def fail(message):
    sys.stderr.write(f"mkdisk.py: {message}\n")
    sys.exit(1)


def kernel_layout(elf_path):
    """Returns (entry, lowest load address, end of file contents, end of memory)
    of the kernel ELF."""
    with open(elf_path, "rb") as f:
        data = f.read()
    if data[:4] != ELF_MAGIC or data[4] != ELFCLASS32 or data[5] != ELFDATA2LSB:
        fail(f"{elf_path} is not a 32-bit little-endian ELF file")
    (machine,) = struct.unpack_from("<H", data, 18)
    if machine != EM_386:
        fail(f"{elf_path} is not an i386 ELF file")
    entry, phoff = struct.unpack_from("<II", data, 24)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    low, high, memory_end = None, None, 0
    for i in range(phnum):
        p_type, _, _, p_paddr, p_filesz, p_memsz = struct.unpack_from(
            "<IIIIII", data, phoff + i * phentsize)
        if p_type != PT_LOAD:
            continue
        memory_end = max(memory_end, p_paddr + p_memsz)
        if p_filesz == 0:
            continue
        low = p_paddr if low is None else min(low, p_paddr)
        high = p_paddr + p_filesz if high is None else max(high, p_paddr + p_filesz)
    if low is None:
        fail(f"{elf_path} has nothing to load")
    return entry, low, high, memory_end


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bootsect", required=True, help="the 512-byte boot sector")
    p.add_argument("--elf", required=True, help="the kernel ELF (for its entry and load address)")
    p.add_argument("--flat", required=True, help="the kernel as a flat binary")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--truncate", type=int, metavar="SECTORS",
                   help="for tests only: cut the image to SECTORS sectors, so that the "
                        "boot sector's reads fail")
    args = p.parse_args()

    with open(args.bootsect, "rb") as f:
        boot = bytearray(f.read())
    if len(boot) != SECTOR or boot[-2:] != b"\x55\xaa":
        fail(f"{args.bootsect} is {len(boot)} bytes; a boot sector is {SECTOR} ending in 55 AA")
    (magic,) = struct.unpack_from("<I", boot, HEADER_OFFSET)
    if magic != HEADER_MAGIC:
        fail(f"{args.bootsect} has no header at {HEADER_OFFSET:#x} (bootsect.S and mkdisk.py disagree)")

    entry, low, high, memory_end = kernel_layout(args.elf)
    with open(args.flat, "rb") as f:
        kernel = f.read()
    if low != KERNEL_LOAD_PHYS:
        fail(f"the kernel loads at {low:#x}; the boot sector puts it at {KERNEL_LOAD_PHYS:#x}")
    if len(kernel) != high - low:
        fail(f"{args.flat} is {len(kernel)} bytes, but the ELF spans {high - low}")
    if len(kernel) > MAX_KERNEL_BYTES:
        fail(f"the kernel is {len(kernel)} bytes, more than {MAX_KERNEL_BYTES}")
    if not low <= entry < high:
        fail(f"the entry point {entry:#x} is outside the kernel [{low:#x}, {high:#x})")

    kernel_sectors = -(-len(kernel) // SECTOR)
    kernel_pages = -(-(memory_end - low) // PAGE_SIZE)
    if kernel_pages > 0xFFFF:
        fail(f"the kernel spans {kernel_pages} pages; the header holds 16 bits")
    struct.pack_into("<IIH", boot, HEADER_OFFSET + 4, kernel_sectors, entry, kernel_pages)

    image = bytearray(boot)
    image += bytes(SECTOR)                       # CMDLINE_LBA: empty command line
    assert len(image) == KERNEL_LBA * SECTOR
    image += kernel
    image += bytes(-len(image) % (CYLINDER_SECTORS * SECTOR))
    if args.truncate is not None:
        if args.truncate * SECTOR >= len(image):
            fail(f"--truncate {args.truncate} does not cut the image")
        image = image[:args.truncate * SECTOR]
    with open(args.output, "wb") as f:
        f.write(image)


if __name__ == "__main__":
    main()
