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
from typing import Any, Dict, List, Sequence, Set, Tuple

# Record-shaped text: a serial-protocol keyword followed by a word.
RECORD_SHAPED = re.compile(rb"(?:^|[^A-Za-z_])(TEST|METRIC|COUNTER|DONE|PANIC)(?: |%|\\n)"
                           rb"[ -~]{0,60}")
# i386 port I/O (in, out, ins, outs with their size suffixes).
IO_INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\s+(?:rep\s+)?(in|out|ins|outs)[bwl]?\s", re.M)
# What a symbol gives access to, for the one-line summary.
CATEGORIES = (
    ("command line", re.compile(r"param_|cmdline|nonce", re.I)),
    ("console", re.compile(r"kprintf|krecord|console|putc|uart|serial|vformat|write\b|puts", re.I)),
    ("power-off", re.compile(r"poweroff|power_off|shutdown|reboot|halt|_exit\b|\bexit\b|abort",
                             re.I)),
    ("processes", re.compile(r"\bfork|setsid|exec[lv]|system\b|posix_spawn|clone|daemon|kill",
                             re.I)),
    ("files", re.compile(r"\bopen|fopen|unlink|rename|mmap|chmod", re.I)),
)
MAX_SHOWN = 8


def objects_for(bdir: str, student_files: Sequence[str]) -> List[str]:
    """Object files under @p bdir compiled from one of @p student_files
    (CMake names them <source>.o or <source>.obj under the target's folder)."""
    wanted: Dict[str, Set[str]] = {}
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


def scan(objects: Sequence[str]) -> Dict[str, Any]:
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


def category(symbol: str) -> str:
    for name, pattern in CATEGORIES:
        if pattern.search(symbol):
            return name
    return ""


class Audit:
    """The difference between a submission's objects and the reference's."""

    def __init__(self, student: Dict[str, Any], reference: Dict[str, Any]) -> None:
        self.new_symbols = [s for s in student["undefined"] if s not in set(reference["undefined"])]
        self.io = student["io"]
        self.reference_io = reference["io"]
        self.strings = [s for s in student["strings"] if s not in set(reference["strings"])]
        self.error = ""

    @property
    def flagged(self) -> bool:
        return bool(self.new_symbols or self.io > self.reference_io or self.strings)

    def line(self) -> str:
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


def audit_build(grade: Any, tree: str, bdir: str, jail: Any, reference: Dict[str, Any],
                root: str, logs: str) -> Audit:
    """Scans the student's objects of the build in @p bdir (inside @p jail)
    and compares them with @p reference (scan() of the reference build). The
    scan's JSON comes back through a pipe; its log goes to @p logs."""
    from . import lab_grade, lab_sandbox
    objects = objects_for(bdir, grade.rubric.student_files)
    empty: Dict[str, Any] = {"undefined": [], "io": 0, "strings": []}
    log = os.path.join(logs, "audit.log")
    out = jail.run([lab_grade.PYTHON, os.path.join(root, "tools", "lib", "lab_audit.py"),
                    "--json", lab_sandbox.RESULT, "--scan"] + objects, log, 120,
                   lab_grade.limits_for(120, 1 << 20), result_limit=4 << 20)
    audit = Audit(empty, empty)
    try:
        found = json.loads(out.result.decode("utf-8"))
        audit = Audit(found, reference)
    except (ValueError, KeyError, TypeError, RecursionError):
        audit.error = "the object scan failed" + (" (time limit)" if out.timed_out else "")
    return audit


# ------------------------------------------------------------ source audit

# What region code a reference solution does not need, by class: each is a
# regular expression over the region's code with comments removed.
SOURCE_CLASSES: Tuple[Tuple[str, "re.Pattern[str]", bool], ...] = (
    # (name, pattern, applies to assembly files too)
    ("inline assembly", re.compile(r"\b(?:asm|__asm__|__asm)\b"), False),
    ("port I/O", re.compile(r"\b(?:in|out|ins|outs)[bwl]\b|\bi386_(?:in|out)\w*|\bport_\w+"),
     True),
    ("a system call", re.compile(r"\b(?:syscall|sysenter|svc|hvc|smc)\b|\bint\s*\$?0x80\b|"
                                 r"__NR_\w+|\bSYS_\w+|\bsemihost\w*"), True),
    ("the command line or the nonce", re.compile(r"param_get|cmdline|\bnonce\b|\"nonce",
                                                 re.I), True),
    ("the record path (console, formatter, test framework)",
     re.compile(r"\b(?:kprintf|krecord|vformat|format_to|snformat|kputs|console\w*|serial\w*|"
                r"uart\w*|ktest\w*|printf|puts|putchar|record\w*)\b"), True),
    ("power-off or reset", re.compile(r"\b(?:poweroff|power_off|shutdown|reboot|halt|reset)\b",
                                      re.I), True),
    ("text computed at run time (XOR or character codes)",
     re.compile(r"\^\s*(?:0x[0-9a-fA-F]+|\d+|'.')|\(char\)\s*\(|\\x[0-9a-fA-F]{2}"), False),
)
RECORD_WORDS = re.compile(r"TEST|DONE|METRIC|COUNTER|PANIC|PASS|FAIL|@")


def _code_lines(text: str, comment: str) -> List[Tuple[int, str]]:
    """(line number, code) of @p text with comments blanked, line numbers kept."""
    if comment == "//":
        text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                      flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
    else:
        text = re.sub(r"(?m)(^|\s)#[^\n]*", r"\1", text)
    return list(enumerate(text.splitlines(), 1))


def region_code(path: str, text: str, lab: str) -> List[Tuple[int, str]]:
    """(line, code) of the bodies of lab @p lab's regions in @p text."""
    from . import lab_regions
    comment = lab_regions.comment_for(path) or "//"
    try:
        regions = [r for r in lab_regions.parse_regions(path, text) if r.lab == lab]
    except lab_regions.RegionError:
        return []
    lines = _code_lines(text, comment)
    return [(n, code) for r in regions for n, code in lines[r.hint_end:r.end - 1]]


# A region in a function's body whose braces close that function: what
# follows (a static constructor, another function) is code outside every
# region, which the grader's splice would otherwise take as the student's.
SCOPE_ESCAPE = "code outside the function it is in (its braces close that function)"


def scope_escapes(path: str, text: str, lab: str) -> List[Tuple[int, str]]:
    """(line, code) where a region of lab @p lab first closes more braces
    than it opened, one per region; literals and comments do not count."""
    from . import lab_regions
    comment = lab_regions.comment_for(path) or "//"
    try:
        regions = [r for r in lab_regions.parse_regions(path, text) if r.lab == lab]
    except lab_regions.RegionError:
        return []
    lines = _code_lines(text, comment)
    found = []
    for r in regions:
        depth = 0
        for n, code in lines[r.hint_end:r.end - 1]:
            bare = re.sub(r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)+'", "", code)
            for ch in bare:
                depth += {"{": 1, "}": -1}.get(ch, 0)
                if depth < 0:
                    break
            if depth < 0:
                found.append((n, code))
                break
    return found


# What a region may hold, by its kind: the kind comes from where the
# grader's own copy of the region sits and what it holds, never from the
# submission. A function body holds statements (no preprocessor line, and
# braces that never close the function: SCOPE_ESCAPE); a region at file
# scope holds one macro definition of the name the reference defines (and,
# when the reference's macro is only string literals, as an asm template
# is, only string literals: anything else could close the statement and the
# function it is expanded in); an assembly region holds instructions and
# numeric local labels (no directive, symbol, assignment or preprocessor
# line: a .section or a global label there is code outside the routine); a
# worksheet holds data. tools/grade --check refuses a region of any other
# kind, and a reference region its own kind does not permit.
KIND_VIOLATION = "lines its kind of region does not permit"
CPP_DIRECTIVE = re.compile(r"^\s*#\s*[A-Za-z_]")
ASM_CPP_DIRECTIVE = re.compile(r"^\s*#\s*(include|define|undef|if|ifdef|ifndef|elif|else|"
                               r"endif|pragma|error|warning|line|import|include_next)\b")
NAMESPACE_OPENER = re.compile(r'(\bnamespace\b[\w:\s]*|\bextern\s*"C\+?\+?")\s*$')


def _strip_literals(code: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)+'", '""', code)


def _in_function(lines: List[Tuple[int, str]], before: int) -> bool:
    """Whether code line @p before (1-based) lies inside braces other than a
    namespace's or an extern "C" block's."""
    stack: List[bool] = []  # True: a namespace-like brace
    pending = ""
    for n, code in lines[:before - 1]:
        for ch in _strip_literals(code):
            if ch == "{":
                stack.append(bool(NAMESPACE_OPENER.search(pending)))
                pending = ""
            elif ch == "}":
                if stack:
                    stack.pop()
                pending = ""
            elif ch == ";":
                pending = ""
            else:
                pending += ch
        pending += " "
    return not all(stack)


def region_kinds(path: str, text: str, lab: str) -> List[Tuple[str, ...]]:
    """The kind of each region of lab @p lab in @p text (the grader's copy),
    in order: ("data",), ("instructions",), ("body",), ("macro", NAME,
    "strings" or ""), or ("unknown", why)."""
    from . import lab_regions
    comment = lab_regions.comment_for(path) or "//"
    regions = [r for r in lab_regions.parse_regions(path, text) if r.lab == lab]
    if path.endswith(".toml"):
        return [("data",)] * len(regions)
    lines = _code_lines(text, comment)
    if path.endswith((".S", ".s")):
        # The labels the grader's routine needs at fixed places (a fault
        # fixup's), and their .globl: the only symbols a region may define.
        return [("instructions", " ".join(sorted(
            {m.group(1) for _, c in lines[r.hint_end:r.end - 1]
             for m in [re.match(r"^\s*([A-Za-z_.$][\w.$]*)\s*:", c)] if m})))
            for r in regions]
    kinds: List[Tuple[str, ...]] = []
    for r in regions:
        if _in_function(lines, r.begin):
            kinds.append(("body",))
            continue
        logical = _logical_lines(lines[r.hint_end:r.end - 1])
        m = re.match(r"^\s*#\s*define\s+([A-Za-z_]\w*)(.*)$", logical[0][1], re.S) \
            if len(logical) == 1 else None
        if not m:
            kinds.append(("unknown", "a region at file scope that is not one macro definition"))
            continue
        strings = not _strip_literals(m.group(2)).replace('""', "").strip(" \t\\\n")
        kinds.append(("macro", m.group(1), "strings" if strings else ""))
    return kinds


def _logical_lines(lines: List[Tuple[int, str]]) -> List[Tuple[int, str]]:
    """The non-empty logical lines of @p lines (backslash continuations joined)."""
    out: List[Tuple[int, str]] = []
    joining = False
    for n, code in lines:
        if joining:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + code)
        elif code.strip():
            out.append((n, code))
        else:
            continue
        joining = code.rstrip().endswith("\\")
    return out


def kind_violations(path: str, text: str, lab: str,
                    kinds: List[Tuple[str, ...]]) -> List[Tuple[int, str]]:
    """(line, code) of what lab @p lab's regions in @p text hold that their
    @p kinds (region_kinds of the grader's copy, in order) do not permit."""
    from . import lab_regions
    comment = lab_regions.comment_for(path) or "//"
    try:
        regions = [r for r in lab_regions.parse_regions(path, text) if r.lab == lab]
    except lab_regions.RegionError:
        return []
    lines = _code_lines(text, comment)
    raw = text.splitlines()
    found: List[Tuple[int, str]] = []
    for r, kind in zip(regions, kinds):
        body = lines[r.hint_end:r.end - 1]
        if kind[0] == "data":
            continue
        if kind[0] == "body":
            found += [(n, c) for n, c in body if CPP_DIRECTIVE.match(c)]
        elif kind[0] == "instructions":
            for n, c in body:
                if ASM_CPP_DIRECTIVE.match(raw[n - 1]):
                    found.append((n, raw[n - 1]))
                    continue
                named = kind[1].split()
                for statement in c.split(";"):
                    s = re.sub(r"^\s*(\d+:\s*)*", "", statement).strip()
                    label = re.match(r"^([A-Za-z_.$][\w.$]*)\s*:", s)
                    glob = re.match(r"^\.(globl|global)\s+([\w.$]+)\s*$", s)
                    if label and label.group(1) in named or glob and glob.group(2) in named:
                        continue
                    if (s.startswith(".") or label
                            or re.match(r"^[A-Za-z_.$][\w.$]*\s*=", s)):
                        found.append((n, c))
                        break
        elif kind[0] == "macro":
            logical = _logical_lines(body)
            m = re.match(r"^\s*#\s*define\s+([A-Za-z_]\w*)(.*)$", logical[0][1], re.S) \
                if len(logical) == 1 else None
            if not m or m.group(1) != kind[1]:
                found += [(n, c) for n, c in logical if not (
                    m and n == logical[0][0] and m.group(1) == kind[1])] or logical[:1]
            elif kind[2] == "strings":
                rest = _strip_literals(m.group(2)).replace('""', "")
                if rest.strip(" \t\\\n"):
                    found.append((logical[0][0], logical[0][1].split("\n")[0]))
        else:
            found += [(n, c) for n, c in body if c.strip()][:1]
    return found


def kind_words(kind: Tuple[str, ...]) -> str:
    """@p kind (region_kinds) in words."""
    if kind[0] == "body":
        return "a function body: statements, no preprocessor line"
    if kind[0] == "instructions":
        return ("assembly: instructions and numeric labels" +
                (f" (and the labels {kind[1]})" if kind[1] else "") +
                ", no other directive, symbol or preprocessor line")
    if kind[0] == "macro":
        return (f"one definition of the macro {kind[1]}" +
                (", of string literals only" if kind[2] else ""))
    return kind[0]


def _literals(code: str) -> str:
    """The text of the string and character literals of @p code, joined."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"' + r"|'((?:[^'\\]|\\.)+)'", code)
    return "".join(a + b for a, b in parts)


def source_findings(path: str, text: str, lab: str) -> Dict[str, List[Tuple[int, str]]]:
    """{class: [(line, code)]} of what the lab's region code in @p text does."""
    assembly = path.endswith((".S", ".s"))
    found: Dict[str, List[Tuple[int, str]]] = {}
    code = region_code(path, text, lab)
    for name, pattern, in_asm in SOURCE_CLASSES:
        if assembly and not in_asm:
            continue
        hits = [(n, c) for n, c in code if pattern.search(c)]
        if hits:
            found[name] = hits
    if not assembly and not path.endswith((".toml",)):
        escapes = scope_escapes(path, text, lab)
        if escapes:
            found[SCOPE_ESCAPE] = escapes
    if not path.endswith((".toml",)):
        literal_lines = [(n, c) for n, c in code if _literals(c)]
        joined = "".join(_literals(c) for _, c in literal_lines)
        if RECORD_WORDS.search(joined):
            found["record-shaped text"] = [(n, c) for n, c in literal_lines
                                           if RECORD_WORDS.search(_literals(c)) or
                                           len(_literals(c)) <= 2]
    return found


def hold_reasons(grade: Any, root: str) -> List[str]:
    """Why a person must look at this submission before its grade counts:
    each class of thing its region code does that the reference's region code
    does not, with the lines. [] when nothing is suspicious."""
    reasons: List[str] = []
    lab = grade.rubric.lab
    for rel in grade.rubric.student_files:
        if rel == grade.rubric.worksheet or rel not in grade.texts:
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                reference = source_findings(rel, f.read(), lab)
        except OSError:
            reference = {}
        theirs = source_findings(rel, grade.texts[rel], lab)
        from . import lab_regions
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                kinds = region_kinds(rel, f.read(), lab)
        except (OSError, lab_regions.RegionError):
            kinds = []
        bad = kind_violations(rel, grade.texts[rel], lab, kinds)
        if bad:
            regions_kinds = "; ".join(sorted({kind_words(k) for k in kinds}))
            theirs[f"{KIND_VIOLATION} ({regions_kinds})"] = bad
        for name, hits in theirs.items():
            if name in reference:
                continue
            shown = "; ".join(f"{rel}:{n}: {c.strip()[:100]}" for n, c in hits[:MAX_SHOWN])
            reasons.append(f"its region code uses {name}, which the reference does not: {shown}")
    audit = grade.audit
    if audit is not None and not audit.error:
        risky = [s for s in audit.new_symbols if category(s)]
        if risky:
            reasons.append("its objects call what the reference does not: " +
                           ", ".join(f"{s} [{category(s)}]" for s in risky[:MAX_SHOWN]))
        if audit.io > audit.reference_io:
            reasons.append(f"its objects execute {audit.io} port I/O instruction(s) (the "
                           f"reference {audit.reference_io})")
        if audit.strings:
            reasons.append("its objects carry record-shaped strings: " +
                           ", ".join(repr(x) for x in audit.strings[:MAX_SHOWN]))
    return reasons


if __name__ == "__main__":
    argv = sys.argv[1:]
    target = None
    if argv[:1] == ["--json"] and len(argv) > 1:
        target, argv = argv[1], argv[2:]
    if argv[:1] != ["--scan"]:
        sys.exit("usage: lab_audit.py [--json FILE] --scan OBJECT...")
    result = json.dumps(scan(argv[1:]))
    if target:
        with open(target, "w") as f:
            f.write(result)
    else:
        sys.stdout.write(result)
