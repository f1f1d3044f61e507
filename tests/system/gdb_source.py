#!/usr/bin/python3
"""Debugging works as the book says: boots a kernel with `tools/run --gdb`,
attaches gdb-multiarch in batch mode through the repository's own gdbinit
(tools/gdbinit, tools/gdbinit-arm64), stops in toll::kernel_main and lists an
assembly routine; passes only if gdb printed source lines, and those lines
are the ones in the checkout (so a build that left gdb without its sources,
or with another checkout's, fails).

    gdb_source.py --arch i386|arm64 --build DIR
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile

from lib import process

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Per architecture: the gdbinit of the book, and an assembly routine to list.
ARCHES = {
    "i386": ("tools/gdbinit", "i386_fast_copy"),
    "arm64": ("tools/gdbinit-arm64", "arm64_copy_user"),
}
# gdb prints a source line as "<number>\t<text>".
SOURCE_LINE = re.compile(r"^(\d+)\t(.*)$")
# "Breakpoint 1, toll::kernel_main (info=...) at build/i386/../../src/kernel/kern/main.cpp:146"
STOPPED = re.compile(r"^Breakpoint 1, (.*?) \(.*\) at (\S+):(\d+)$")
# The debugging appendix shows this session; "…" stands for what depends on
# the build (addresses, line numbers, argument values).
APPENDIX = os.path.join(ROOT, "book", "appendix", "debugging.rst")


def appendix_transcript():
    """The gdb output lines of the appendix's session, as regular expressions."""
    with open(APPENDIX) as f:
        text = f.read()
    start = text.index("   (gdb) break toll::kernel_main")
    block = text[start:text.index("\n\n", start)]
    return [(line.strip(), re.compile(".*?".join(re.escape(part) for part in squeeze(line).split("…"))
                                      + "$"))
            for line in block.splitlines() if not line.strip().startswith("(gdb)")]


def squeeze(line):
    """@p line with its runs of white space made one space (gdb prints a tab
    after a line number; the book a run of spaces)."""
    return " ".join(line.split())


def free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def gdb_script(arch, build, port):
    """The book's gdbinit, pointed at @p build and @p port, plus the checks."""
    init, routine = ARCHES[arch]
    with open(os.path.join(ROOT, init)) as f:
        text = f.read()
    text = text.replace("localhost:1234", f"localhost:{port}")
    # The image's path is quoted for gdb: the build may sit under a folder
    # whose name holds a space.
    text = re.sub(r"^file build/(\S+)$", lambda m: f'file "{build}/{m.group(1)}"', text,
                  flags=re.M)
    return text + (f"break toll::kernel_main\ncontinue\nbacktrace\n"
                   f"echo ---listing---\\n\nlist {routine}\nkill\n")


def check_lines(output, lines_from):
    """Every "<n>\t<text>" line in @p output must equal line n of the file
    lines_from() names; returns how many were checked."""
    checked = 0
    for line in output:
        m = SOURCE_LINE.match(line)
        if not m:
            continue
        path, source = lines_from()
        number = int(m.group(1))
        if number > len(source) or source[number - 1].rstrip("\n") != m.group(2):
            sys.exit(f"gdb_source: gdb printed line {number} of {path} as {m.group(2)!r}, "
                     f"which is not what the checkout has there")
        checked += 1
    return checked


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", choices=sorted(ARCHES), required=True)
    p.add_argument("--build", required=True)
    args = p.parse_args(argv)
    port = free_port()
    run = [sys.executable, os.path.join(ROOT, "tools", "run"), "--build", args.build,
           "--arch", args.arch, "--gdb", "--gdb-port", str(port), "--cmdline", "test=kern.none"]
    with tempfile.NamedTemporaryFile("w", suffix=".gdb") as script, \
            process.Group(run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        script.write(gdb_script(args.arch, args.build, port))
        script.flush()
        # QEMU needs a moment to open its stub: gdb retries the connection.
        gdb = subprocess.run(["gdb-multiarch", "-nx", "-batch", "-ex", "set tcp connect-timeout 20",
                              "-x", script.name], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    out = gdb.stdout.splitlines()
    print(gdb.stdout + gdb.stderr)
    stop = next((STOPPED.match(l) for l in out if STOPPED.match(l)), None)
    if stop is None:
        sys.exit("gdb_source: gdb never stopped at toll::kernel_main")
    if "No such file" in gdb.stdout + gdb.stderr:
        sys.exit("gdb_source: gdb could not find a source file")
    marker = out.index("---listing---") if "---listing---" in out else len(out)
    if stop.group(1) != "toll::kernel_main":
        sys.exit(f"gdb_source: the breakpoint on kernel_main stopped in {stop.group(1)}, "
                 "not in kernel_main's own frame")
    stop_file = os.path.normpath(os.path.join(ROOT, stop.group(2)))
    if not stop_file.endswith(os.path.join("src", "kernel", "kern", "main.cpp")):
        sys.exit(f"gdb_source: the breakpoint on kernel_main stopped in {stop.group(2)}")
    if args.arch == "i386":  # the appendix shows the i386 session
        for shown, pattern in appendix_transcript():
            if not any(pattern.match(squeeze(line)) for line in out[:marker]):
                sys.exit(f"gdb_source: the debugging appendix shows {shown!r}, which gdb did "
                         "not print")

    def read(path):
        with open(path) as f:
            return path, f.readlines()

    at_stop = check_lines(out[:marker], lambda: read(stop_file))
    if at_stop == 0:
        sys.exit("gdb_source: gdb stopped in kernel_main but printed no source line")
    # The listing of the assembly routine: find its file from gdb's own answer.
    info = subprocess.run(["grep", "-rl", f"^{ARCHES[args.arch][1]}:",
                           os.path.join(ROOT, "src", "arch", args.arch)],
                          capture_output=True, text=True).stdout.splitlines()
    if len(info) != 1:
        sys.exit(f"gdb_source: cannot find the file defining {ARCHES[args.arch][1]}")
    listed = check_lines(out[marker + 1:], lambda: read(info[0]))
    if listed == 0:
        sys.exit(f"gdb_source: gdb printed no source for {ARCHES[args.arch][1]} (assembly)")
    print(f"gdb_source: {args.arch}: stopped at {stop.group(2)}:{stop.group(3)} with "
          f"{at_stop} source line(s); listed {listed} line(s) of {os.path.relpath(info[0], ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
