#!/usr/bin/python3
"""Runs `tools/bench --profile lat_syscall` (the command given) and checks its
table: the null system call's handler (sys_getppid) and the dispatcher
(syscall_dispatch) are named, and the kernel's rows account for at least
a third of the measured path (the rest is the user loop and the entry stub
before stepping starts). A profiler that counted nothing, or named nothing,
fails.

    profile_names_functions.py TOOLS_BENCH... --out DIR
"""

import csv
import os
import subprocess
import sys


def main(argv: list[str]) -> int:
    out = argv[argv.index("--out") + 1]
    run = subprocess.run(argv + ["--profile", "lat_syscall"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        print(run.stdout)
        return 1
    with open(os.path.join(out, "profile-lat_syscall.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    named = {r["function"]: int(r["instr"]) for r in rows}
    total = named.pop("total", 0)
    outside = sum(v for k, v in named.items() if k.startswith("(user mode"))
    kernel = sum(v for k, v in named.items() if not k.startswith("(user mode"))
    problems = [f"{f} is not in the table" for f in ("sys::sys_getppid", "i386::syscall_dispatch")
                if named.get(f, 0) <= 0]
    if total <= 0 or kernel * 3 < total or kernel + outside != total:
        problems.append(f"the kernel's rows hold {kernel} of {total} instructions")
    for p in problems:
        print(f"FAILED: {p}")
    if not problems:
        print(f"profile of lat_syscall: {kernel} of {total} instructions by function")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
