#!/usr/bin/python3
"""The crash test of ext3's journal: disk_workload's crash mode writes files,
fsyncs each and announces it ("SYNCED name size"); the power is cut at many
points of that run, and after each cut

  1. e2fsck -fy replays the journal (and must fix nothing else),
  2. e2fsck -fn then finds the file system clean,
  3. every file announced before the cut is whole on the image (debugfs).

Two ways to cut: --cuts K stops the machine just before its Nth write to the
disk (the kernel's blk.cut=N) at K points spread over the whole run, exact
and repeatable; --kills K kills the emulator at K wall-clock moments, as a
power failure would. Prints one line per point and a summary.

    crash_sweep.py --work DIR [--cuts K] [--kills K] -- <tools/run arguments>
"""

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "..", "..", "tools", "run")
BLOCK = 1024


def pattern(n: int, size: int) -> bytes:
    return bytes(((i * 7 + n * 13 + (i >> 10)) & 0xFF) for i in range(size))


def boot(run_args: list[str], image: str, cmdline: str, timeout: float) -> str:
    cmd = [sys.executable, RUN, *run_args, "--disk", image, "--timeout", str(timeout),
           "--cmdline", cmdline]
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    return r.stdout + r.stderr


def journal_start(image: str) -> int:
    """The journal superblock's s_start: nonzero while the log holds a transaction."""
    out = subprocess.run(["dumpe2fs", "-h", image], capture_output=True, text=True).stdout
    m = re.search(r"^Journal start:\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else 0


def check(image: str, console: str) -> tuple[bool, bool, int, str]:
    """After a cut: (ok, the log held a transaction, files checked, what went wrong)."""
    replayed = journal_start(image) != 0
    r = subprocess.run(["e2fsck", "-fy", image], capture_output=True, text=True)
    text = r.stdout + r.stderr
    if r.returncode not in (0, 1):
        return False, replayed, 0, f"e2fsck -fy exited {r.returncode}:\n{text}"
    fixes = [line for line in text.splitlines() if re.search(r"\? yes$", line)]
    if fixes:
        return False, replayed, 0, "e2fsck -fy had to fix more than the journal:\n" + text
    r = subprocess.run(["e2fsck", "-fn", image], capture_output=True, text=True)
    if r.returncode != 0:
        return False, replayed, 0, f"e2fsck -fn after the replay exited {r.returncode}:\n" \
                                   f"{r.stdout}{r.stderr}"
    synced = re.findall(r"^SYNCED f(\d+) (\d+)$", console, re.M)
    for n, size in synced:
        got = subprocess.run(["debugfs", "-R", f"cat /c/f{n}", image],
                             capture_output=True).stdout
        if got != pattern(int(n), int(size)):
            return False, replayed, len(synced), f"/c/f{n} was fsynced but is not whole " \
                                                 f"({len(got)} of {size} bytes)"
    return True, replayed, len(synced), ""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", required=True)
    p.add_argument("--cuts", type=int, default=0, help="blk.cut points (exact)")
    p.add_argument("--kills", type=int, default=0, help="emulator kills at random moments")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--files", type=int, default=30, help="files the workload writes")
    p.add_argument("--fs", choices=["ext3", "ext2"], default="ext3",
                   help="ext2 (no journal) shows what the sweep catches without one")
    p.add_argument("run_args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    run_args = [x for x in a.run_args if x != "--"]
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    os.makedirs(a.work, exist_ok=True)
    pristine = os.path.join(a.work, "pristine.img")
    if os.path.exists(pristine):
        os.remove(pristine)
    subprocess.run(["mke2fs", "-q", "-F", "-t", a.fs, "-b", str(BLOCK), pristine, "8192"],
                   check=True, capture_output=True)
    image = os.path.join(a.work, "crash.img")
    program = f"run=/bin/disk_workload crash {a.files}"

    # The whole run once: how many writes it makes, how long it takes, and
    # that it ends clean.
    shutil.copy(pristine, image)
    start = time.monotonic()
    console = boot(run_args, image, program, 60)
    seconds = time.monotonic() - start
    m = re.search(r"COUNTER blk.write_calls (\d+)", console)
    if "crash workload done" not in console or not m:
        sys.exit("crash_sweep: the uncut run did not finish:\n" + console[-3000:])
    writes = int(m.group(1))
    ok, _, files, why = check(image, console)
    if not ok or files != a.files:
        sys.exit(f"crash_sweep: the uncut run is not clean: {why}")
    print(f"crash_sweep: the uncut run makes {writes} disk writes in {seconds:.2f} s", flush=True)

    points: list[tuple[str, str, float]] = []
    for k in range(a.cuts):
        n = 1 + (k * writes) // a.cuts + (writes // a.cuts) // 2
        points.append((f"cut before write {n}", f"blk.cut={n} {program}", 60))
    rng = random.Random(a.seed)
    for _ in range(a.kills):
        t = round(rng.uniform(0.2, seconds), 2)
        points.append((f"kill at {t} s", program, t))

    failed = replays = checked = 0
    for what, cmdline, timeout in points:
        shutil.copy(pristine, image)
        console = boot(run_args, image, cmdline, timeout)
        ok, replayed, files, why = check(image, console)
        replays += replayed
        checked += files
        print(f"crash_sweep: {what}: {files} fsynced files whole, "
              f"log {'held a transaction' if replayed else 'empty'}: {'ok' if ok else 'FAILED'}",
              flush=True)
        if not ok:
            failed += 1
            print(why)
    print(f"crash_sweep: {len(points)} crash points, {replays} with a transaction in the log, "
          f"{checked} fsynced files checked, {failed} failed")
    if failed:
        sys.exit(1)
    print("crash_sweep: PASS")


if __name__ == "__main__":
    main()
