"""Private copies of boot images for one run: the loaderless disk image with
its command-line sector (and the --add files appended), and the archive of
--add files.

The disk image is built by src/arch/i386/boot/bootsect/ (mkdisk.py describes
its layout); each run boots its own copy, so parallel runs never share one.
"""

import os
import shutil
import struct
import subprocess
import sys

from .machine import RunOptions, SetupError, build_file

SECTOR = 512
# bootsect.S / mkdisk.py: LBA 1 holds the NUL-terminated command line, LBA 2
# on the kernel; the boot sector carries the magic "TBS1" at 0x1F0, then the
# kernel's sectors (32 bits), entry (32) and pages in memory (16), and ends
# in 55 AA. The boot sector copies every kernel sector to 1 MB onwards.
CMDLINE_OFFSET = 1 * SECTOR
KERNEL_OFFSET = 2 * SECTOR
HEADER_OFFSET = 0x1F0
HEADER_MAGIC = b"TBS1"
BOOT_SIGNATURE = b"\x55\xaa"
PAGE_SIZE = 4096
# src/arch/i386/layout.h: KERNEL_LOAD_PHYS, and BOOT_MAPPED_MB, the memory the
# boot page tables map (the extra ramdisk must lie inside it).
KERNEL_LOAD_PHYS = 0x100000
BOOT_MAPPED_BYTES = 16 << 20
# mkdisk.py: the image is whole cylinders of 16 heads x 63 sectors, the
# geometry Bochs derives from a flat image's size.
CYLINDER_BYTES = 16 * 63 * SECTOR
DISK_IMAGE = ("i386", "arch", "i386", "boot", "bootsect", "toll-disk.img")


def private_disk(args: RunOptions, scratch: str) -> str:
    """Copies the disk image into @p scratch, appends the --add files (as an
    archive the boot sector loads with the kernel, named on the command line
    as i386.ramdisk=ADDRESS,BYTES), writes args.cmdline into its command-line
    sector, and returns the copy's path."""
    source = args.kernel or build_file(args, *DISK_IMAGE)
    with open(source, "rb") as f:
        boot = f.read(SECTOR)
    if len(boot) != SECTOR or boot[-2:] != BOOT_SIGNATURE or \
            boot[HEADER_OFFSET:HEADER_OFFSET + len(HEADER_MAGIC)] != HEADER_MAGIC:
        raise SetupError(f"{source} is not a Toll disk image (with --boot disk, --kernel "
                         f"takes a toll-disk.img, not a kernel ELF)")
    disk = os.path.join(scratch, "disk.img")
    shutil.copyfile(source, disk)
    cmdline = args.cmdline
    if args.add:
        base, size = append_ramdisk(disk, boot, extra_ramdisk(args, scratch))
        cmdline = f"i386.ramdisk={base:#x},{size} {cmdline}".strip()
    line = cmdline.encode("utf-8")
    if b"\0" in line:
        raise SetupError("the command line cannot contain a NUL byte")
    if len(line) > SECTOR - 1:
        raise SetupError(f"the command line is {len(line)} bytes; the disk's command-line "
                         f"sector holds at most {SECTOR - 1} (plus the NUL)")
    with open(disk, "r+b") as f:
        f.seek(CMDLINE_OFFSET)
        f.write(line.ljust(SECTOR, b"\0"))
    return disk


def append_ramdisk(disk: str, boot: bytes, archive: str) -> tuple[int, int]:
    """Writes @p archive into @p disk at the first page past the kernel's
    memory (its .bss would overwrite anything nearer), makes the boot sector
    load up to its end, and returns (physical address, size) of the archive."""
    sectors, _, pages = struct.unpack_from("<IIH", boot, HEADER_OFFSET + len(HEADER_MAGIC))
    if pages == 0:
        raise SetupError("this disk image predates --add (its header does not say how far "
                         "the kernel's memory reaches): rebuild it")
    with open(archive, "rb") as f:
        data = f.read()
    base = KERNEL_LOAD_PHYS + pages * PAGE_SIZE
    if base + len(data) > BOOT_MAPPED_BYTES:
        raise SetupError(f"--add: the files take {len(data)} bytes; past the kernel, the boot "
                         f"disk has room for {BOOT_MAPPED_BYTES - base}")
    offset = KERNEL_OFFSET + (base - KERNEL_LOAD_PHYS)
    loaded = -(-(offset + len(data) - KERNEL_OFFSET) // SECTOR)
    header = bytearray(boot)
    struct.pack_into("<I", header, HEADER_OFFSET + len(HEADER_MAGIC), max(sectors, loaded))
    with open(disk, "r+b") as f:
        f.write(header)
        f.seek(offset)
        f.write(data)
        end = f.tell()
        f.write(bytes(-end % CYLINDER_BYTES))
    return base, len(data)


def extra_ramdisk(args: RunOptions, scratch: str) -> str:
    """Packs the --add files into a cpio archive (bin/<name>) that QEMU hands
    the kernel as a multiboot module; the kernel adds its files to /bin. A
    file given as SRC=PATH (any file: data, a script) is stored at PATH."""
    for given in args.add:
        path, placed, _ = given.partition("=")
        if not os.path.isfile(path):
            raise SetupError(f"--add {path}: no such file")
        if placed:
            continue
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                raise SetupError(f"--add {path}: not an ELF program (build it with tools/cc)")
    out = os.path.join(scratch, "extra.cpio")
    tools = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    mkinitrd = os.path.join(tools, "mkinitrd")
    subprocess.run([sys.executable, mkinitrd, out] + list(args.add), check=True)
    return out
