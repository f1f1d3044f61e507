#!/usr/bin/python3
"""The number lint of the book (book/ext/tollnumbers.py) can fail, and does
not fail on a good page: it must refuse tests/book/unsourced.rst, naming every
number typed by hand (in the prose, a table, a literal block, an alt text, a
caption and a title) and the reference to a missing result, and accept
tests/book/sourced.rst."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LINT = os.path.join(HERE, "..", "..", "book", "ext", "tollnumbers.py")


def lint(name):
    proc = subprocess.run([sys.executable, LINT, "--lint", os.path.join(HERE, name)],
                          capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def main():
    failures = []
    status, out = lint("unsourced.rst")
    if status == 0:
        failures.append("the lint accepted unsourced.rst")
    for planted in ("'182 instructions'", "'1.43\ntimes'", "'2 times'", "'182'",
                    "'2900 thousand'", "'METRIC kern.loop_100k 400012 cycles'",
                    "'3/1,lat_syscall,lat_syscall.getppid,182,instr'",
                    "no result 3/1:no_such.metric",
                    # a literal block, an alt text, a caption and a title are
                    # checked like the prose
                    "'19 benchmark(s)'", "'4 configuration(s)'", "'1237 rows'",
                    "'1.2'", "'1.5'", "'25 times'", "'900 instructions'", "'104 719'"):
        if planted.replace("\n", " ") not in out.replace("\n", " ").replace("  ", " "):
            failures.append(f"the lint did not name {planted!r} in unsourced.rst")
    status, good = lint("sourced.rst")
    if status != 0:
        failures.append("the lint refused sourced.rst:\n" + good)
    if failures:
        print(out)
        print("\n".join("FAIL: " + f for f in failures))
        return 1
    print("the lint refuses every planted number and accepts the sourced page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
