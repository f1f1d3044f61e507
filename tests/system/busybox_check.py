#!/usr/bin/python3
"""Debian's busybox-static on Toll: one boot runs many applets, or a part of
busybox's own testsuite, and this harness checks what they printed.

--applets: a busybox sh script (busybox_applets.sh) runs ls, cat, wc,
sha256sum, dd, mkdir, touch, rm, mv, ln, pipes with $?, redirection, ps
(with -o: its own pid, parent, size and state), /proc/self/maps and fd,
top, free, df, mount, uname and id and prints one "R name value" line each; the
values it must print are computed here on the host (the sha256 of a file
this harness writes, its size and line count) or are Linux's (uname, id).

--ash: busybox sh reads lines typed on the console, as `make qemu
BUSYBOX=1` gives it to a person: its prompt, arithmetic, cd, a pipeline and
exit must work.

--suite NAME...: the named *.tests of the testsuite in the Debian source
package (tools/deps --busybox fetches it) run under busybox sh in the
writable tree; the harness counts PASS, FAIL and SKIPPED lines, prints them
and every failure's name, and fails when fewer than --min-pass passed.

Exit 77 (skipped) when tools/deps --busybox has not fetched busybox.
"""

import argparse
import hashlib
import os
import random
import re
import subprocess
import sys
import tempfile

from lib import busybox  # PYTHONPATH=tools (tests/system/busybox.cmake)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SKIPPED = 77
UNAME_MACHINE = {"i386": "i686", "arm64": "aarch64"}


def boot(args: argparse.Namespace, adds: list[str], script: str, timeout: int) -> str:
    """Boots Toll with busybox and @adds, runs @script under busybox sh; the console."""
    bb = busybox.binary(args.arch)
    assert bb is not None
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run"), "--arch", args.arch,
           "--build", args.build, "--timeout", str(timeout), "--add", bb,
           "--cmdline", f"run=/bin/busybox sh {script}"]
    for a in adds:
        cmd += ["--add", a]
    result = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    return result.stdout + result.stderr


def applets(args: argparse.Namespace) -> int:
    rng = random.Random(2026)
    blob = bytes(rng.getrandbits(8) for _ in range(100_000))
    lines = "".join(f"line {i} of the file\n" for i in range(137))
    expected = {
        "uname": f"Linux {UNAME_MACHINE[args.arch]}",
        "id": "uid=0 gid=0 groups=0",
        "sha256": hashlib.sha256(blob).hexdigest(),
        "wc": f"{len(blob)} {lines.count(chr(10))} {len(lines.split())}",
        "cat": hashlib.sha256(lines.encode()).hexdigest(),
        "dd": f"{hashlib.sha256(blob).hexdigest()} {len(blob)}",
        "dd_skip": hashlib.sha256(blob[4096 * 3:4096 * 5]).hexdigest(),
        "mkdir": "f",
        "redirect": "hello world",
        "append_stderr": "1 err",
        "mv": "g",
        "ln": "hello 2 g",
        "rm": "g hard soft",
        "rmdir_nonempty": "1",
        "pipe_status": "0 1 7",
        "pipe_three": "3",
        "ps": "1",
        "ps_o": "1",
        "maps": "1 1",
        "fd": "1 /dev/console",
        "top": "1",
        "free": "1",
        "df": "/",
        "mount": "tmpfs on / type tmpfs (rw)",
        "uptime": "1",
        "truncate": "5000 0",
        "sort": "a b c",
        "cwd": "/tmp/a",
        "ping": "1",
    }
    with tempfile.TemporaryDirectory() as scratch:
        paths = {}
        for name, data in (("blob", blob), ("lines", lines.encode())):
            paths[name] = os.path.join(scratch, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        adds = [f"{paths['blob']}=/data/blob", f"{paths['lines']}=/data/lines",
                os.path.join(HERE, "busybox_applets.sh") + "=/bin/busybox_applets.sh"]
        out = boot(args, adds, "/bin/busybox_applets.sh", 120)
    got = {}
    for line in out.splitlines():
        m = re.match(r"^R (\S+) ?(.*?)\s*$", line)
        if m:
            got[m.group(1)] = " ".join(m.group(2).split())
    failed = 0
    for name, want in expected.items():
        have = got.get(name)
        ok = have == want
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: {have!r}" + ("" if ok else f", want {want!r}"))
    if failed or len(got) < len(expected):
        print(f"{failed} of {len(expected)} checks failed; the console:\n{out}")
        return 1
    print(f"all {len(expected)} applet checks passed on {args.arch}")
    return 0


def ash(args: argparse.Namespace) -> int:
    bb = busybox.binary(args.arch)
    assert bb is not None
    typed = "echo $((6*7))\\ncd /tmp && mkdir typed && cd typed && pwd\\n" \
            "echo a b c | wc -w\\nexit 3\\n"
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run"), "--arch", args.arch,
           "--build", args.build, "--timeout", "60", "--add", bb,
           "--cmdline", "run=/bin/busybox sh", "--prompt", "# ", "--input", typed]
    out = subprocess.run(cmd, capture_output=True, text=True, errors="replace").stdout
    lines = [line.strip() for line in out.splitlines()]
    want = ["42", "/tmp/typed", "3"]
    missing = [w for w in want if w not in lines]
    ended = "TEST run:/bin/busybox FAIL exit status 3" in out
    if missing or not ended:
        print(f"busybox sh on the console: missing {missing}, exit 3 seen: {ended}\n{out}")
        return 1
    print(f"busybox sh read and ran the typed lines on {args.arch}")
    return 0


def suite(args: argparse.Namespace) -> int:
    source = busybox.testsuite_dir()
    if not source:
        print("busybox's testsuite is not fetched: tools/deps --busybox")
        return SKIPPED
    adds = []
    for root, _, files in os.walk(source):
        for f in files:
            path = os.path.join(root, f)
            rel = os.path.relpath(path, source)
            top = rel.split(os.sep)[0]
            if (f in ("testing.sh", "OPTIONFLAGS") or
                    any(top == t or top == t.removesuffix(".tests") for t in args.names)):
                adds.append(f"{path}=/testsuite/{rel}")
    with tempfile.TemporaryDirectory() as scratch:
        script = os.path.join(scratch, "busybox_suite.sh")
        with open(script, "w") as f:
            f.write("cd /testsuite || exit 1\n")
            f.write('export OPTIONFLAGS="$(cat OPTIONFLAGS)" ECHO=echo SKIP_KNOWN_BUGS=1\n')
            f.write("export PATH=/bin LINKSDIR=/bin bindir=/bin\n")
            for name in args.names:
                f.write(f'echo "== {name}"; sh ./{name} 2>&1\n')
            f.write('echo "== end"\n')
        out = boot(args, adds + [f"{script}=/bin/busybox_suite.sh"], "/bin/busybox_suite.sh",
                   args.timeout)
    counts = {"PASS": 0, "FAIL": 0, "SKIPPED": 0}
    failures = []
    current = "?"
    for line in out.splitlines():
        if line.startswith("== "):
            current = line[3:]
        m = re.match(r"^(PASS|FAIL|SKIPPED): (.*)$", line)
        if m:
            counts[m.group(1)] += 1
            if m.group(1) == "FAIL":
                failures.append(f"{current}: {m.group(2)}")
    print(f"busybox testsuite on Toll ({args.arch}): {counts['PASS']} passed, "
          f"{counts['FAIL']} failed, {counts['SKIPPED']} skipped, of {' '.join(args.names)}")
    for f in failures:
        print(f"  FAIL {f}")
    if "== end" not in out:
        print(f"the run did not reach the end; the console:\n{out}")
        return 1
    if counts["PASS"] < args.min_pass:
        print(f"fewer than {args.min_pass} passed; the console:\n{out}")
        return 1
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", choices=busybox.ARCHES, required=True)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--applets", action="store_true")
    p.add_argument("--ash", action="store_true")
    p.add_argument("--suite", dest="names", nargs="+", default=None, metavar="NAME.tests")
    p.add_argument("--min-pass", type=int, default=1)
    p.add_argument("--timeout", type=int, default=200)
    args = p.parse_args(argv)
    if not busybox.binary(args.arch):
        print(f"busybox for {args.arch} is not fetched: tools/deps --busybox")
        return SKIPPED
    if args.ash:
        return ash(args)
    return applets(args) if args.applets else suite(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
