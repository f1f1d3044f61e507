"""Lab regions in the source, and the starter trees tools/mklab writes from them.

A region is the part of a file a student writes for a lab. In C, C++ and
linker scripts its markers are `//` comments; in assembly (.S), CMake, Python,
TOML and shell they are `#` comments:

    <c> LAB <id> BEGIN: <hint for the student>
    <c> LAB <id> HINT: <the hint continued> (optional, repeatable)
    ... the reference solution ...
    <c> LAB <id> STUB
    <c> ... optional lines that make the starter compile, commented out ...
    <c> LAB <id> END

A hint too long for one line continues on HINT lines right after BEGIN, so
that it stays within the column limit and still reaches the starter whole.
A starter replaces the solution with a TODO line and the STUB lines with
their comment prefix removed. The markers and the hint stay, once, so
students see where to write and what.
"""

import os
import re
import shutil
import subprocess
from typing import Dict, List, Optional, Sequence

# The comment prefix of a region marker, by file name ending.
COMMENT_BY_SUFFIX = {
    ".c": "//", ".cc": "//", ".cpp": "//", ".h": "//", ".hpp": "//", ".ld": "//",
    ".S": "#", ".s": "#", ".cmake": "#", ".py": "#", ".toml": "#", ".sh": "#",
}
COMMENT_BY_NAME = {"CMakeLists.txt": "#", "Makefile": "#"}

MARKER = re.compile(
    r"^(?P<indent>[ \t]*)(?P<comment>//|#)[ \t]*LAB[ \t]+(?P<lab>[A-Za-z0-9_.-]+)[ \t]+"
    r"(?P<kind>BEGIN|HINT|STUB|END)\b(?::[ \t]*(?P<hint>.*?))?[ \t]*$")

# Folders whose files only talk about markers (documentation, the grader's
# own tests) and never hold a region.
NOT_SOURCE = ("book/", "tests/grading/", "tools/lib/lab_")

# Folders that belong to the instructor alone (the instructor edition's
# answer and grading notes): never copied into a starter tree.
INSTRUCTOR_ONLY = ("book/instructor/",)


# The record path: the test framework's output, the formatter it prints with,
# the console and its drivers. The grader trusts what passes through them, so
# no lab region may lie in them (tools/grade --check refuses one that does).
RECORD_PATH = ("src/kernel/kern/ktest.cpp", "src/kernel/kern/ktest.h",
               "src/kernel/kern/console.cpp", "src/kernel/kern/console.h",
               "src/kernel/kern/panic.cpp", "src/lib/format.cpp", "src/lib/format.h",
               "src/arch/i386/uart.cpp", "src/arch/i386/console_irq.cpp",
               "src/arch/arm64/uart.cpp", "src/arch/arm64/console_irq.cpp")


def on_record_path(regions: Sequence["Region"]) -> List["Region"]:
    """The regions of @p regions that lie in a file of the record path."""
    return [r for r in regions if r.path in RECORD_PATH]


class RegionError(Exception):
    """A marker out of place: unmatched, nested, or in the wrong comment style."""


class Region:
    """One lab region of one file; line numbers count from 1."""

    def __init__(self, path: str, lab: str, hint: str, begin: int, stub: Optional[int], end: int,
                 indent: str, comment: str, hint_end: Optional[int] = None) -> None:
        self.path, self.lab, self.hint = path, lab, hint
        self.begin, self.stub, self.end = begin, stub, end  # marker line numbers (stub may be None)
        self.hint_end = hint_end or begin  # the last line of the hint (BEGIN or its last HINT)
        self.indent, self.comment = indent, comment

    def __repr__(self) -> str:
        return f"{self.path}:{self.begin}-{self.end} (lab {self.lab})"


def comment_for(path: str) -> Optional[str]:
    """The marker comment prefix for @p path, or None when it cannot hold regions."""
    name = os.path.basename(path)
    if name in COMMENT_BY_NAME:
        return COMMENT_BY_NAME[name]
    return COMMENT_BY_SUFFIX.get(os.path.splitext(name)[1])


def may_hold_regions(path: str) -> bool:
    return comment_for(path) is not None and not path.startswith(NOT_SOURCE)


def parse_regions(path: str, text: str) -> List["Region"]:
    """Returns the regions of one file's text; raises RegionError on bad markers."""
    want = comment_for(path)
    regions, open_marker, stub_line = [], None, None
    open_line = hint_end = 0
    hint = ""
    for number, line in enumerate(text.splitlines(), 1):
        m = MARKER.match(line)
        if not m:
            continue
        where = f"{path}:{number}"
        if m.group("comment") != want:
            raise RegionError(f"{where}: lab markers in this file are '{want}' comments")
        kind, lab = m.group("kind"), m.group("lab")
        if kind == "BEGIN":
            if open_marker:
                raise RegionError(f"{where}: LAB {lab} BEGIN inside the region opened at line "
                                  f"{open_line} (regions do not nest)")
            if not m.group("hint"):
                raise RegionError(f"{where}: LAB {lab} BEGIN needs a hint: 'BEGIN: <hint>'")
            open_marker, open_line, stub_line = m, number, None
            hint, hint_end = m.group("hint"), number
            continue
        if not open_marker or open_marker.group("lab") != lab:
            raise RegionError(f"{where}: LAB {lab} {kind} without a matching BEGIN")
        if kind == "HINT":
            if hint_end != number - 1:
                raise RegionError(f"{where}: LAB {lab} HINT must follow its BEGIN or another HINT")
            if not m.group("hint"):
                raise RegionError(f"{where}: LAB {lab} HINT needs text: 'HINT: <more hint>'")
            hint, hint_end = hint + " " + m.group("hint"), number
            continue
        if kind == "STUB":
            if stub_line:
                raise RegionError(f"{where}: a second STUB in one region")
            stub_line = number
            continue
        regions.append(Region(path, lab, hint, open_line, stub_line, number,
                              open_marker.group("indent"), want, hint_end))
        open_marker = None
    if open_marker:
        raise RegionError(f"{path}: LAB {open_marker.group('lab')} BEGIN without an END")
    return regions


def source_files(root: str) -> List[str]:
    """The checkout's files: tracked or new but not ignored by git, relative to @p root.

    Falls back to walking the folder (skipping build*/ and .git) when @p root is
    not a git work tree.
    """
    try:
        # Only when @p root is a work tree's top: a copy inside another
        # repository's ignored build folder would list nothing.
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, check=True, text=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(root):
            raise subprocess.CalledProcessError(1, "git")
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        names = sorted({n for n in out.decode().split("\0") if n})
        return [n for n in names if os.path.isfile(os.path.join(root, n))
                and not os.path.islink(os.path.join(root, n))]
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for base, dirs, files in os.walk(root):
        rel = os.path.relpath(base, root)
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__")
                         and not (rel == "." and d.startswith("build")))
        for f in files:
            if f.endswith(".pyc"):
                continue
            p = os.path.normpath(os.path.join(rel, f))
            if not os.path.islink(os.path.join(root, p)):
                found.append(p)
    return sorted(found)


def find_regions(root: str, files: Optional[Sequence[str]] = None) -> List[Region]:
    """Every region in the checkout at @p root, in file order."""
    regions = []
    for rel in files if files is not None else source_files(root):
        if not may_hold_regions(rel):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if "LAB" in text:
            regions.extend(parse_regions(rel, text))
    return regions


def stub_text(text: str, regions: Sequence[Region]) -> str:
    """Returns @p text with each of @p regions (all of this file) replaced by its stub."""
    lines = text.splitlines(keepends=True)
    out, cursor = [], 0
    for r in sorted(regions, key=lambda r: r.begin):
        out.extend(lines[cursor:r.hint_end])  # up to and including BEGIN and its HINT lines
        out.append(f"{r.indent}{r.comment} TODO(lab {r.lab}): write this part, as the hint "
                   f"above says\n")
        if r.stub:
            for line in lines[r.stub:r.end - 1]:
                out.append(uncomment(line, r.comment))
        out.append(lines[r.end - 1])  # END
        cursor = r.end
    out.extend(lines[cursor:])
    return "".join(out)


def uncomment(line: str, comment: str) -> str:
    """Removes the first comment prefix of a stub line (and one space after it)."""
    m = re.match(r"^([ \t]*)" + re.escape(comment) + r" ?(.*)$", line, re.S)
    if not m:
        return line
    return m.group(1) + m.group(2)


def write_starter(root: str, lab: str, out: str, also: Sequence[str] = ()) -> List[Region]:
    """Copies the checkout at @p root to @p out with lab @p lab (and labs in
    @p also) replaced by stubs, and without the instructor's folders.
    Returns the regions replaced; raises RegionError when the lab has no
    region."""
    files = source_files(root)
    regions = find_regions(root, files)
    labs = {lab, *also}
    chosen = [r for r in regions if r.lab in labs]
    missing = labs - {r.lab for r in chosen}
    if missing:
        known = sorted({r.lab for r in regions})
        raise RegionError(f"no region of lab(s) {', '.join(sorted(missing))} in {root} "
                          f"(labs with regions: {', '.join(known) or 'none'})")
    by_file: Dict[str, List[Region]] = {}
    for r in chosen:
        by_file.setdefault(r.path, []).append(r)
    for rel in files:
        if rel.startswith(INSTRUCTOR_ONLY):
            continue
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        src = os.path.join(root, rel)
        if rel in by_file:
            with open(src, encoding="utf-8") as f:
                text = f.read()
            with open(dest, "w", encoding="utf-8") as f:
                f.write(stub_text(text, by_file[rel]))
            shutil.copymode(src, dest)
        else:
            shutil.copy2(src, dest)
    return chosen
