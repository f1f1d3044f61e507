"""The QEMU machines: i386 (multiboot or the loaderless disk) and arm64 (virt)."""

import os
import subprocess
import sys

from . import images
from .machine import Machine, RunOptions, SetupError, build_file, disk_image, find_tool


def gdb_arguments(port: int) -> list[str]:
    """QEMU's gdb stub on localhost:@p port (-s would be port 1234 on every
    interface), and -S: wait for gdb before the first instruction."""
    return ["-gdb", f"tcp:localhost:{port}", "-S"]


# QEMU's default Ethernet addresses for the first two cards of a guest.
NET_MACS = ("52:54:00:12:34:56", "52:54:00:12:34:57")


def qemu_lists(qemu: str, machine: list[str], option: str, name: str) -> bool:
    """True if `qemu MACHINE OPTION help` (-device, -netdev) lists @p name."""
    try:
        r = subprocess.run([qemu, *machine, option, "help"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    words = (r.stdout + r.stderr).replace('"', " ").replace(",", " ").split()
    return name in words


def net_arguments(qemu: str, machine: list[str], args: RunOptions) -> list[str]:
    """-netdev/-device for --net and --net-frames: e1000 cards on the user
    network and on a UDP socket to a host program. Raises SetupError when
    this QEMU cannot give the guest that card or network."""
    if not args.net and args.net_frames is None:
        return []
    if not qemu_lists(qemu, machine, "-device", "e1000"):
        raise SetupError(f"--net: {qemu} has no e1000 device model ({os.path.basename(qemu)} "
                         "-device help lists none): install a QEMU built with it (Debian's "
                         "qemu-system-x86 and qemu-system-arm are) or drop --net")
    cmd = []
    if args.net:
        if not qemu_lists(qemu, machine, "-netdev", "user"):
            raise SetupError(f"--net user: {qemu} has no user network (slirp) backend "
                             "(-netdev help lists none): install a QEMU built with libslirp")
        cmd += ["-netdev", "user,id=net0", "-device", f"e1000,netdev=net0,mac={NET_MACS[0]}"]
    if args.net_frames is not None:
        port = args.net_frames
        cmd += ["-netdev", f"socket,id=net1,udp=127.0.0.1:{port},localaddr=127.0.0.1:{port + 1}",
                "-device", f"e1000,netdev=net1,mac={NET_MACS[1]}"]
    return cmd


class Qemu(Machine):
    """What both QEMU machines share: the interactive console and gdb."""

    def setup(self, args: RunOptions) -> list[str]:
        cmd = self.qemu_command(args)
        if args.gdb:
            cmd += gdb_arguments(args.gdb_port)
        return cmd

    def qemu_command(self, args: RunOptions) -> list[str]:
        raise NotImplementedError

    def run_interactive(self, cmd: list[str]) -> int:
        if self.args.gdb:
            script = "tools/gdbinit-arm64" if self.args.arch == "arm64" else "tools/gdbinit"
            sys.stderr.write(f"tools/run: QEMU waits for gdb on localhost:{self.args.gdb_port} "
                             f"(gdb-multiarch -x {script})\n")
        # The QEMU monitor on the terminal too: Ctrl-A X quits, Ctrl-A C switches.
        cmd = [a if a != "stdio" else "mon:stdio" for a in cmd]
        sys.stderr.write("tools/run: Ctrl-A X quits QEMU\n")
        return subprocess.call(cmd)


class QemuI386(Qemu):
    # isa-debug-exit: the kernel writes 0 (success) or 1 (failure); QEMU exits (v << 1) | 1.
    poweroff_statuses = frozenset({1, 3})

    def qemu_command(self, args: RunOptions) -> list[str]:
        qemu = find_tool("qemu-system-i386")
        cmd = [qemu, "-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
               "-m", str(args.mem), "-smp", str(args.cpus),
               "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
        if args.boot == "multiboot":
            kernel = args.kernel or build_file(args, "i386", "arch", "i386", "toll-i386.elf")
            cmd += ["-kernel", kernel, "-append", args.cmdline]
            if args.add:
                cmd += ["-initrd", images.extra_ramdisk(args, self.scratch)]
        else:
            disk = images.private_disk(args, self.scratch)
            # virtio-blk: SeaBIOS reads it by DMA; IDE PIO costs about 0.2 s per MB
            # of kernel under TCG.
            if args.disk:
                # The data disk on IDE would come first in SeaBIOS' boot order:
                # name the virtio boot disk first explicitly.
                cmd += ["-drive", f"file={disk},format=raw,if=none,id=boot",
                        "-device", "virtio-blk-pci,drive=boot,bootindex=0"]
            else:
                cmd += ["-drive", f"file={disk},format=raw,if=virtio", "-boot", "c"]
        if args.disk:
            # The PIIX IDE controller's primary channel, master: the kernel's ata0-master
            # (the loaderless boot's own disk is virtio, so the channel is free).
            cmd += ["-drive", f"file={disk_image(args, self.scratch)},format=raw,if=ide,index=0"]
        if args.cpu:
            cmd += ["-cpu", args.cpu]
        cmd += net_arguments(qemu, [], args)
        if args.deterministic:
            cmd += ["-icount", "shift=0,sleep=off"]
        return cmd + args.extra

    def reset_status(self, status: int) -> bool:
        # -no-reboot: a reset (a triple fault) ends QEMU with status 0.
        return status == 0


# QEMU 7.2's virt board runs the generic counter at 62.5 MHz, and -icount
# shift=0 advances virtual time by 1 ns per instruction, so CNTVCT_EL0 would
# tick once every 16 instructions. At 1 GHz it ticks once per instruction, as
# the TSC does under i386's -icount: "cycles" are instructions on both.
ARM64_CNTFRQ = "cntfrq=1000000000"
# QEMU hw/arm/virt.c: RAM starts at 1 GB.
ARM64_RAM_BASE = 0x40000000


def arm64_cpu(cpu: str | None) -> str:
    """The -cpu value for arm64: the model (default max) with the 1 GHz counter."""
    model = cpu or "max"
    if "cntfrq=" in model:
        raise SetupError(f"--cpu {model}: tools/run sets the counter frequency itself "
                         f"({ARM64_CNTFRQ}); drop the cntfrq= property")
    return model + "," + ARM64_CNTFRQ


class QemuArm64(Qemu):
    # Semihosting SYS_EXIT: the kernel reports 0 for success, 1 for failure.
    poweroff_statuses = frozenset({0, 1})

    def qemu_command(self, args: RunOptions) -> list[str]:
        qemu = find_tool("qemu-system-aarch64")
        # Each granule has its own build tree (CMakeLists.txt): arm64, arm64-16k.
        tree = "arm64" if args.granule in (None, "4K") else "arm64-16k"
        kernel = args.kernel or build_file(args, tree, "arch", "arm64", "toll-arm64.elf")
        cmdline = args.cmdline
        loader = []
        if args.add:
            # QEMU loads -initrd only for Linux images, so the generic loader
            # puts the archive at the top of RAM and the command line says where
            # (arm64.ramdisk=, before any run= that takes the rest of the line);
            # the kernel adds its files to /bin.
            archive = images.extra_ramdisk(args, self.scratch)
            size = os.path.getsize(archive)
            top = ARM64_RAM_BASE + (args.mem << 20)
            base = (top - size) & ~0xFFFF
            loader = ["-device", f"loader,file={archive},addr={base:#x},force-raw=on"]
            cmdline = f"arm64.ramdisk={base:#x},{size} {cmdline}".strip()
        cmd = [qemu, "-M", "virt", "-cpu", arm64_cpu(args.cpu), "-nodefaults", "-display",
               "none", "-serial", "stdio", "-no-reboot", "-m", str(args.mem), "-smp",
               str(args.cpus), "-semihosting-config", "enable=on,target=native", "-kernel", kernel,
               "-append", cmdline] + loader
        if args.disk:
            # virtio-blk on a virtio-mmio transport of the virt board, in the modern
            # (version 2) interface the kernel drives, not QEMU's legacy default.
            cmd += ["-global", "virtio-mmio.force-legacy=false",
                    "-drive", f"file={disk_image(args, self.scratch)},format=raw,if=none,id=disk0",
                    "-device", "virtio-blk-device,drive=disk0"]
        # e1000 cards on virt's PCIe root bus.
        cmd += net_arguments(qemu, ["-M", "virt"], args)
        if args.deterministic:
            cmd += ["-icount", "shift=0,sleep=off,align=off"]
        return cmd + args.extra
