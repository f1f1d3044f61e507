#!/usr/bin/python3
"""make fuzz: the long run of the seeded system-call fuzzer and fault injection.

    fuzz_long.py [--build DIR] [--calls N] [--seed S] [--only NAME]

Boots once per configuration: ut_fuzz with N calls (default 10^6) under each
i386 layout and on arm64, then ut_failsweep over every portable user test on
both architectures. Prints, per run, the calls fuzzed, the children, the free
pages before and after, the allocation failures injected; exits 1 if any run
did not end in a clean DONE (a panic, a hang, a leak, a failed check).
"""

import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def configs(calls, seed):
    fuzz = f"run=/bin/ut_fuzz calls={calls} seed={seed}"
    for split in ("3/1", "3/1-pti", "4/4"):
        yield f"i386 {split} fuzz", ["--arch", "i386", "--cmdline", f"vm.split={split} {fuzz}"]
    yield "arm64 fuzz", ["--arch", "arm64", "--cmdline", fuzz]
    yield "i386 failsweep", ["--arch", "i386", "--cmdline", "fail.alloc=0 run=/bin/ut_failsweep"]
    yield "arm64 failsweep", ["--arch", "arm64", "--cmdline",
                              "fail.alloc=0 run=/bin/ut_failsweep ut_hello ut_forkexec ut_pipe "
                              "ut_mmap ut_efault ut_procs64 ut_sh"]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--calls", type=int, default=1000000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", default=None, help="run only the configurations containing this")
    args = p.parse_args(argv)
    failed = []
    for name, run_args in configs(args.calls, args.seed):
        if args.only and args.only not in name:
            continue
        start = time.time()
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "run"), "--build",
                               args.build, "--timeout", "7200", *run_args],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        summary = [line for line in proc.stdout.splitlines()
                   if re.match(r"# (fuzzed|free pages|\d+ runs)|not ok|PANIC|tools/run", line)]
        print(f"== {name} ({time.time() - start:.0f} s)")
        for line in summary:
            print("   " + line)
        if proc.returncode != 0:
            failed.append(name)
            log = os.path.join(args.build, "fuzz-" + re.sub(r"\W+", "_", name) + ".log")
            with open(log, "w") as f:
                f.write(proc.stdout)
            print(f"   FAILED: the whole console is in {log}; the last '# child' line names "
                  "the child to replay")
    if failed:
        sys.exit("make fuzz: failed: " + ", ".join(failed))
    print("make fuzz: every run ended cleanly")


if __name__ == "__main__":
    main(sys.argv[1:])
