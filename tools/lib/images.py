"""Private copies of boot images for one run: the loaderless disk image with
its command-line sector, and the archive of --add files.

The disk image is built by src/arch/i386/boot/bootsect/ (mkdisk.py describes
its layout); each run boots its own copy, so parallel runs never share one.
"""

import os
import shutil
import subprocess
import sys

from .machine import RunOptions, SetupError, build_file

SECTOR = 512
# bootsect.S / mkdisk.py: LBA 1 holds the NUL-terminated command line, and the
# boot sector carries the magic "TBS1" at 0x1F0 and ends in 55 AA.
CMDLINE_OFFSET = 1 * SECTOR
HEADER_OFFSET = 0x1F0
HEADER_MAGIC = b"TBS1"
BOOT_SIGNATURE = b"\x55\xaa"
DISK_IMAGE = ("i386", "arch", "i386", "boot", "bootsect", "toll-disk.img")


def private_disk(args: RunOptions, scratch: str) -> str:
    """Copies the disk image into @p scratch, writes args.cmdline into its
    command-line sector, and returns the copy's path."""
    source = args.kernel or build_file(args, *DISK_IMAGE)
    with open(source, "rb") as f:
        boot = f.read(SECTOR)
    if len(boot) != SECTOR or boot[-2:] != BOOT_SIGNATURE or \
            boot[HEADER_OFFSET:HEADER_OFFSET + len(HEADER_MAGIC)] != HEADER_MAGIC:
        raise SetupError(f"{source} is not a Toll disk image (with --boot disk, --kernel "
                         f"takes a toll-disk.img, not a kernel ELF)")
    line = args.cmdline.encode("utf-8")
    if b"\0" in line:
        raise SetupError("the command line cannot contain a NUL byte")
    if len(line) > SECTOR - 1:
        raise SetupError(f"the command line is {len(line)} bytes; the disk's command-line "
                         f"sector holds at most {SECTOR - 1} (plus the NUL)")
    disk = os.path.join(scratch, "disk.img")
    shutil.copyfile(source, disk)
    with open(disk, "r+b") as f:
        f.seek(CMDLINE_OFFSET)
        f.write(line.ljust(SECTOR, b"\0"))
    return disk


def extra_ramdisk(args: RunOptions, scratch: str) -> str:
    """Packs the --add files into a cpio archive (bin/<name>) that QEMU hands
    the kernel as a multiboot module; the kernel adds its files to /bin."""
    for path in args.add:
        if not os.path.isfile(path):
            raise SetupError(f"--add {path}: no such file")
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                raise SetupError(f"--add {path}: not an ELF program (build it with tools/cc)")
    out = os.path.join(scratch, "extra.cpio")
    tools = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    mkinitrd = os.path.join(tools, "mkinitrd")
    subprocess.run([sys.executable, mkinitrd, out] + list(args.add), check=True)
    return out
