"""The emulators tools/run can start, and prepare(), which picks the Machine
(machine.py) for a run's architecture and emulator."""

from .bochs import Bochs
from .machine import Machine, RunOptions, SetupError, build_file, find_tool  # noqa: F401
from .qemu import QemuArm64, QemuI386

# (architecture, emulator) -> the Machine that runs it.
MACHINES = {
    ("i386", "qemu"): QemuI386,
    ("i386", "bochs"): Bochs,
    ("arm64", "qemu"): QemuArm64,
}


def prepare(args: RunOptions) -> Machine:
    """The Machine for @p args (tools/run's options, as a RunOptions), with its
    scratch folder ready and its command built. Raises SetupError when
    something it needs is missing."""
    machine = MACHINES.get((args.arch, args.emu))
    if machine is None:
        raise SetupError(f"{args.arch} does not run under {args.emu}")
    return machine(args)
