#!/usr/bin/python3
"""The file-system test on a real disk image: Debian's mke2fs makes an ext2
image, the kernel boots with it attached (tools/run --disk), disk_workload
works it at /mnt, and then the host's e2fsck -fn must find nothing wrong and
debugfs must read back what the guest wrote. Hostile images follow: one with
a corrupt superblock (the kernel must refuse to mount it) and one with a
directory entry of length 0, a block pointer past the end of the disk, a
directory whose ".." is itself and a directory hard-linked into itself (each
use must fail with an error, or work, never hang or panic).

    disk_fs.py --work DIR -- <tools/run arguments without --disk and --cmdline>
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
RUN = os.path.join(TOOLS, "run")
BLOCK = 1024
# ext2 superblock (e2fsprogs lib/ext2fs/ext2_fs.h): s_inodes_count, first field, at byte 1024.
SUPERBLOCK = 1024


def pattern(n: int, size: int) -> bytes:
    """disk_workload.c's pattern(n, i) for i < size."""
    return bytes(((i * 7 + n * 13 + (i >> 10)) & 0xFF) for i in range(size))


def sh(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"disk_fs: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r


def make_image(work: str, name: str, seed: dict[str, bytes], blocks: int = 4096) -> str:
    tree = os.path.join(work, name + ".d")
    shutil.rmtree(tree, ignore_errors=True)
    for path, data in seed.items():
        full = os.path.join(tree, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    image = os.path.join(work, name + ".img")
    if os.path.exists(image):
        os.remove(image)
    sh(["mke2fs", "-q", "-F", "-t", "ext2", "-b", str(BLOCK), "-d", tree, image, str(blocks)])
    return image


def boot(run_args: list[str], image: str, program: str, expect: list[str] = []) -> str:
    cmd = [sys.executable, RUN, *run_args, "--disk", image, "--cmdline", f"run={program}"]
    for text in expect:
        cmd += ["--expect-output", text]
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        sys.exit(f"disk_fs: the boot running {program} failed:\n{out[-4000:]}")
    return out


def debugfs(image: str, request: str, write: bool = False) -> str:
    return sh(["debugfs"] + (["-w"] if write else []) + ["-R", request, image]).stdout


def inode_of(image: str, path: str) -> int:
    out = debugfs(image, f"stat {path}")
    return int(out.split()[1])


def first_block(image: str, path: str) -> int:
    return int(debugfs(image, f"blocks {path}").split()[0])


def patch(image: str, offset: int, data: bytes) -> None:
    with open(image, "r+b") as f:
        f.seek(offset)
        f.write(data)


def workload(work: str, run_args: list[str]) -> None:
    image = make_image(work, "workload", {"hello": b"hello from ext2\n"})
    boot(run_args, image, "/bin/disk_workload")
    r = sh(["e2fsck", "-fn", image], check=False)
    if r.returncode != 0:
        sys.exit(f"disk_fs: e2fsck -fn finds the image damaged ({r.returncode}):\n"
                 f"{r.stdout}{r.stderr}")
    print("disk_fs: e2fsck -fn finds the image clean after the workload")
    for path, n, size in [("/data/victim", 2, 40 * 1024), ("/data/large", 3, 5000),
                          ("/many/file-with-a-longish-name-077", 77, 77 * 37)]:
        got = subprocess.run(["debugfs", "-R", f"cat {path}", image], capture_output=True).stdout
        if got != pattern(n, size):
            sys.exit(f"disk_fs: {path} on the image is not what the guest wrote "
                     f"({len(got)} bytes, expected {size})")
    # The page-cache part: a MAP_SHARED write, a child's, and a write()
    # seen through the mapping, made durable by msync (at the page size's
    # offset, 4 KB or 16 KB).
    got = subprocess.run(["debugfs", "-R", "cat /data/cached", image], capture_output=True).stdout
    want = bytearray(pattern(5, 64 * 1024))
    ok = False
    for page in (4096, 16384):
        w = bytearray(want)
        w[page + 100:page + 112] = b"shared write"
        w[page + 200] = ord("C")
        w[page + 300:page + 308] = b"by write"
        ok = ok or got == bytes(w)
    if not ok:
        sys.exit("disk_fs: /data/cached lacks what the guest wrote through MAP_SHARED")
    print("disk_fs: what the guest wrote through a shared mapping is on the image")
    for gone in ["/data/small", "/data/log", "/many/moved"]:
        if "File not found" not in sh(["debugfs", "-R", f"stat {gone}", image]).stderr:
            sys.exit(f"disk_fs: {gone} should be gone from the image")
    print("disk_fs: debugfs reads back the guest's files; the removed ones are gone", flush=True)


def hostile(work: str, run_args: list[str]) -> None:
    # A corrupt superblock: the inode count no longer matches the groups.
    image = make_image(work, "badsuper", {"hello": b"hello from ext2\n"})
    with open(image, "rb") as f:
        f.seek(SUPERBLOCK)
        count = struct.unpack("<I", f.read(4))[0]
    patch(image, SUPERBLOCK, struct.pack("<I", count + 7))
    # (tools/run fails the boot unless the console says why the disk was refused.)
    boot(run_args, image, "/bin/disk_workload absent",
         ["not mounted: inode count does not match the groups"])
    print("disk_fs: a corrupt superblock is refused")

    seed = {"hello": b"hello from ext2\n", "looped/a": b"a\n", "pointer/file": b"x" * 3000,
            "dotdot/keep": b"k\n", "cycle/f": b"cycle\n", "elsewhere/keep": b"e\n"}
    image = make_image(work, "damaged", seed)
    # looped: the ".." entry's rec_len (bytes 4-5 of the entry at 12) is 0.
    patch(image, first_block(image, "/looped") * BLOCK + 12 + 4, struct.pack("<H", 0))
    # pointer/file: its first block pointer lies far past the end of the disk.
    debugfs(image, "sif /pointer/file block[0] 9999999", write=True)
    # dotdot: its ".." names itself, a loop for whoever climbs the tree.
    patch(image, first_block(image, "/dotdot") * BLOCK + 12,
          struct.pack("<I", inode_of(image, "/dotdot")))
    # cycle/self: a hard link to the directory itself.
    debugfs(image, "link /cycle /cycle/self", write=True)
    boot(run_args, image, "/bin/disk_workload hostile")
    print("disk_fs: a damaged image's damage fails with errors; the kernel lives on")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", required=True, help="scratch directory for the images")
    p.add_argument("--no-hostile", action="store_true")
    p.add_argument("run_args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    run_args = [x for x in a.run_args if x != "--"]
    os.makedirs(a.work, exist_ok=True)
    for tool in ("mke2fs", "e2fsck", "debugfs"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}") \
                and not os.path.exists(f"/sbin/{tool}"):
            sys.exit(f"disk_fs: {tool} is missing: install e2fsprogs (tools/deps)")
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    workload(a.work, run_args)
    if not a.no_hostile:
        hostile(a.work, run_args)
    print("disk_fs: PASS")


if __name__ == "__main__":
    main()
