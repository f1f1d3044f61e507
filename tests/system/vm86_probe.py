#!/usr/bin/python3
"""Checks the vm86 BIOS memory probe of a loaderless boot against the machine.

    vm86_probe.py --build DIR --emu qemu|bochs --mem MB [--multiboot]
                  [--cmdline WORDS] [--method e820|e801|e88] [--run tools/run]

Boots the loaderless disk image with `test=vm86.probe_matches_boot_map`
through tools/run --json and reads the METRIC records it prints:
vm86.probe.usable_kb (what the BIOS calls found) and boot.usable_kb (the map
the kernel booted with, here the same probe). It fails unless

- the run ends cleanly and both metrics are present;
- the probed usable total is what the emulator was given less the BIOS's
  reservations: at least the 384 KB ISA hole (640 KB-1 MB) and the EBDA,
  at most SLACK_KB more (ACPI tables and the like at the top of memory);
- with --multiboot (QEMU only), a second boot of the same machine through
  its multiboot loader reports a boot.usable_kb within MATCH_KB of the probe;
- with --method, the console says the memory was probed by that method.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS_RUN = os.path.join(HERE, "..", "..", "tools", "run")
ISA_HOLE_KB = 384      # 640 KB to 1 MB is never RAM the OS may use
SLACK_KB = 4096        # what a BIOS may reserve beyond the hole (EBDA, ACPI, ...)
MATCH_KB = 1024        # how far a loader's map may differ from the BIOS's own
TEST = "vm86.probe_matches_boot_map"


def boot(args, boot_path, scratch, extra):
    summary = os.path.join(scratch, f"{boot_path}.json")
    cmdline = f"test={TEST} {args.cmdline}".strip()
    command = [sys.executable, args.run, "--build", args.build, "--arch", "i386",
               "--emu", args.emu, "--boot", boot_path, "--mem", str(args.mem),
               "--cmdline", cmdline, "--nonce", f"vm86{boot_path}{args.mem}",
               "--quiet", "--json", summary, "--timeout", "60"] + extra
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    verdict = (proc.stderr.strip().splitlines() or ["(no verdict)"])[-1]
    if proc.returncode != 0:
        sys.exit(f"FAIL: the {boot_path} boot at {args.mem} MB did not end cleanly: {verdict}")
    with open(summary) as f:
        metrics = json.load(f).get("metrics", {})
    values = {}
    for name in ("vm86.probe.usable_kb", "boot.usable_kb"):
        if name not in metrics:
            sys.exit(f"FAIL: the {boot_path} boot reported no METRIC {name}")
        values[name] = int(metrics[name]["value"])
    return values


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--emu", choices=["qemu", "bochs"], required=True)
    p.add_argument("--mem", type=int, required=True, metavar="MB")
    p.add_argument("--multiboot", action="store_true")
    p.add_argument("--cmdline", default="")
    p.add_argument("--method", choices=["e820", "e801", "e88"])
    p.add_argument("--run", default=TOOLS_RUN, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.multiboot and args.emu != "qemu":
        p.error("--multiboot needs QEMU: Bochs has no multiboot loader")
    extra = ["--expect-output", f"memory probed by {args.method}"] if args.method else []
    with tempfile.TemporaryDirectory(prefix="toll-vm86-") as scratch:
        disk = boot(args, "disk", scratch, extra)
        probed = disk["vm86.probe.usable_kb"]
        given = args.mem * 1024
        print(f"{args.emu} {args.mem} MB: given {given} KB, probed usable {probed} KB, "
              f"booted with {disk['boot.usable_kb']} KB")
        if args.method in (None, "e820", "e801"):
            low, high = given - ISA_HOLE_KB - SLACK_KB, given - ISA_HOLE_KB
        else:  # AH=88h sees at most 64 MB - 1 KB above 1 MB
            low, high = min(given, 65 * 1024) - ISA_HOLE_KB - SLACK_KB, given - ISA_HOLE_KB
        if not low <= probed <= high:
            sys.exit(f"FAIL: probed {probed} KB, expected between {low} and {high} KB")
        if disk["boot.usable_kb"] != probed:
            sys.exit("FAIL: the loaderless boot did not boot with the map it probed")
        if args.multiboot:
            mb = boot(args, "multiboot", scratch, [])["boot.usable_kb"]
            print(f"multiboot map of the same machine: {mb} KB usable")
            if abs(mb - probed) > MATCH_KB:
                sys.exit(f"FAIL: the probe ({probed} KB) and the multiboot map ({mb} KB) "
                         f"differ by more than {MATCH_KB} KB")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
