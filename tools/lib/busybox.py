"""Debian's busybox-static, the userland Toll runs unmodified.

`tools/deps --busybox` downloads the busybox-static package of Debian's i386
and arm64 archives with apt-get download (never installed, never committed)
and keeps only /bin/busybox of each, in busybox_dir()/<arch>/busybox. The
system tests (tests/system/busybox.cmake) and `make qemu` find it here.
"""

import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable

ARCHES = ("i386", "arm64")
PACKAGE = "busybox-static"


def busybox_dir() -> str:
    """$TOLL_BUSYBOX_DIR, or ~/.cache/toll/busybox."""
    return os.environ.get("TOLL_BUSYBOX_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "toll", "busybox")


def binary(arch: str, directory: str | None = None) -> str | None:
    """The busybox binary of @arch, or None when tools/deps --busybox has not fetched it."""
    path = os.path.join(directory or busybox_dir(), arch, "busybox")
    return path if os.path.isfile(path) else None


def fetch(arch: str, dest: str, say: Callable[[str], None]) -> bool:
    """Downloads busybox-static:@arch and unpacks its /bin/busybox into
    @dest/@arch; returns True when it is there."""
    if binary(arch, dest):
        return True
    out_dir = os.path.join(dest, arch)
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as scratch:
        os.chmod(scratch, 0o755)  # apt's sandbox user writes the download here
        say(f"running: apt-get download {PACKAGE}:{arch} (about 1 MB)")
        if subprocess.run(["apt-get", "download", f"{PACKAGE}:{arch}"],
                          cwd=scratch).returncode != 0:
            say(f"FAILED: apt-get download {PACKAGE}:{arch} (is the {arch} architecture "
                f"enabled? dpkg --add-architecture {arch}; apt-get update)")
            return False
        debs = [f for f in os.listdir(scratch) if f.endswith(".deb")]
        if len(debs) != 1:
            say(f"apt-get download left {debs} in {scratch}")
            return False
        tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", os.path.join(scratch, debs[0])],
                               stdout=subprocess.PIPE)
        kept = False
        with tarfile.open(fileobj=tar.stdout, mode="r|") as archive:
            for member in archive:
                if member.isfile() and member.name.lstrip("./") == "bin/busybox":
                    source = archive.extractfile(member)
                    assert source is not None  # it is a regular file
                    partial = os.path.join(out_dir, "busybox.tmp")
                    with source, open(partial, "wb") as out:
                        out.write(source.read())
                    os.chmod(partial, 0o755)
                    os.replace(partial, os.path.join(out_dir, "busybox"))
                    kept = True
        if tar.wait() != 0 or not kept:
            say(f"dpkg-deb --fsys-tarfile {debs[0]} gave no /bin/busybox")
            return False
        with open(os.path.join(out_dir, "PACKAGE"), "w") as f:
            f.write(f"{debs[0]}\n")
    say(f"busybox for {arch} (from {debs[0]}) is in {out_dir}")
    return True
