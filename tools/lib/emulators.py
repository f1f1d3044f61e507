"""Emulator command lines and the streaming loop of tools/run.

prepare(args) returns a Machine: a private scratch folder (disk image copies,
Bochs configuration), the emulator command, and stream(), which runs the
emulator, echoes and parses its serial console, and ends it on DONE, PANIC,
timeout, flood or exit.
"""

import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

# The Debian package that provides each emulator binary.
PACKAGES = {
    "qemu-system-i386": "qemu-system-x86",
    "qemu-system-aarch64": "qemu-system-arm",
    "bochs": "bochs (with bochsbios, vgabios and bochs-term)",
}


class SetupError(Exception):
    """A problem found before the emulator starts, with what to do about it."""


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
    def __init__(self, args):
        self.args = args
        self.scratch = tempfile.mkdtemp(prefix="toll-run-")
        self.command = []
        self.env = None
        self.stdin_file = None
        self.console_bytes = b""  # what the console showed, for --expect-output
        # Exit statuses that mean the guest powered itself off (vs. a reset).
        self.poweroff_statuses = set()
        # Bochs writes its console to a file or pipe, not to stdout.
        self.console_path = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def interactive(self):
        cmd = list(self.command)
        if self.args.gdb:
            if "qemu" not in os.path.basename(cmd[0]):
                raise SetupError("--gdb needs QEMU")
            cmd += ["-s", "-S"]
            sys.stderr.write("tools/run: QEMU waits for gdb on localhost:1234 "
                             "(gdb-multiarch -x tools/gdbinit)\n")
        sys.stderr.write("tools/run: " + " ".join(cmd) + "\n")
        if "qemu" in os.path.basename(cmd[0]):
            cmd = [a if a != "stdio" else "mon:stdio" for a in cmd]
            sys.stderr.write("tools/run: Ctrl-A X quits QEMU\n")
        if getattr(self, "interactive_runner", None):
            return self.interactive_runner(cmd)  # Bochs: images.bochs_interactive()
        return subprocess.call(cmd)

    def stream(self, records, args):
        """Runs the emulator to its end; returns (outcome, detail)."""
        try:
            typing = args.input is not None
            if typing and self.console_path:
                return "error", "--input needs QEMU (its serial console reads stdin)"
            proc = subprocess.Popen(self.command,
                                    stdin=subprocess.PIPE if typing else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, env=self.env)
        except OSError as e:
            return "error", str(e)
        console = proc.stdout
        if self.console_path:
            console = self._open_console(proc)
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
            ready, _, _ = select.select(fds, [], [], min(0.2, max(0.0, deadline - now)))
            for fd in ready:
                chunk = os.read(fd, 65536)
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
        self._kill(proc)
        stderr_text = b"".join(stderr_chunks).decode("utf-8", "replace").strip()
        if outcome == "timeout":
            return outcome, f"{args.timeout:g} s"
        if outcome == "flood":
            return outcome, f"more than {args.max_output} bytes"
        result = records.outcome()
        if result == "incomplete":
            status = proc.returncode
            if records.lines and records.garbage_lines * 2 > records.lines:
                return "garbage", f"{records.garbage_lines} of {records.lines} lines unreadable"
            if status is not None and status not in self.poweroff_statuses and self.reset_status(status):
                return "reset", "the emulator exited on a reset (-no-reboot)"
            tail = stderr_text.splitlines()[-3:]
            return "incomplete", f"exit status {status}" + (": " + " | ".join(tail) if tail else "")
        return result, ""

    def reset_status(self, status):
        """True if exit @p status means the guest reset (a triple fault)."""
        return status == 0

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

    def _kill(self, proc):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()


def qemu_i386(args, machine):
    qemu = find_tool("qemu-system-i386")
    cmd = [qemu, "-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
           "-m", str(args.mem), "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    if args.boot == "multiboot":
        kernel = args.kernel or build_file(args, "i386", "arch", "i386", "toll-i386.elf")
        cmd += ["-kernel", kernel, "-append", args.cmdline]
        if args.add:
            cmd += ["-initrd", images.extra_ramdisk(args, machine.scratch)]
    else:
        if args.add:
            raise SetupError("--add works with --boot multiboot (the disk image carries no "
                             "extra ramdisk); drop --boot disk")
        disk = images.private_disk(args, machine.scratch)
        # virtio-blk: SeaBIOS reads it by DMA; IDE PIO costs about 0.2 s per MB
        # of kernel under TCG.
        cmd += ["-drive", f"file={disk},format=raw,if=virtio", "-boot", "c"]
    if args.cpu:
        cmd += ["-cpu", args.cpu]
    if args.deterministic:
        cmd += ["-icount", "shift=0,sleep=off"]
    # isa-debug-exit: the kernel writes 0 (success) or 1 (failure).
    machine.poweroff_statuses = {1, 3}
    return cmd + args.extra


# QEMU 7.2's virt board runs the generic counter at 62.5 MHz, and -icount
# shift=0 advances virtual time by 1 ns per instruction, so CNTVCT_EL0 would
# tick once every 16 instructions. At 1 GHz it ticks once per instruction, as
# the TSC does under i386's -icount: "cycles" are instructions on both.
ARM64_CNTFRQ = "cntfrq=1000000000"
# QEMU hw/arm/virt.c: RAM starts at 1 GB.
ARM64_RAM_BASE = 0x40000000


def arm64_cpu(cpu):
    """The -cpu value for arm64: the model (default max) with the 1 GHz counter."""
    model = cpu or "max"
    if "cntfrq=" in model:
        raise SetupError(f"--cpu {model}: tools/run sets the counter frequency itself "
                         f"({ARM64_CNTFRQ}); drop the cntfrq= property")
    return model + "," + ARM64_CNTFRQ


def qemu_arm64(args, machine):
    qemu = find_tool("qemu-system-aarch64")
    # Each granule has its own build tree (CMakeLists.txt): arm64, arm64-16k.
    tree = "arm64" if getattr(args, "granule", None) in (None, "4K") else "arm64-16k"
    kernel = args.kernel or build_file(args, tree, "arch", "arm64", "toll-arm64.elf")
    cmdline = args.cmdline
    loader = []
    if args.add:
        # QEMU loads -initrd only for Linux images, so the generic loader
        # puts the archive at the top of RAM and the command line says where
        # (arm64.ramdisk=, before any run= that takes the rest of the line);
        # the kernel adds its files to /bin.
        archive = images.extra_ramdisk(args, machine.scratch)
        size = os.path.getsize(archive)
        top = ARM64_RAM_BASE + (args.mem << 20)
        base = (top - size) & ~0xFFFF
        loader = ["-device", f"loader,file={archive},addr={base:#x},force-raw=on"]
        cmdline = f"arm64.ramdisk={base:#x},{size} {cmdline}".strip()
    cmd = [qemu, "-M", "virt", "-cpu", arm64_cpu(args.cpu), "-nodefaults", "-display", "none",
           "-serial", "stdio", "-no-reboot", "-m", str(args.mem),
           "-semihosting-config", "enable=on,target=native", "-kernel", kernel,
           "-append", cmdline] + loader
    if args.deterministic:
        cmd += ["-icount", "shift=0,sleep=off,align=off"]
    # Semihosting SYS_EXIT: the kernel reports 0 for success, 1 for failure.
    machine.poweroff_statuses = {0, 1}
    machine.reset_status = lambda status: False
    return cmd + args.extra


def prepare(args):
    machine = Machine(args)
    try:
        if args.arch == "arm64":
            machine.command = qemu_arm64(args, machine)
        elif args.emu == "qemu":
            machine.command = qemu_i386(args, machine)
        else:
            machine.command = images.bochs(args, machine)
    except BaseException:
        shutil.rmtree(machine.scratch, ignore_errors=True)
        raise
    return machine


import images  # noqa: E402  (disk images, Bochs; uses SetupError from here)
