#!/usr/bin/python3
"""make stress: the long run of ut_stress at 2 and 4 CPUs on both architectures,
and of ut_smp_vm (superpages promoted, demoted, protected and unmapped under
workers on the other CPUs) at 4 CPUs on both arm64 granules.

    stress_long.py [--build DIR] [--iters N] [--only NAME]

Boots once per configuration, with smp.user=1 (user processes on every
CPU) and one worker per CPU running N rounds
(default 3000) of fork+exec, fork+exit, mmap/mprotect/munmap, a pipe and two
signals. Prints, per run, the work done and the free pages and heap objects
before and after; exits 1 if any run did not end in a clean DONE (a panic, a
lock-order report, a hang, a leak, a failed check). The short run is in make
check (tests/system/stress.cmake).
"""

import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def configs(iters):
    for arch in ("i386", "arm64"):
        for cpus in (2, 4):
            yield (f"{arch} cpus={cpus}",
                   ["--arch", arch, "--cpus", str(cpus), "--cmdline",
                    f"smp.user=1 run=/bin/ut_stress iters={iters}"])
    # ut_smp_vm's long run: iters ranges of many changes each, and ASIDs
    # squeezed to 2 bits so that the generation rolls over throughout.
    vm_iters = max(1, iters // 150)
    for granule in ("4K", "16K"):
        yield (f"arm64 {granule} cpus=4 ut_smp_vm",
               ["--arch", "arm64", "--granule", granule, "--cpus", "4", "--cmdline",
                f"arm64.asid_bits=2 run=/bin/ut_smp_vm rounds=16 iters={vm_iters} ops=40"])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--iters", type=int, default=3000)
    p.add_argument("--only", default=None, help="run only the configurations containing this")
    args = p.parse_args(argv)
    failed = []
    for name, run_args in configs(args.iters):
        if args.only and args.only not in name:
            continue
        start = time.time()
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "run"), "--build",
                               args.build, "--timeout", "3600", *run_args],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wanted = r"# (\d+ CPUs|\d+ forks|worker|stress:|asid:)|not ok|PANIC|tools/run"
        summary = [line for line in proc.stdout.splitlines() if re.match(wanted, line)]
        print(f"== {name} ({time.time() - start:.0f} s)")
        for line in summary:
            print("   " + line)
        if proc.returncode != 0:
            failed.append(name)
            log = os.path.join(args.build, "stress-" + re.sub(r"\W+", "_", name) + ".log")
            with open(log, "w") as f:
                f.write(proc.stdout)
            print(f"   FAILED: the whole console is in {log}")
    print("stress: " + ("every run clean" if not failed else "FAILED: " + ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
