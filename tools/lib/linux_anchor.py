"""The Linux columns of tools/bench: Toll's own benchmark programs run on
Debian's i386 Linux kernel under the same deterministic QEMU.

Toll's benchmarks are static musl programs for the Linux i386 system-call
ABI, so the very same binaries run on Linux. A configuration of
tests/bench/configs.toml with `kernel = "linux"` boots the kernel that
`tools/deps --linux` fetched (linux-image-*-686-pae-unsigned, unpacked into
kernel_dir()) with an initramfs this module writes: /init is
src/user/linux/linux_init.c, /bin holds the benchmark programs, /suite lists
the runs. One boot runs the whole suite of the configuration in order.

The QEMU flags are tools/run --deterministic's (-icount shift=0,sleep=off,
the default CPU, the same memory size) plus a pinned guest clock,
-rtc base=2024-01-01T00:00:00,clock=vm: Linux seeds its random number
generator, and with it address-space randomisation, from the clock, so an
unpinned clock makes fork's path length vary from boot to boot.
The kernel command line gets `console=ttyS0 quiet`, the configuration's
words (e.g. `nopti vdso32=0`), and linux_init prints what /sys says about
Meltdown, which tools/bench checks against the configuration's `pti`.
"""

import glob
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable
from typing import IO, Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RTC = "base=2024-01-01T00:00:00,clock=vm"
MEMORY_MB = 128  # tools/run's default -m


class LinuxError(Exception):
    """A problem with the Linux runs, with what to do about it."""


def kernel_dir() -> str:
    """Where tools/deps --linux puts the kernel: $TOLL_LINUX_DIR or ~/.cache/toll/linux."""
    return os.environ.get("TOLL_LINUX_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "toll", "linux")


def find_kernel(directory: str | None = None) -> str | None:
    """The newest vmlinuz-* in @directory (default kernel_dir()), or None."""
    found = glob.glob(os.path.join(directory or kernel_dir(), "vmlinuz-*"))

    def version(path: str) -> list[int]:
        return [int(n) for n in re.findall(r"\d+", os.path.basename(path))]
    return max(found, key=version) if found else None


def package_name(directory: str | None = None) -> str:
    """The .deb the kernel came from, as tools/deps recorded it."""
    try:
        with open(os.path.join(directory or kernel_dir(), "PACKAGE")) as f:
            return f.read().strip()
    except OSError:
        return "unknown package"


# cpio "newc" (the format of Linux's initramfs, Documentation/driver-api/
# early-userspace/buffer-format.rst): a 110-byte ASCII header, the name, the
# data, each padded to 4 bytes.
def _entry(out: IO[bytes], ino: int, mode: int, name: str, data: bytes = b"",
           rdev: tuple[int, int] = (0, 0)) -> None:
    name_bytes = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_bytes), 0]
    out.write(b"070701" + b"".join(b"%08X" % f for f in fields) + name_bytes)
    out.write(b"\0" * (-out.tell() % 4))
    out.write(data)
    out.write(b"\0" * (-out.tell() % 4))


def write_initramfs(path: str, init: str, programs: Iterable[str],
                    suite_lines: list[str]) -> None:
    """Writes the initramfs: /init, /bin/<programs>, /suite, and the device
    nodes a program needs before anything mounts devtmpfs."""
    with open(path, "wb") as out:
        ino = 1
        for d in ("dev", "bin", "sys", "proc"):
            _entry(out, ino, stat.S_IFDIR | 0o755, d)
            ino += 1
        # (major, minor) from Linux's Documentation/admin-guide/devices.txt.
        for name, rdev in (("dev/console", (5, 1)), ("dev/null", (1, 3)), ("dev/zero", (1, 5))):
            _entry(out, ino, stat.S_IFCHR | 0o666, name, rdev=rdev)
            ino += 1
        with open(init, "rb") as f:
            _entry(out, ino, stat.S_IFREG | 0o755, "init", f.read())
        ino += 1
        for program in sorted(programs):
            with open(program, "rb") as f:
                _entry(out, ino, stat.S_IFREG | 0o755, "bin/" + os.path.basename(program),
                       f.read())
            ino += 1
        _entry(out, ino, stat.S_IFREG | 0o644, "suite", "".join(
            line + "\n" for line in suite_lines).encode())
        _entry(out, 0, 0, "TRAILER!!!")


def qemu_command(kernel: str, initramfs: str, cmdline: str) -> list[str]:
    qemu = shutil.which("qemu-system-i386")
    if not qemu:
        raise LinuxError("qemu-system-i386 is not installed (tools/deps installs it)")
    return [qemu, "-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
            "-m", str(MEMORY_MB), "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
            "-icount", "shift=0,sleep=off", "-rtc", RTC,
            "-kernel", kernel, "-initrd", initramfs, "-append", cmdline]


def split_runs(console: str) -> tuple[dict[str, tuple[int, str]], str | None, bool]:
    """{bench name: (exit status, console text of that run)} and the
    LINUX-PTI line's text, from the console of one boot."""
    runs: dict[str, tuple[int, str]] = {}
    current: str | None = None
    pti: str | None = None
    done = False
    lines: list[str] = []
    for line in console.splitlines():
        m = re.match(r"LINUX-(BENCH|EXIT|PTI|DONE)\b ?(.*)$", line.strip())
        if not m:
            if current is not None:
                lines.append(line)
            continue
        kind, rest = m.groups()
        if kind == "PTI":
            pti = rest
        elif kind == "BENCH":
            current, lines = rest, []
        elif kind == "EXIT" and current is not None:
            status = int(rest.rsplit(" ", 1)[-1])
            runs[current] = (status, "\n".join(lines))
            current = None
        elif kind == "DONE":
            done = True
    return runs, pti, done


def run_config(build: str, config: dict[str, Any], suite: list[dict[str, Any]], log_path: str,
               timeout: float = 600) -> dict[str, str]:
    """Boots Linux once for @config and runs every benchmark of @suite.
    Returns {bench name: console text}; raises LinuxError on any failure."""
    kernel = find_kernel()
    if not kernel:
        raise LinuxError(f"no Linux kernel in {kernel_dir()}: run `tools/deps --linux` "
                         "(as root; it downloads Debian's linux-image-*-686-pae-unsigned)")
    init = os.path.join(build, "i386", "user", "linux", "linux_init")
    if not os.path.exists(init):
        raise LinuxError(f"{init} does not exist: build first (make)")
    programs: set[str] = set()
    lines: list[str] = []
    for b in suite:
        path = os.path.join(build, "i386", "user")
        found = glob.glob(os.path.join(path, "*", b["program"]))
        if not found:
            raise LinuxError(f"no built program {b['program']} under {path}")
        programs.add(found[0])
        lines.append(" ".join([b["name"], b["program"]] + b["args"]))
    with tempfile.TemporaryDirectory(prefix="toll-linux-") as scratch:
        initramfs = os.path.join(scratch, "initramfs.cpio")
        write_initramfs(initramfs, init, programs, lines)
        cmdline = " ".join(w for w in ["console=ttyS0 quiet", config["cmdline"]] if w)
        cmd = qemu_command(kernel, initramfs, cmdline)
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=timeout)
            output = proc.stdout
        except subprocess.TimeoutExpired as e:
            output = e.stdout or b""
            with open(log_path, "wb") as f:
                f.write(output)
            raise LinuxError(f"Linux configuration {config['name']} timed out after {timeout} s; "
                             f"console: {log_path}")
    with open(log_path, "wb") as f:
        f.write(output)
    console = output.decode("utf-8", "replace")
    runs, pti, done = split_runs(console)
    where = (f"Linux configuration {config['name']} ({os.path.basename(kernel)}; "
             f"console: {log_path})")
    if not done:
        raise LinuxError(f"{where}: the suite did not finish\n  command: {' '.join(cmd)}")
    want = config.get("pti")
    if want is not None and (pti is None or ("PTI" in pti) != want):
        raise LinuxError(f"{where}: page-table isolation should be {'on' if want else 'off'}, "
                         f"but Linux says: {pti}")
    results = {}
    for b in suite:
        status: int | None
        status, text = runs.get(b["name"], (None, ""))
        if status != 0:
            raise LinuxError(f"{where}: {b['name']} exited with wait status {status}")
        results[b["name"]] = text
    return results
