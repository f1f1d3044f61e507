"""The audit in every report: what a submission's compiled code reaches for
that the reference solution's does not.

The nonce stops forged records printed by code that does not know it, not
kernel code written to find it. Such code has to call something the lab does
not need (the command line, the console, power-off), execute port I/O, or
carry strings shaped like records; the audit compares the student's objects
with the reference's on exactly these and puts the difference in one line.

Run as a script (`lab_audit.py --scan OBJ...`), it prints what it finds in
the objects as JSON: the grader runs it inside the sandbox, since the objects
are the student's.
"""

import json
import os
import re
import subprocess
import sys

# Record-shaped text: a serial-protocol keyword followed by a word.
RECORD_SHAPED = re.compile(rb"(?:^|[^A-Za-z_])(TEST|METRIC|COUNTER|DONE|PANIC)(?: |%|\\n)[ -~]{0,60}")
# i386 port I/O (in, out, ins, outs with their size suffixes).
IO_INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\s+(?:rep\s+)?(in|out|ins|outs)[bwl]?\s", re.M)
# What a symbol gives access to, for the one-line summary.
CATEGORIES = (
    ("command line", re.compile(r"param_|cmdline|nonce", re.I)),
    ("console", re.compile(r"kprintf|krecord|console|putc|uart|serial|vformat|write\b|puts", re.I)),
    ("power-off", re.compile(r"poweroff|power_off|shutdown|reboot|halt|_exit\b|\bexit\b|abort", re.I)),
    ("processes", re.compile(r"\bfork|setsid|exec[lv]|system\b|posix_spawn|clone|daemon|kill", re.I)),
    ("files", re.compile(r"\bopen|fopen|unlink|rename|mmap|chmod", re.I)),
)
MAX_SHOWN = 8


def objects_for(bdir, student_files):
    """Object files under @p bdir compiled from one of @p student_files
    (CMake names them <source>.o or <source>.obj under the target's folder)."""
    wanted = {}
    for rel in student_files:
        parent = os.path.basename(os.path.dirname(rel))
        wanted.setdefault(os.path.basename(rel), set()).add(parent)
    found = []
    for base, dirs, files in os.walk(bdir):
        for f in files:
            stem, ext = os.path.splitext(f)
            if ext in (".o", ".obj") and stem in wanted:
                path = os.path.join(base, f)
                parts = set(os.path.relpath(path, bdir).split(os.sep))
                if wanted[stem] & parts or "" in wanted[stem]:
                    found.append(path)
    return sorted(found)


def scan(objects):
    """{undefined: [...], io: n, strings: [...]} over @p objects."""
    undefined, strings, io = set(), set(), 0
    for obj in objects:
        nm = subprocess.run(["llvm-nm", "-u", "--demangle", obj], capture_output=True, text=True)
        for line in nm.stdout.splitlines():
            name = line.strip().split(" ", 1)[-1].strip()
            if name and not name.startswith(("__stack_chk", "_GLOBAL_OFFSET")):
                undefined.add(name)
        dis = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", obj],
                             capture_output=True, text=True)
        io += len(IO_INSTRUCTION.findall(dis.stdout))
        try:
            with open(obj, "rb") as f:
                data = f.read(16 << 20)
        except OSError:
            data = b""
        for m in RECORD_SHAPED.finditer(data):
            strings.add(m.group(0).lstrip(b"\0\n\r\t ").decode("ascii", "replace")[:60])
    return {"undefined": sorted(undefined), "io": io, "strings": sorted(strings)}


def category(symbol):
    for name, pattern in CATEGORIES:
        if pattern.search(symbol):
            return name
    return ""


class Audit:
    """The difference between a submission's objects and the reference's."""

    def __init__(self, student, reference):
        self.new_symbols = [s for s in student["undefined"] if s not in set(reference["undefined"])]
        self.io = student["io"]
        self.reference_io = reference["io"]
        self.strings = [s for s in student["strings"] if s not in set(reference["strings"])]
        self.error = ""

    @property
    def flagged(self):
        return bool(self.new_symbols or self.io > self.reference_io or self.strings)

    def line(self):
        """The audit as one line for the report."""
        if self.error:
            return f"Audit: not done ({self.error})"
        if not self.flagged:
            return ("Audit: nothing beyond the reference (no new external symbols, port I/O or "
                    "record-shaped strings in the student's objects)")
        parts = []
        if self.new_symbols:
            shown = [f"{s} [{category(s)}]" if category(s) else s
                     for s in self.new_symbols[:MAX_SHOWN]]
            more = len(self.new_symbols) - MAX_SHOWN
            parts.append("calls what the reference does not: " + ", ".join(shown) +
                         (f" and {more} more" if more > 0 else ""))
        if self.io > self.reference_io:
            parts.append(f"{self.io} port I/O instruction(s) (the reference has "
                         f"{self.reference_io})")
        if self.strings:
            parts.append("record-shaped strings: " +
                         ", ".join(repr(s) for s in self.strings[:MAX_SHOWN]))
        return "Audit: LOOK AT THIS SUBMISSION: its code " + "; ".join(parts)


def audit_build(grade, tree, bdir, jail, reference, root):
    """Scans the student's objects of the build in @p bdir (inside @p jail)
    and compares them with @p reference (scan() of the reference build)."""
    from . import lab_grade
    objects = objects_for(bdir, grade.rubric.student_files)
    empty = {"undefined": [], "io": 0, "strings": []}
    log = os.path.join(jail.work, "audit.json")
    out = jail.run([lab_grade.PYTHON, os.path.join(root, "tools", "lib", "lab_audit.py"),
                    "--scan"] + objects, log, 120, lab_grade.limits_for(120, 1 << 20))
    audit = Audit(empty, empty)
    try:
        found = json.loads(lab_grade.read_text(log))
        audit = Audit(found, reference)
    except ValueError:
        audit.error = "the object scan failed" + (" (time limit)" if out.timed_out else "")
    os.unlink(log)
    return audit


if __name__ == "__main__":
    if sys.argv[1:2] != ["--scan"]:
        sys.exit("usage: lab_audit.py --scan OBJECT...")
    json.dump(scan(sys.argv[2:]), sys.stdout)
