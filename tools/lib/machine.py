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

from . import process

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
    kernel: str = None
    add: list = dataclasses.field(default_factory=list)
    cpu: str = None
    granule: str = None
    extra: list = dataclasses.field(default_factory=list)
    input: str = None
    interactive: bool = False
    gdb: bool = False
    gdb_port: int = 1234
    quiet: bool = True
    timeout: float = 60
    max_output: int = 4 << 20
    # End the run (outcome "stopped") as soon as the console shows these bytes.
    stop_at: bytes = None


def find_tool(name):
    path = shutil.which(name)
    if not path:
        raise SetupError(f"{name} is not installed: install the Debian package "
                         f"{PACKAGES.get(name, name)} (tools/deps does it for you)")
    return path


def build_file(args, *parts):
    path = os.path.join(args.build, *parts)
    if not os.path.exists(path):
        raise SetupError(f"{path} does not exist: build first (make, or cmake --build build)")
    return path


class Machine:
    """The base of every emulator's Machine; not used on its own."""

    # Exit statuses that mean the guest powered itself off (vs. a reset).
    poweroff_statuses = frozenset()

    def __init__(self, args):
        self.args = args
        self.scratch = tempfile.mkdtemp(prefix="toll-run-")
        self.command = []
        self.env = None
        self.console_bytes = b""  # what the console showed, for --expect-output
        # An emulator that writes its console to a file or FIFO (Bochs) names it here.
        self.console_path = None
        try:
            self.command = self.setup(args)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise

    def setup(self, args):
        """Prepares the scratch folder and returns the emulator command."""
        raise NotImplementedError

    def reset_status(self, status):
        """True if exit @p status means the guest reset (a triple fault)."""
        return False

    def run_interactive(self, cmd):
        """Runs @p cmd with the terminal attached; returns its exit status."""
        return subprocess.call(cmd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def interactive(self):
        """Runs the emulator with the terminal on its console (and, with
        --gdb, waiting for a debugger); returns its exit status."""
        sys.stderr.write("tools/run: " + " ".join(self.command) + "\n")
        return self.run_interactive(list(self.command))

    def stream(self, records, args):
        """Runs the emulator to its end; returns (outcome, detail)."""
        typing = args.input is not None
        stop_at = getattr(args, "stop_at", None)
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
            console = self._open_console(proc) if self.console_path else proc.stdout
            deadline = time.monotonic() + args.timeout
            total = 0
            pending = b""
            ended_at = None  # when DONE or PANIC was seen
            stderr_chunks = []
            outcome = None
            fds = [console.fileno(), proc.stderr.fileno()]
            out = sys.stdout.buffer
            while fds:
                now = time.monotonic()
                if ended_at is not None and now - ended_at > 3:
                    break  # the guest said it was done but did not power off
                if now > deadline:
                    outcome = "timeout"
                    break
                ready = process.read_ready(fds, min(0.2, deadline - now))
                for fd, chunk in ready:
                    if not chunk:
                        fds.remove(fd)
                        continue
                    if fd == proc.stderr.fileno():
                        stderr_chunks.append(chunk)
                        continue
                    total += len(chunk)
                    if len(self.console_bytes) < args.max_output:
                        self.console_bytes += chunk
                    if typing and b"$ " in self.console_bytes:
                        # The shell prompts: type the input, as a person would.
                        proc.stdin.write(args.input.encode())
                        proc.stdin.flush()
                        typing = False
                    if not args.quiet:
                        out.write(chunk)
                        out.flush()
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        records.feed(line)
                    if (records.done is not None or records.panic is not None) and ended_at is None:
                        ended_at = time.monotonic()
                    if stop_at is not None and stop_at in self.console_bytes:
                        outcome = "stopped"
                if outcome == "stopped":
                    break
                if total > args.max_output:
                    outcome = "flood"
                    break
                if not ready and proc.poll() is not None and not self.console_path:
                    break
                if self.console_path and proc.poll() is not None:
                    # Drain what is left of the console file, then stop.
                    rest = console.read()
                    if rest:
                        if not args.quiet:
                            out.write(rest)
                        pending += rest
                    break
            if pending:
                records.feed(pending)
            if console is not proc.stdout:
                console.close()
        stderr_text = b"".join(stderr_chunks).decode("utf-8", "replace").strip()
        if outcome == "timeout":
            return outcome, f"{args.timeout:g} s"
        if outcome == "flood":
            return outcome, f"more than {args.max_output} bytes"
        if outcome == "stopped":
            return outcome, f"the console showed {stop_at!r}"
        result = records.outcome()
        if result == "incomplete":
            status = proc.returncode
            if records.lines and records.garbage_lines * 2 > records.lines:
                return "garbage", f"{records.garbage_lines} of {records.lines} lines unreadable"
            if status is not None and status not in self.poweroff_statuses and \
                    self.reset_status(status):
                return "reset", "the emulator exited on a reset (-no-reboot)"
            tail = stderr_text.splitlines()[-3:]
            return "incomplete", f"exit status {status}" + (": " + " | ".join(tail) if tail else "")
        return result, ""

    def _open_console(self, proc):
        # Wait for the emulator to create its console file.
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
