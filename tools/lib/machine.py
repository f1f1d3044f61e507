"""One emulator run: what every emulator shares.

A Machine owns a private scratch folder (disk image copies, configuration),
the emulator command, and stream(), which runs the emulator, echoes and
parses its serial console, and ends it on DONE, PANIC, timeout, flood or
exit. Each emulator is a subclass (qemu.py, bochs.py) that builds its command
in setup() and says how its exit statuses read; emulators.prepare() picks one.
"""

import dataclasses
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from typing import IO

from . import process
from .records import Records

# The Debian package that provides each emulator binary.
PACKAGES = {
    "qemu-system-i386": "qemu-system-x86",
    "qemu-system-aarch64": "qemu-system-arm",
    "bochs": "bochs (with bochsbios, vgabios and bochs-term)",
}


class SetupError(Exception):
    """A problem found before the emulator starts, with what to do about it."""


@dataclasses.dataclass
class RunOptions:
    """What a run needs to know: tools/run's options (its argparse namespace
    has the same attributes), with defaults for programs that boot a kernel
    without a command line of their own (tools/boottime)."""
    build: str
    arch: str = "i386"
    emu: str = "qemu"
    boot: str = "multiboot"
    mem: int = 128
    cpus: int = 1
    cmdline: str = ""
    deterministic: bool = False
    kernel: str | None = None
    add: list[str] = dataclasses.field(default_factory=list)
    cpu: str | None = None
    granule: str | None = None
    extra: list[str] = dataclasses.field(default_factory=list)
    input: str | None = None
    prompt: str = "$ "  # typing --input starts once the console shows this
    interactive: bool = False
    gdb: bool = False
    gdb_port: int = 1234
    quiet: bool = True
    timeout: float = 60
    max_output: int = 4 << 20
    # A raw disk image the guest sees as its second disk (ATA under i386,
    # virtio-blk under arm64); the kernel mounts an ext2 file system on it at /mnt.
    disk: str | None = None
    # "user": an e1000 on the emulator's user network (tools/run --net).
    net: str | None = None
    # A second e1000 whose frames go to and come from this host UDP port.
    net_frames: int | None = None
    # End the run (outcome "stopped") as soon as the console shows these bytes.
    stop_at: bytes | None = None


def find_tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        raise SetupError(f"{name} is not installed: install the Debian package "
                         f"{PACKAGES.get(name, name)} (tools/deps does it for you)")
    return path


# --disk new:FS[:KB]: a fresh image of this many KB made for the run (mke2fs).
NEW_DISK_KB = 8192


def disk_image(args: RunOptions, scratch: str) -> str:
    """The --disk image's absolute path, or a SetupError naming the missing file.
    "new:ext2" or "new:ext3" (optionally ":KB") makes an empty file system of
    1 KB blocks in the run's scratch folder, gone when the run ends."""
    assert args.disk is not None
    if args.disk.startswith("new:"):
        parts = args.disk.split(":")
        kind = parts[1] if len(parts) > 1 else ""
        if kind not in ("ext2", "ext3") or len(parts) > 3 or \
                (len(parts) == 3 and not parts[2].isdigit()):
            raise SetupError(f"--disk {args.disk}: say new:ext2 or new:ext3, optionally "
                             f"with :KB (default {NEW_DISK_KB})")
        kb = parts[2] if len(parts) == 3 else str(NEW_DISK_KB)
        path = os.path.join(scratch, "data-disk.img")  # (disk.img is the boot disk)
        mke2fs = shutil.which("mke2fs") or "/usr/sbin/mke2fs"
        if not os.path.exists(mke2fs):
            raise SetupError("--disk new:...: mke2fs is not installed: install the Debian "
                             "package e2fsprogs (tools/deps does it for you)")
        r = subprocess.run([mke2fs, "-q", "-F", "-t", kind, "-b", "1024", "-E",
                            "root_owner=0:0", path, kb], capture_output=True, text=True)
        if r.returncode != 0:
            raise SetupError(f"--disk {args.disk}: mke2fs failed: {r.stderr.strip()}")
        return path
    path = os.path.abspath(args.disk)
    if not os.path.isfile(path):
        raise SetupError(f"--disk {args.disk}: no such disk image (make one with "
                         f"mke2fs -t ext2 -d DIR IMAGE SIZE)")
    return path


def build_file(args: RunOptions, *parts: str) -> str:
    path = os.path.join(args.build, *parts)
    if not os.path.exists(path):
        raise SetupError(f"{path} does not exist: build first (make, or cmake --build build)")
    return path


class Machine:
    """The base of every emulator's Machine; not used on its own."""

    # Exit statuses that mean the guest powered itself off (vs. a reset).
    poweroff_statuses: frozenset[int] = frozenset()

    def __init__(self, args: RunOptions) -> None:
        self.args = args
        self.scratch = tempfile.mkdtemp(prefix="toll-run-")
        self.command: list[str] = []
        self.env: dict[str, str] | None = None
        self.console_bytes = b""  # what the console showed, for --expect-output
        # An emulator that writes its console to a file or FIFO (Bochs) names it here.
        self.console_path: str | None = None
        try:
            self.command = self.setup(args)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise

    def setup(self, args: RunOptions) -> list[str]:
        """Prepares the scratch folder and returns the emulator command."""
        raise NotImplementedError

    def reset_status(self, status: int) -> bool:
        """True if exit @p status means the guest reset (a triple fault)."""
        return False

    def run_interactive(self, cmd: list[str]) -> int:
        """Runs @p cmd with the terminal attached; returns its exit status."""
        return subprocess.call(cmd)

    def __enter__(self) -> "Machine":
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def interactive(self) -> int:
        """Runs the emulator with the terminal on its console (and, with
        --gdb, waiting for a debugger); returns its exit status."""
        sys.stderr.write("tools/run: " + " ".join(self.command) + "\n")
        return self.run_interactive(list(self.command))

    def stream(self, records: Records, args: RunOptions) -> tuple[str, str]:
        """Runs the emulator to its end; returns (outcome, detail)."""
        typing = args.input is not None
        if typing and self.console_path:
            return "error", "--input needs QEMU (its serial console reads stdin)"
        try:
            child = process.Group(self.command,
                                  stdin=subprocess.PIPE if typing else subprocess.DEVNULL,
                                  env=self.env)
        except OSError as e:
            return "error", str(e)
        with child:
            proc = child.proc
            console = Console(self, records, args, proc.stdin if typing else None)
            source = self._open_console(proc) if self.console_path else proc.stdout
            assert source is not None and proc.stderr is not None  # both are pipes
            outcome = self._read_until_end(proc, source, proc.stderr, console)
            console.end()
            if source is not proc.stdout:
                source.close()
        stderr_text = console.stderr_text()
        return self._verdict(outcome, records, args, proc.returncode, stderr_text)

    def _read_until_end(self, proc: subprocess.Popen[bytes], source: IO[bytes],
                        stderr: IO[bytes], console: "Console") -> str | None:
        """Reads the console @p source and the emulator's @p stderr until the
        run ends: returns "timeout", "stopped" (the console showed stop_at) or
        "flood", or None when the emulator exited or the guest said it was done."""
        args = console.args
        deadline = time.monotonic() + args.timeout
        fds = [source.fileno(), stderr.fileno()]
        while fds:
            now = time.monotonic()
            if console.ended_at is not None and now - console.ended_at > 3:
                return None  # the guest said it was done but did not power off
            if now > deadline:
                return "timeout"
            ready = process.read_ready(fds, min(0.2, deadline - now))
            stopped = False
            for fd, chunk in ready:
                if not chunk:
                    fds.remove(fd)
                elif fd == stderr.fileno():
                    console.stderr_chunks.append(chunk)
                else:
                    stopped = console.take(chunk) or stopped
            if stopped:
                return "stopped"
            if console.total > args.max_output:
                return "flood"
            if not ready and proc.poll() is not None and not self.console_path:
                return None
            if self.console_path and proc.poll() is not None:
                # Drain what is left of the console file, then stop.
                console.drain(source.read())
                return None
        return None

    def _verdict(self, outcome: str | None, records: Records, args: RunOptions,
                 status: int | None, stderr_text: str) -> tuple[str, str]:
        """stream()'s (outcome, detail) for a run that ended with @p outcome
        (None: the emulator's exit or the guest's DONE decides) and exit @p status."""
        if outcome == "timeout":
            return outcome, f"{args.timeout:g} s"
        if outcome == "flood":
            return outcome, f"more than {args.max_output} bytes"
        if outcome == "stopped":
            return outcome, f"the console showed {args.stop_at!r}"
        result = records.outcome()
        if result == "incomplete":
            if records.lines and records.garbage_lines * 2 > records.lines:
                return "garbage", f"{records.garbage_lines} of {records.lines} lines unreadable"
            if status is not None and status not in self.poweroff_statuses and \
                    self.reset_status(status):
                return "reset", "the emulator exited on a reset (-no-reboot)"
            tail = stderr_text.splitlines()[-3:]
            return "incomplete", f"exit status {status}" + (": " + " | ".join(tail) if tail else "")
        return result, ""

    def _open_console(self, proc: subprocess.Popen[bytes]) -> IO[bytes]:
        # Wait for the emulator to create its console file.
        assert self.console_path is not None
        for _ in range(200):
            if os.path.exists(self.console_path) or proc.poll() is not None:
                break
            time.sleep(0.01)
        if os.path.exists(self.console_path) and stat.S_ISFIFO(os.stat(self.console_path).st_mode):
            # A FIFO opened read-write and non-blocking: the open never waits
            # for a writer, and reads never see EOF before the emulator opens
            # it (Bochs does so at the first byte); the loop ends on exit.
            fd = os.open(self.console_path, os.O_RDWR | os.O_NONBLOCK)
            return open(fd, "rb", buffering=0)
        return open(self.console_path, "rb", buffering=0)


class Console:
    """The console of one stream(): each chunk is kept (up to max_output),
    echoed (unless quiet) and cut into lines for the records; --input is typed
    at the shell's first prompt."""

    def __init__(self, machine: Machine, records: Records, args: RunOptions,
                 stdin: IO[bytes] | None) -> None:
        self.machine = machine
        self.records = records
        self.args = args
        self.stdin = stdin  # the emulator's stdin until the input is typed, then None
        self.total = 0  # console bytes read
        self.pending = b""  # the last line, not yet ended
        self.ended_at: float | None = None  # when DONE or PANIC was seen
        self.stderr_chunks: list[bytes] = []
        self.out = sys.stdout.buffer

    def take(self, chunk: bytes) -> bool:
        """Takes one chunk of the console; True when the console has shown stop_at."""
        args, machine = self.args, self.machine
        self.total += len(chunk)
        if len(machine.console_bytes) < args.max_output:
            machine.console_bytes += chunk
        if (self.stdin is not None and args.input is not None and
                args.prompt.encode() in machine.console_bytes):
            # The shell prompts: type the input, as a person would.
            self.stdin.write(args.input.encode())
            self.stdin.flush()
            self.stdin = None
        if not args.quiet:
            self.out.write(chunk)
            self.out.flush()
        self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            self.records.feed(line)
        if (self.records.done is not None or self.records.panic is not None) and \
                self.ended_at is None:
            self.ended_at = time.monotonic()
        return args.stop_at is not None and args.stop_at in machine.console_bytes

    def drain(self, rest: bytes) -> None:
        """Takes what was left in a console file after the emulator exited."""
        if rest:
            if not self.args.quiet:
                self.out.write(rest)
            self.pending += rest

    def end(self) -> None:
        """Feeds the records the last line, which no newline ended."""
        if self.pending:
            self.records.feed(self.pending)

    def stderr_text(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace").strip()
