"""One kernel run of a rubric item, and its verdict: tools/run boots the
grader's copy of the kernel with a fresh nonce (and the grader's own
inputs), and only the records tagged with that nonce count.
"""

import json
import os
import re
import secrets
import tomllib
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from . import lab_safe, lab_sandbox
from .lab_jail import BOOT_FILES, Jail, boot_file_for, limits_for, sha256_of
from .lab_submission import MAX_STUDENT_FILE, read_text

PYTHON = "/usr/bin/python3"


# Why a kernel run ended, in words a student can act on.
OUTCOME_REASON = {
    "timeout": "the kernel did not finish within {timeout:g} s (an endless loop or a hang?), "
               "so the emulator was stopped",
    "reset": "the machine reset before the tests finished: a triple fault (an exception the "
             "CPU could not deliver, e.g. a broken IDT, GDT or page table)",
    "panic": "the kernel panicked: {panic}",
    "flood": "the console printed more than {max_output} bytes, so the emulator was stopped",
    "incomplete": "the emulator exited before the tests finished ({detail})",
    "malformed": "the run printed records that do not parse, so it has no valid DONE: "
                 "{malformed!r}",
    "garbage": "the console printed unreadable output ({detail})",
    "failed": "a kernel test failed",
    "disk_full": "{detail}",
}


# In a rubric's run arguments: a number from 1 to 255 that the grader draws
# for each run, different from every other one drawn for that run (inputs
# only the grader knows: a test program checks what it was given).
RANDOM_BYTE = "{random_byte}"


# The memory of the machine in MB, drawn for each run from these: more than
# the 128 MB tools/run gives by default, so that a kernel which hard-codes a
# machine's memory map is caught by the probe that compares the map with it.
# Always more: a kernel that believes in a 128 MB map on a smaller machine
# uses memory that is not there and may panic, which would be caught, but
# not by the probe, and not every time.
RANDOM_MEM = "{random_mem}"


MEM_CHOICES = tuple(range(144, 513, 16))


def grader_inputs(args: Sequence[str]) -> List[str]:
    """@p args with each RANDOM_BYTE replaced by a fresh, distinct number and
    each RANDOM_MEM by a memory size."""
    drawn: Set[int] = set()
    out = []
    for a in args:
        while RANDOM_BYTE in a:
            value = secrets.randbelow(255) + 1
            if value not in drawn:
                drawn.add(value)
                a = a.replace(RANDOM_BYTE, str(value), 1)
        while RANDOM_MEM in a:
            a = a.replace(RANDOM_MEM, str(secrets.choice(MEM_CHOICES)), 1)
        out.append(a)
    return out


def boot(item: Any, bdir: str, logs: str, max_output: int,
         jail: "Jail") -> Tuple[Dict[str, Any], str, float]:
    """One kernel run through tools/run with a fresh nonce, booting the
    grader's copy of the kernel; tools/run's summary comes back through a
    pipe. Returns (summary, console, secs)."""
    nonce = secrets.token_hex(8)
    log = os.path.join(logs, f"{item.name}.log")
    cmd = [PYTHON, os.path.join(jail.root, "tools", "run"), "--build", bdir, "--nonce", nonce,
           "--timeout", str(item.timeout), "--max-output", str(max_output),
           "--json", lab_sandbox.RESULT] + grader_inputs(item.run)
    rel = boot_file_for(item.run)
    problem = ""
    if getattr(item, "probe", None):
        # The probe reads the kernel's symbols from the grader's copy of the
        # ELF file (a disk boot boots the image made from it).
        cmd[2:2] = ["--probe", item.probe]
        # A multiboot or arm64 boot boots the ELF file itself (--kernel).
        elf = jail.boot_copies.get(BOOT_FILES[("i386", None, "multiboot")])
        if elf and not (rel or "").endswith(".elf"):
            cmd[2:2] = ["--symbols", elf[0]]
    if rel in jail.boot_copies:
        copy, digest = jail.boot_copies[rel]
        try:
            now = sha256_of(lab_safe.read_regular(copy, 256 << 20))
        except (OSError, lab_safe.Unsafe):
            now = ""
        if now != digest:
            problem = f"the grader's copy of {rel} changed after the build"
        cmd[2:2] = ["--kernel", copy]
    elif jail.boot_copies:
        problem = f"the build made no {rel or 'kernel for this run'}"
    if problem:
        return ({"outcome": "tampered", "detail": problem, "tests": {}, "metrics": {},
                 "nonce": nonce}, "", 0.0)
    home = jail.writable_folder(f"run-{item.name}")
    env = jail.env({"PYTHONDONTWRITEBYTECODE": "1"})
    if jail.home != "/tmp":
        env.update(HOME=home, TMPDIR=home)
    out = jail.run(cmd, log, item.timeout + 30,
                   limits_for(item.timeout, max_output + 65536), cwd=bdir, env=env,
                   writable_inside=[home], result_limit=4 << 20)
    console = read_text(log, max_output + 65536)
    summary = None
    try:
        text = out.result.decode("utf-8")
        summary = json.loads(text)
        lab_safe.write_private(os.path.join(logs, f"{item.name}.json"), out.result)
    except (OSError, ValueError, RecursionError):
        pass
    if out.disk_full:  # whatever the run said before it was stopped
        summary = {"outcome": "disk_full", "detail": lab_sandbox.disk_words(), "tests": {},
                   "metrics": {}}
    if not isinstance(summary, dict):
        summary = {"outcome": "error",
                   "detail": "tools/run wrote no summary" if out.status is not None
                   else "tools/run did not return", "tests": {}, "metrics": {}}
    summary["nonce"] = nonce
    return summary, console, out.seconds


def explain(summary: Dict[str, Any], item: Any, max_output: int) -> str:
    outcome = summary.get("outcome")
    if outcome == "done":
        return ""
    if outcome == "incomplete" and summary.get("malformed"):
        outcome = "malformed"  # e.g. a DONE line whose numbers were not printed
    template = OUTCOME_REASON.get(str(outcome), "the run ended badly: {outcome} {detail}")
    return template.format(timeout=item.timeout, panic=summary.get("panic") or "",
                           max_output=max_output, detail=summary.get("detail") or "",
                           malformed=(summary.get("malformed") or [""])[0], outcome=outcome)


def judge_run(item: Any, summary: Dict[str, Any], console: str,
              max_output: int) -> Tuple[Optional[bool], str]:
    """(passed, reason) for a `run` test from its trusted records and console."""
    problems = []
    outcome = summary.get("outcome")
    if outcome == "error":
        return None, "the grader could not run the kernel: " + (summary.get("detail") or "")
    if outcome == "tampered":
        return False, "tampering: " + (summary.get("detail") or "")
    tests = summary.get("tests", {})
    if item.panic is not None:
        if outcome != "panic" or item.panic not in (summary.get("panic") or ""):
            problems.append(f"expected a kernel PANIC containing {item.panic!r}; " +
                            (explain(summary, item, max_output) or "the run ended without one"))
    elif item.expect_done and outcome != "done":
        problems.append(explain(summary, item, max_output))
    elif outcome in ("timeout", "reset", "panic", "flood", "garbage", "disk_full"):
        problems.append(explain(summary, item, max_output))
    for name in item.expect_pass:
        t = tests.get(name)
        if t is None:
            problems.append(f"no trusted result for kernel test {name}")
        elif t["status"] != "PASS":
            problems.append(f"kernel test {name}: {t['status']} {t.get('reason', '')}".rstrip())
    lines = console_lines(console, item, summary.get("nonce"))
    for pattern in item.console:
        if not any(re.search(pattern, line) for line in lines):
            where = " carrying this run's nonce" if item.console_from == "nonce" else ""
            problems.append(f"the console has no line{where} matching {pattern!r}")
    if problems:
        untrusted = summary.get("untrusted_records", 0)
        note = (f" (the run also printed {untrusted} record-shaped line(s) without this run's "
                f"nonce; only the test framework's records count)") if untrusted else ""
        return False, "; ".join(dict.fromkeys(problems)) + note
    return True, "passed"


def console_lines(console: str, item: Any, nonce: Optional[str]) -> List[str]:
    """The console lines @p item's patterns may match: every line when the
    rubric says console_from = "any", else only those the test framework
    printed with this run's nonce (the prefix removed)."""
    lines = console.replace("\r", "").splitlines()
    if item.console_from == "any":
        return lines
    prefix = f"@{nonce} "
    return [line[len(prefix):] for line in lines if nonce and line.startswith(prefix)]


def reported_value(grade: Any, rubric: Any, name: str) -> Tuple[Optional[float], str]:
    """(the number the worksheet reports for @p name, or None; why not). The
    worksheet is the text the grader took in before any student code ran."""
    text = grade.texts.get(rubric.worksheet)
    if text is None:
        return None, f"the worksheet {rubric.worksheet} is missing"
    if len(text.encode("utf-8", "replace")) > MAX_STUDENT_FILE:
        return None, f"the worksheet {rubric.worksheet} is too large"
    if "\ufffd" in text:  # the intake decodes with replacement characters
        return None, f"the worksheet {rubric.worksheet} is not UTF-8 text"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return None, f"the worksheet {rubric.worksheet} is not valid TOML: {e}"
    except RecursionError:
        return None, (f"the worksheet {rubric.worksheet} nests tables or arrays too deeply "
                      f"to read (it is not valid as the starter gave it)")
    table = data.get("measurements", {})
    if not isinstance(table, dict):
        return None, (f"in the worksheet {rubric.worksheet}, 'measurements' must be a table "
                      f"([measurements]), not a {type(table).__name__}")
    value = table.get(name)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None, f"{rubric.worksheet} reports no number for measurements.{name}"
    return value, ""


def judge_measurement(item: Any, summary: Dict[str, Any], grade: Any, rubric: Any,
                      max_output: int) -> Tuple[Optional[bool], str]:
    if summary.get("outcome") == "error":
        return None, "the grader could not run the kernel: " + (summary.get("detail") or "")
    metric = summary.get("metrics", {}).get(item.metric)
    if metric is None:
        why = explain(summary, item, max_output)
        return False, (f"the kernel reported no trusted METRIC {item.metric}" +
                       (f": {why}" if why else ""))
    measured = metric["value"]
    value, why = reported_value(grade, rubric, item.name)
    if value is None:
        return False, why + f" (the grader measured {measured} {metric['unit']})"
    allowed = abs(measured) * item.tolerance
    verdict = f"reported {value}, measured {measured} {metric['unit']}, allowed +/- {allowed:g}"
    return abs(value - measured) <= allowed, verdict
