"""The Bochs machine: i386 from the loaderless disk image, its console on a
FIFO (or, interactively, a pseudo-terminal relayed to this terminal)."""

import os
import sys
import termios
import tty

from . import images, process
from .machine import Machine, RunOptions, SetupError, disk_image, find_tool

# Bochs firmware, in order of preference (Debian packages bochsbios, vgabios).
BOCHS_ROMS = ["/usr/share/bochs/BIOS-bochs-latest"]
BOCHS_VGA_ROMS = ["/usr/share/vgabios/vgabios.bin", "/usr/share/bochs/VGABIOS-lgpl-latest"]
# Guest instructions per emulated second: the clock the PIT and CMOS follow.
# With clock: sync=none guest time is derived from the instruction count alone.
BOCHS_IPS = 50_000_000
# The guest's wall-clock time (CMOS) in --deterministic mode: 2000-01-01 00:00 UTC.
BOCHS_FIXED_TIME0 = 946684800
# Bochs logs this when a third exception hits while delivering a double fault
# (cpu/exception.cc); with reset_on_triple_fault=0 it then ends the simulation.
# The Ethernet address of --net's card (QEMU's default for a first card).
BOCHS_NET_MAC = "52:54:00:12:34:56"
# Where Debian's Bochs keeps its plugins; --net needs the e1000 and slirp ones.
BOCHS_PLUGIN_DIRS = ["/usr/lib/x86_64-linux-gnu/bochs/plugins", "/usr/lib/bochs/plugins"]
BOCHS_NET_PLUGINS = ["libbx_e1000.so", "libbx_eth_slirp.so"]
BOCHS_TRIPLE_FAULT = "exception with no resolution"


def first_existing(paths: list[str], what: str) -> str:
    for path in paths:
        if os.path.exists(path):
            return path
    raise SetupError(f"no {what} found (looked for {', '.join(paths)}): install the Debian "
                     f"packages bochsbios and vgabios (tools/deps does it for you)")


def quoted(path: str) -> str:
    if '"' in path:
        raise SetupError(f"Bochs cannot take a path with a double quote: {path}")
    return f'"{path}"'


class Bochs(Machine):
    """Bochs exits 1 both after the guest's Shutdown and after a panic, so the
    DONE record decides; a run without DONE reset if Bochs' log says so."""

    poweroff_statuses: frozenset[int] = frozenset()

    def setup(self, args: RunOptions) -> list[str]:
        """Writes a bochsrc into the scratch folder for booting the private
        disk, and returns the Bochs command. The serial console goes to a FIFO
        that stream() reads (console_path); interactively, to the terminal."""
        if args.gdb:
            raise SetupError("--gdb needs QEMU (Bochs' own debugger is not wired to gdb)")
        self.console_pty: tuple[int, int] | None = None
        self.log = os.path.join(self.scratch, "bochs.log")
        return self.bochs_command(args)

    def run_interactive(self, cmd: list[str]) -> int:
        return relay_terminal(self, cmd)

    def reset_status(self, status: int) -> bool:
        try:
            with open(self.log, "r", errors="replace") as f:
                return BOCHS_TRIPLE_FAULT in f.read()
        except OSError:
            return False

    def bochs_command(self, args: RunOptions) -> list[str]:
        exe = find_tool("bochs")
        rom = first_existing(BOCHS_ROMS, "Bochs BIOS")
        vga = first_existing(BOCHS_VGA_ROMS, "VGA BIOS")
        if args.net:
            for plugin in BOCHS_NET_PLUGINS:
                if not any(os.path.exists(os.path.join(d, plugin)) for d in BOCHS_PLUGIN_DIRS):
                    raise SetupError(f"--net user under Bochs needs its {plugin} plugin, which "
                                     f"is in none of {', '.join(BOCHS_PLUGIN_DIRS)}: install "
                                     "a Bochs built with the e1000 and slirp network modules")
        disk = images.private_disk(args, self.scratch)
        log = self.log
        if args.interactive:
            # COM1 on a pseudo-terminal that relay_terminal() relays to this
            # terminal; guest time follows the wall clock, so a sleep sleeps.
            master, slave = os.openpty()
            self.console_pty = (master, slave)
            com1 = f"com1: enabled=1, mode=term, dev={quoted(os.ttyname(slave))}"
            clock = "clock: sync=realtime, time0=local"
        else:
            console = os.path.join(self.scratch, "console")
            os.mkfifo(console)
            self.console_path = console
            com1 = f"com1: enabled=1, mode=file, dev={quoted(console)}"
            # Bochs' guest time then depends on the instruction count only.
            time0 = BOCHS_FIXED_TIME0 if args.deterministic else "local"
            clock = f"clock: sync=none, time0={time0}"
        count = args.cpus
        cpu = f"cpu: count={count}, ips={BOCHS_IPS}, reset_on_triple_fault=0"
        if args.cpu:
            cpu = f"cpu: model={args.cpu}, count={count}, ips={BOCHS_IPS}, reset_on_triple_fault=0"
        lines = [
            f"megs: {args.mem}",
            f"romimage: file={quoted(rom)}, options=fastboot",
            f"vgaromimage: file={quoted(vga)}",
            "ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14",
            f"ata0-master: type=disk, mode=flat, path={quoted(disk)}",
            "boot: disk",
        ] + ([
            # The boot disk is ata0-master: the data disk is its slave.
            f"ata0-slave: type=disk, mode=flat, path={quoted(disk_image(args, self.scratch))}",
        ] if args.disk else []) + [
        ] + ([
            # --net user: the e1000 plugin on the i440FX's PCI bus, on Bochs'
            # own user network (slirp: the guest 10.0.2.15, the host 10.0.2.2).
            "pci: enabled=1, chipset=i440fx, slot1=e1000",
            f"e1000: enabled=1, mac={BOCHS_NET_MAC}, ethmod=slirp",
        ] if args.net else []) + [
            com1,
            # Debian's Bochs has no "nogui"; VNC that never waits for a viewer
            # (it takes the first free port from 5900 on).
            'display_library: rfb, options="timeout=0"',
            clock,
            cpu,
            "speaker: enabled=0",
            "sound: driver=dummy",
            "mouse: enabled=0",
            f"log: {quoted(log)}",
            # A panic (the guest's "Shutdown" on port 0x8900 is one) ends Bochs.
            "panic: action=fatal",
            "error: action=report",
            "info: action=report",
            "debug: action=ignore",
        ]
        bochsrc = os.path.join(self.scratch, "bochsrc")
        with open(bochsrc, "w") as f:
            f.write("# Written by tools/run for one run.\n" + "\n".join(lines) + "\n")
        # Debian's Bochs has its debugger built in: continue at once, and quit
        # when the simulation ends instead of waiting at the prompt.
        rc = os.path.join(self.scratch, "debugger.rc")
        with open(rc, "w") as f:
            f.write("c\nquit\n")
        return [exe, "-q", "-f", bochsrc, "-rc", rc]


# Ctrl-A X quits, as under QEMU; Ctrl-A Ctrl-A sends one Ctrl-A.
ESCAPE, QUIT = b"\x01", b"xX"


def relay_terminal(machine: Bochs, cmd: list[str]) -> int:
    """Runs Bochs with the user's terminal relayed to and from its COM1 pty.

    Bochs' own term mode would take the terminal raw with Ctrl-C going to the
    guest and no way out; here Ctrl-A X ends the run, and the terminal is
    always given back as it was. Bochs' own messages go to bochs.out."""
    assert machine.console_pty is not None  # bochs_command() opened it: --interactive
    master, slave = machine.console_pty
    out_path = os.path.join(machine.scratch, "bochs.out")
    sys.stderr.write("tools/run: Ctrl-A X quits Bochs\n")
    stdin = sys.stdin.fileno()
    saved = termios.tcgetattr(stdin) if os.isatty(stdin) else None
    with open(out_path, "wb") as out:
        child = process.Group(cmd, stdout=out, stderr=out)
    watched = [master, stdin]
    escaped = False
    seen_output = False
    user_quit = False
    try:
        if saved is not None:
            tty.setraw(stdin)
        while child.poll() is None and not user_quit:
            for fd, data in process.read_ready(watched, 0.2):
                if fd == master:
                    seen_output = seen_output or bool(data)
                    os.write(sys.stdout.fileno(), data)
                    continue
                if not data:
                    watched.remove(stdin)
                send = b""
                for byte in (data[i:i + 1] for i in range(len(data))):
                    if escaped:
                        escaped = False
                        if byte in QUIT:
                            user_quit = True
                            break
                        send += byte if byte == ESCAPE else ESCAPE + byte
                    elif byte == ESCAPE:
                        escaped = True
                    else:
                        send += byte
                if send:
                    os.write(master, send)
    finally:
        if saved is not None:
            termios.tcsetattr(stdin, termios.TCSADRAIN, saved)
        status = child.kill()  # its exit status, or SIGKILL's when the user quit
        os.close(master)
        os.close(slave)
    if user_quit:
        sys.stderr.write("\ntools/run: quit\n")
        return 0
    if not seen_output:
        # Nothing from the guest: Bochs' own messages say why.
        with open(out_path, "r", errors="replace") as f:
            sys.stderr.write("".join(f.readlines()[-10:]))
    sys.stderr.write(f"\ntools/run: Bochs exited with status {status}\n")
    return status
