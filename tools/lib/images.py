"""Private copies of boot images for one run: the loaderless disk image with
its command-line sector, the Bochs configuration, and --add.

The disk image is built by src/arch/i386/boot/bootsect/ (mkdisk.py describes
its layout); each run boots its own copy, so parallel runs never share one.
"""

import os
import select
import shutil
import subprocess
import sys
import termios
import tty

from emulators import SetupError, build_file, find_tool

SECTOR = 512
# bootsect.S / mkdisk.py: LBA 1 holds the NUL-terminated command line, and the
# boot sector carries the magic "TBS1" at 0x1F0 and ends in 55 AA.
CMDLINE_OFFSET = 1 * SECTOR
HEADER_OFFSET = 0x1F0
HEADER_MAGIC = b"TBS1"
BOOT_SIGNATURE = b"\x55\xaa"
DISK_IMAGE = ("i386", "arch", "i386", "boot", "bootsect", "toll-disk.img")

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
BOCHS_TRIPLE_FAULT = "exception with no resolution"


def private_disk(args, scratch):
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


def first_existing(paths, what):
    for path in paths:
        if os.path.exists(path):
            return path
    raise SetupError(f"no {what} found (looked for {', '.join(paths)}): install the Debian "
                     f"packages bochsbios and vgabios (tools/deps does it for you)")


def quoted(path):
    if '"' in path:
        raise SetupError(f"Bochs cannot take a path with a double quote: {path}")
    return f'"{path}"'


def bochs(args, machine):
    """Writes a bochsrc into machine.scratch for booting the private disk, and
    returns the Bochs command. The serial console goes to a FIFO that
    Machine.stream() reads (machine.console_path); interactively, to the terminal."""
    exe = find_tool("bochs")
    rom = first_existing(BOCHS_ROMS, "Bochs BIOS")
    vga = first_existing(BOCHS_VGA_ROMS, "VGA BIOS")
    disk = private_disk(args, machine.scratch)
    log = os.path.join(machine.scratch, "bochs.log")
    if args.interactive:
        # COM1 on a pseudo-terminal that bochs_interactive() relays to this
        # terminal; guest time follows the wall clock, so a sleep sleeps.
        master, slave = os.openpty()
        machine.console_pty = (master, slave)
        machine.interactive_runner = lambda cmd: bochs_interactive(machine, cmd)
        com1 = f"com1: enabled=1, mode=term, dev={quoted(os.ttyname(slave))}"
        clock = "clock: sync=realtime, time0=local"
    else:
        console = os.path.join(machine.scratch, "console")
        os.mkfifo(console)
        machine.console_path = console
        com1 = f"com1: enabled=1, mode=file, dev={quoted(console)}"
        # Bochs' guest time then depends on the instruction count only.
        time0 = BOCHS_FIXED_TIME0 if args.deterministic else "local"
        clock = f"clock: sync=none, time0={time0}"
    cpu = f"cpu: count=1, ips={BOCHS_IPS}, reset_on_triple_fault=0"
    if args.cpu:
        cpu = f"cpu: model={args.cpu}, count=1, ips={BOCHS_IPS}, reset_on_triple_fault=0"
    lines = [
        f"megs: {args.mem}",
        f"romimage: file={quoted(rom)}, options=fastboot",
        f"vgaromimage: file={quoted(vga)}",
        "ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14",
        f"ata0-master: type=disk, mode=flat, path={quoted(disk)}",
        "boot: disk",
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
    bochsrc = os.path.join(machine.scratch, "bochsrc")
    with open(bochsrc, "w") as f:
        f.write("# Written by tools/run for one run.\n" + "\n".join(lines) + "\n")
    # Debian's Bochs has its debugger built in: continue at once, and quit
    # when the simulation ends instead of waiting at the prompt.
    rc = os.path.join(machine.scratch, "debugger.rc")
    with open(rc, "w") as f:
        f.write("c\nquit\n")

    # Bochs exits 1 both after the guest's Shutdown and after a panic, so the
    # DONE record decides; a run without DONE reset if the log says so.
    def triple_faulted(status):
        try:
            with open(log, "r", errors="replace") as f:
                return BOCHS_TRIPLE_FAULT in f.read()
        except OSError:
            return False
    machine.reset_status = triple_faulted
    return [exe, "-q", "-f", bochsrc, "-rc", rc]


# Ctrl-A X quits, as under QEMU; Ctrl-A Ctrl-A sends one Ctrl-A.
ESCAPE, QUIT = b"\x01", b"xX"


def bochs_interactive(machine, cmd):
    """Runs Bochs with the user's terminal relayed to and from its COM1 pty.

    Bochs' own term mode would take the terminal raw with Ctrl-C going to the
    guest and no way out; here Ctrl-A X ends the run, and the terminal is
    always given back as it was. Bochs' own messages go to bochs.out."""
    master, slave = machine.console_pty
    out_path = os.path.join(machine.scratch, "bochs.out")
    sys.stderr.write("tools/run: Ctrl-A X quits Bochs\n")
    stdin = sys.stdin.fileno()
    saved = termios.tcgetattr(stdin) if os.isatty(stdin) else None
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True)
    watched = [master, stdin]
    escaped = False
    seen_output = False
    user_quit = False
    try:
        if saved is not None:
            tty.setraw(stdin)
        while proc.poll() is None:
            ready, _, _ = select.select(watched, [], [], 0.2)
            if master in ready:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    data = b""
                seen_output = seen_output or bool(data)
                os.write(sys.stdout.fileno(), data)
            if stdin in ready:
                data = os.read(stdin, 1024)
                if not data:
                    watched.remove(stdin)
                send = b""
                for byte in (data[i:i + 1] for i in range(len(data))):
                    if escaped:
                        escaped = False
                        if byte in QUIT:
                            user_quit = True
                            proc.kill()
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
        if proc.poll() is None:
            proc.kill()
        status = proc.wait()
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


def extra_ramdisk(args, scratch):
    """Packs the --add files into a cpio archive (bin/<name>) that QEMU hands
    the kernel as a multiboot module; the kernel adds its files to /bin."""
    for path in args.add:
        if not os.path.isfile(path):
            raise SetupError(f"--add {path}: no such file")
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                raise SetupError(f"--add {path}: not an ELF program (build it with tools/cc)")
    out = os.path.join(scratch, "extra.cpio")
    mkinitrd = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mkinitrd")
    subprocess.run([sys.executable, mkinitrd, out] + list(args.add), check=True)
    return out
