"""The kernel's counting profiler, read (tools/bench --profile BENCH).

A kernel booted with profile=count steps its own code while a benchmark's
timed loop runs (src/kernel/kern/profile.h) and prints, when the loop ends,
how often each kernel instruction address executed: `PROFILE <pc> <count>`
lines, closed by `PROFILE total <count>`. This module names the function of
each address from the kernel's symbol table (nm), sums per function, and
renders the table: instructions per operation and share of the path.
"""

import bisect
import csv
import os
import re
import subprocess
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATED = os.path.join(ROOT, "book", "generated")
PROFILE_LINE = re.compile(rb"^PROFILE ([0-9a-f]+|call [0-9a-f]+ [0-9a-f]+|total|dropped) (\d+)\s*$",
                          re.M)
# The functions a table shows by name; the rest are summed in one row.
TOP = 20
# The functions whose callers the second table lists, and how many of each.
CALLED = 6
CALLERS = 6


class ProfileError(Exception):
    """The profile run printed no counts, or the kernel has no symbols."""


def kernel_elf(build: str, arch: str) -> str:
    if arch != "i386":
        raise ProfileError("the counting profiler steps the kernel with i386's trap flag; "
                           "arm64 has no stepping yet")
    return os.path.join(build, "i386", "arch", "i386", "toll-i386.elf")


def symbols(elf: str) -> tuple[list[int], list[str]]:
    """The kernel's functions, sorted by address: (addresses, names)."""
    try:
        out = subprocess.run(["nm", "-n", "-C", "--defined-only", elf], check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as e:
        raise ProfileError(f"nm {elf}: {e}")
    addrs, names = [], []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            addrs.append(int(parts[0], 16))
            # "toll::vm::fork(toll::vm::VmSpace&)" -> "vm::fork": short enough for a table.
            name = parts[2].replace("(anonymous namespace)::", "").replace("toll::", "")
            names.append(re.sub(r"\(.*$", "", name))
    return addrs, names


def last_block(console: bytes) -> tuple[dict[int, int], dict[tuple[int, int], int]]:
    """The counts of the last profiled span of a console log: ({pc: count},
    {(callee, return address): calls})."""
    blocks: list[tuple[dict[int, int], dict[tuple[int, int], int]]] = [({}, {})]
    for m in PROFILE_LINE.finditer(console):
        key, value = m.group(1).decode(), int(m.group(2))
        if key == "total":
            blocks.append(({}, {}))
        elif key.startswith("call "):
            _, callee, ret = key.split()
            blocks[-1][1][(int(callee, 16), int(ret, 16))] = value
        elif key != "dropped":
            blocks[-1][0][int(key, 16)] = value
        elif value:
            raise ProfileError(f"the kernel's table dropped {value} counts; make it larger")
    spans = [b for b in blocks if b[0]]
    if not spans:
        raise ProfileError("no PROFILE records: was the kernel booted with profile=count?")
    return spans[-1]


def name_of(addrs: list[int], names: list[str], pc: int) -> str:
    i = bisect.bisect_right(addrs, pc) - 1
    return names[i] if i >= 0 else "(unknown)"


def callers(calls: dict[tuple[int, int], int], elf: str, functions: list[str],
            ops: int) -> list[dict[str, Any]]:
    """For each of @functions, its callers by calls per operation, most first."""
    addrs, names = symbols(elf)
    by: dict[str, dict[str, int]] = {}
    for (callee, ret), n in calls.items():
        f = name_of(addrs, names, callee)
        if f in functions:
            caller = name_of(addrs, names, ret)
            by.setdefault(f, {})[caller] = by.setdefault(f, {}).get(caller, 0) + n
    rows = []
    for f in functions:
        ranked = sorted(by.get(f, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        for caller, n in ranked[:CALLERS]:
            if round(n / ops, 1) > 0:
                rows.append({"function": f, "caller": caller, "calls": f"{n / ops:.1f}"})
    return rows


def by_function(counts: dict[int, int], elf: str) -> dict[str, int]:
    addrs, names = symbols(elf)
    out: dict[str, int] = {}
    for pc, n in counts.items():
        name = name_of(addrs, names, pc)
        out[name] = out.get(name, 0) + n
    return out


def table_rows(functions: dict[str, int], ops: int, measured: int) -> list[dict[str, Any]]:
    """Rows of (function, instructions per operation, share of @measured),
    largest first, the tail summed, then the part outside the kernel's C code
    (user mode, and the trap entries before the stepping starts)."""
    # The profiler's own code (its step trap's tail, the system call that
    # stops it) is not part of the path the plain run measured.
    functions = {f: n for f, n in functions.items() if "profile" not in f}
    ranked = sorted(functions.items(), key=lambda kv: (-kv[1], kv[0]))
    # Functions under half an instruction per operation go to the tail.
    ranked = [kv for kv in ranked if kv[1] * 2 >= ops] + [kv for kv in ranked if kv[1] * 2 < ops]
    named = sum(1 for _, n in ranked[:TOP] if n * 2 >= ops)
    rows: list[dict[str, Any]] = [{"function": f, "instr": round(n / ops)}
                                  for f, n in ranked[:named]]
    rest = sum(n for _, n in ranked[named:])
    if rest:
        rows.append({"function": f"({len(ranked) - named} other functions)",
                     "instr": round(rest / ops)})
    kernel = round(sum(functions.values()) / ops)
    rows.append({"function": "(user mode and trap entry, unstepped)",
                 "instr": max(measured - kernel, 0)})
    for r in rows:
        r["share"] = f"{100.0 * r['instr'] / measured:.1f}" if measured else "0"
    return rows


def rst(title: str, header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(header, *body)]
    rule = "  ".join("=" * w for w in widths)
    lines = [f".. table:: {title}", ""]
    lines += ["   " + rule, "   " + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
              "   " + rule]
    lines += ["   " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in body]
    return lines + ["   " + rule, ""]


def write(name: str, rows: list[dict[str, Any]], measured: int, title: str,
          directory: str, call_rows: list[dict[str, Any]]) -> list[str]:
    """Writes profile-<name>.csv and .inc into @directory; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    path_csv = os.path.join(directory, f"profile-{name}.csv")
    with open(path_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["function", "instr", "share"])
        w.writeheader()
        w.writerows(rows)
        # The path's measured length, for the book's prose (:num:`profile-<name>:total`).
        w.writerow({"function": "total", "instr": measured, "share": "100.0"})
    esc = lambda text: text.replace("*", r"\*")  # noqa: E731
    body = [[esc(r["function"]), str(r["instr"]), r["share"]] for r in rows]
    body.append(["total (measured without the profiler)", str(measured), "100.0"])
    lines = [".. Generated by tools/bench --profile; do not edit.", ""]
    lines += rst(title, ["function", "instructions per operation", "% of the path"], body)
    if call_rows:
        path_calls = os.path.join(directory, f"profile-{name}-calls.csv")
        with open(path_calls, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["function", "caller", "calls"])
            w.writeheader()
            w.writerows(call_rows)
        lines += rst(f"Who calls the costliest of them ({name})",
                     ["function", "called from", "calls per operation"],
                     [[esc(r["function"]), esc(r["caller"]), r["calls"]] for r in call_rows])
    path_inc = os.path.join(directory, f"profile-{name}.inc")
    with open(path_inc, "w") as f:
        f.write("\n".join(lines))
    return [path_csv, path_inc]
