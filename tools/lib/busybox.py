"""Debian's busybox-static, the userland Toll runs unmodified.

`tools/deps --busybox` downloads the busybox-static package of Debian's i386
and arm64 archives with apt-get download (never installed, never committed)
and keeps only /bin/busybox of each, in busybox_dir()/<arch>/busybox. The
system tests (tests/system/busybox.cmake) find it here. It also fetches the
testsuite/ of the busybox source package from the Debian pool (apt-get
source needs a deb-src entry, which a default Debian install lacks), into
busybox_dir()/testsuite.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
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


def testsuite_dir(directory: str | None = None) -> str | None:
    """busybox's testsuite/ from the Debian source package, or None when not fetched."""
    path = os.path.join(directory or busybox_dir(), "testsuite")
    return path if os.path.isfile(os.path.join(path, "OPTIONFLAGS")) else None


def mirror() -> str:
    """The Debian mirror apt uses (the first deb URI of its sources)."""
    candidates = []
    for d in ("/etc/apt/sources.list.d",):
        if os.path.isdir(d):
            candidates += [os.path.join(d, f) for f in sorted(os.listdir(d))]
    candidates.append("/etc/apt/sources.list")
    for path in candidates:
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        m = re.search(r"^URIs:\s*(\S+/debian)\s*$", text, re.M) or \
            re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)\s", text, re.M)
        if m:
            return m.group(1).rstrip("/")
    return "http://deb.debian.org/debian"


def source_version() -> str | None:
    """The version of the busybox source package the binary came from (no epoch)."""
    out = subprocess.run(["apt-cache", "show", f"{PACKAGE}:i386"], capture_output=True,
                         text=True).stdout
    m = re.search(r"^Source: busybox \((?:\d+:)?([^)]+)\)", out, re.M)
    if m:
        return m.group(1)
    m = re.search(r"^Version: (?:\d+:)?(\S+)", out, re.M)
    return m.group(1) if m else None


def fetch_testsuite(dest: str, say: Callable[[str], None]) -> bool:
    """Downloads the busybox source package (its .dsc, the upstream tarball
    and Debian's tarball) from the Debian pool, checks each file against the
    .dsc's SHA-256 and keeps testsuite/ plus an OPTIONFLAGS file made from
    Debian's configuration of busybox-static (what the testsuite's runtest
    builds from .config)."""
    if testsuite_dir(dest):
        return True
    version = source_version()
    if not version:
        say(f"apt knows no {PACKAGE} package: apt-get update")
        return False
    pool = f"{mirror()}/pool/main/b/busybox"
    with tempfile.TemporaryDirectory(dir=dest) as scratch:
        def get(name: str) -> str | None:
            path = os.path.join(scratch, name)
            say(f"fetching {pool}/{name}")
            try:
                with urllib.request.urlopen(f"{pool}/{name}", timeout=60) as r, \
                        open(path, "wb") as out:
                    out.write(r.read())
            except OSError as e:
                say(f"FAILED: {pool}/{name}: {e}")
                return None
            return path
        dsc = get(f"busybox_{version}.dsc")
        if not dsc:
            return False
        with open(dsc) as f:
            text = f.read()
        block = re.search(r"^Checksums-Sha256:\n((?: .+\n)+)", text, re.M)
        if not block:
            say(f"{dsc} lists no SHA-256 checksums")
            return False
        sums = {name: digest for digest, _, name in
                (line.split() for line in block.group(1).splitlines())}
        tarballs = {}
        for name, digest in sums.items():
            kind = "orig" if ".orig.tar." in name else "debian" if ".debian.tar." in name else None
            if not kind:
                continue
            path = get(name)
            if not path:
                return False
            with open(path, "rb") as blob:
                if hashlib.sha256(blob.read()).hexdigest() != digest:
                    say(f"{name}: SHA-256 differs from the .dsc's")
                    return False
            tarballs[kind] = path
        if set(tarballs) != {"orig", "debian"}:
            say(f"the .dsc names {sorted(sums)}: no upstream and Debian tarball")
            return False
        out_dir = os.path.join(dest, "testsuite.tmp")
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        with tarfile.open(tarballs["orig"]) as archive:
            for member in archive:
                parts = member.name.split("/", 2)
                if len(parts) == 3 and parts[1] == "testsuite" and member.isfile():
                    if parts[2].startswith("/") or ".." in parts[2].split("/"):
                        continue  # never outside out_dir
                    target = os.path.join(out_dir, parts[2])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    source = archive.extractfile(member)
                    assert source is not None  # it is a regular file
                    with source, open(target, "wb") as out:
                        out.write(source.read())
                    os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)
        config = None
        with tarfile.open(tarballs["debian"]) as archive:
            for member in archive:
                if member.name == "debian/config/pkg/static" and member.isfile():
                    source = archive.extractfile(member)
                    assert source is not None  # it is a regular file
                    config = source.read().decode()
        if config is None:
            say("the Debian tarball has no debian/config/pkg/static")
            return False
        # testsuite/runtest: OPTIONFLAGS=:$(sed -nr 's/^CONFIG_//p' .config | sed 's/=.*//' ...):
        options = [m.group(1) for m in re.finditer(r"^CONFIG_(\w+)=", config, re.M)]
        with open(os.path.join(out_dir, "OPTIONFLAGS"), "w") as f:
            f.write(":" + ":".join(options) + ":\n")
        final = os.path.join(dest, "testsuite")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(out_dir, final)
    say(f"busybox {version}'s testsuite is in {final}")
    return True
