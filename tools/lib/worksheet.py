"""A lab's worksheet against the kernel: tools/bench --worksheet boots what a
lab's checks.toml lists and compares each METRIC with the number the
worksheet reports (check), writes measured numbers into a reference
worksheet (fill, --fill), and holds a reference's written answers to
numbers the kernel measures (reference_numbers, --reference)."""

import argparse
import os
import re
import tomllib
from collections.abc import Callable
from typing import Any

# A METRIC record as measure() returns it: {"value": int, "unit": str}.
Metric = dict[str, Any]
# measure(config, bench, log_dir) -> {metric name: Metric}: one boot of tools/bench.
Measure = Callable[[dict[str, Any], dict[str, Any], str], dict[str, Metric]]
Say = Callable[[str], None]


def fill(path: str, values: dict[str, int | float], say: Say) -> None:
    """Writes @p values ({key: number}) into the worksheet at @p path, in
    place of the numbers of its uncommented `key = number` lines: how a
    reference worksheet gets its numbers from the kernel, never by hand."""
    with open(path) as f:
        lines = f.read().splitlines(keepends=True)
    filled = set()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)([A-Za-z0-9_]+)(\s*=\s*)(-?[0-9][0-9.]*)(.*)$", line, re.S)
        if m and m.group(2) in values and m.group(2) not in filled:
            rest = m.group(5)
            if rest.lstrip(" ").startswith("#"):  # keep the comments' column
                width = len(m.group(4)) + len(rest) - len(rest.lstrip(" "))
                rest = f"{values[m.group(2)]}".ljust(width - 1)[len(str(values[m.group(2)])):] + \
                    " " + rest.lstrip(" ")
            lines[i] = f"{m.group(1)}{m.group(2)}{m.group(3)}{values[m.group(2)]}{rest}"
            filled.add(m.group(2))
    with open(path, "w") as f:
        f.write("".join(lines))
    say(f"filled {len(filled)} number(s) of {path}; not found: "
        f"{', '.join(sorted(set(values) - filled)) or 'none'}")


# A number in prose; not part of a name such as 3/1, 4/4 or 5-byte.
ANSWER_NUMBER = re.compile(r"(?<![\w./-])\d[\d,]*(?:\.\d+)?(?![\w/-])")


def reference_numbers(answers: dict[str, Any], found: dict[str, int | float],
                      fixed: list[int | float]) -> list[str]:
    """A lab's reference answers may quote only what the kernel measured: each
    number in them must be a measured value, the difference of two, or one
    of the lab's fixed numbers (checks.toml [answers] fixed: a seed's factor,
    a default threshold). Returns the numbers that are none of these, which
    would go stale unseen when the kernel changes."""
    counts = [v for v in found.values() if isinstance(v, int)]
    ratios = [v for v in found.values() if isinstance(v, float)]
    # A count is quoted exactly, a ratio to the two decimals it is reported with.
    allowed = set(counts) | {a - b for a in counts for b in counts if a > b} | set(fixed)
    problems = []
    for name, text in answers.items():
        for token in ANSWER_NUMBER.findall(str(text)):
            number = float(token.replace(",", ""))
            if number not in allowed and not any(abs(number - r) < 0.006 for r in ratios):
                problems.append(f"answers.{name}: {token} is not a measured value, the "
                                "difference of two, or one of checks.toml's [answers] fixed")
    return problems


def check(args: argparse.Namespace, checks: dict[str, Any], worksheet_path: str,
          measure: Measure, say: Say) -> list[str]:
    """Measures what @checks (a checks.toml) lists, each run through
    measure(config, bench, log_dir) -> {metric: record}, and compares it
    with the numbers the student reported in @worksheet_path; also requires
    the written answers.
    Returns the problems found, in words (empty: the worksheet is right)."""
    try:
        with open(worksheet_path, "rb") as f:
            sheet = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        return [f"{worksheet_path}: {e}"]
    reported, answers = sheet.get("measurements", {}), sheet.get("answers", {})
    log_dir = os.path.join(args.out, "logs", "worksheet")
    os.makedirs(log_dir, exist_ok=True)
    found: dict[str, int | float] = {}
    problems = check_measurements(checks, reported, found, lambda config, bench:
                                  measure(config, bench, log_dir), say)
    problems += check_ratios(checks, reported, found, say)
    if getattr(args, "fill", False):
        fill(worksheet_path, found, say)
        return []
    need = checks.get("answers", {})
    if getattr(args, "reference", False):
        problems += reference_numbers(answers, found, need.get("fixed", []))
    for name in need.get("required", []):
        words = len(str(answers.get(name, "")).split())
        if words < need.get("min_words", 1):
            problems.append(f"answers.{name}: {words} word(s); write at least "
                            f"{need.get('min_words', 1)}")
    return problems


def check_measurements(checks: dict[str, Any], reported: dict[str, Any],
                       found: dict[str, int | float],
                       measure: Callable[[dict[str, Any], dict[str, Any]], dict[str, Metric]],
                       say: Say) -> list[str]:
    """Compares each [[check]] of @p checks, measured once per kernel and
    run, with its number in @p reported; puts each measured value in @p found."""
    problems: list[str] = []
    measured: dict[tuple[str | None, ...], dict[str, Metric]] = {}
    for c in checks.get("check", []):
        # A check may set its own kernel command line (e.g. vm.split=4/4).
        cmdline = c.get("cmdline", checks.get("cmdline", ""))
        # ... and its kernel: arch (default i386) and, on arm64, granule.
        arch, granule = c.get("arch", checks.get("arch", "i386")), c.get("granule")
        key = (cmdline,) + tuple(c["run"])
        if (arch, granule) + key not in measured:
            config = {"name": "worksheet", "cmdline": cmdline, "arch": arch, "granule": granule}
            bench = {"name": "_".join((arch, granule or "") + key).strip("_"),
                     "program": key[1], "args": list(key[2:]), "timeout": 60.0}
            measured[(arch, granule) + key] = measure(config, bench)
        metric = measured[(arch, granule) + key].get(c["metric"])
        # divide: the worksheet reports the METRIC divided by it (per1000 -> per operation).
        divide = c.get("divide", 1)
        if metric is not None:
            value = metric["value"] / divide
            metric = dict(metric, value=int(value) if value == int(value) else value,
                          unit=metric["unit"] if divide == 1 else f"{metric['unit']} / {divide}")
            found[c["name"]] = metric["value"]
        key = key[1:]
        value = reported.get(c["name"])
        how = "tools/run --deterministic " + (f"--arch {arch} " if arch != "i386" else "") + \
            (f"--granule {granule} " if granule else "")
        if metric is None:
            problems.append(f"{c['name']}: `{' '.join(key)}` printed no METRIC {c['metric']}")
        elif not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append(f"{c['name']}: no number in [measurements] (run `{how}--cmdline "
                            f"'{(cmdline + ' ').lstrip()}run={' '.join(key)}'` and copy "
                            f"METRIC {c['metric']}" +
                            (f", divided by {divide})" if divide != 1 else ")"))
        elif abs(value - metric["value"]) > abs(metric["value"]) * c.get("tolerance", 0):
            problems.append(f"{c['name']}: reported {value}, measured {metric['value']} "
                            f"{metric['unit']} (METRIC {c['metric']}, tolerance "
                            f"{c.get('tolerance', 0):g})")
        else:
            say(f"{c['name']}: reported {value}, measured {metric['value']} {metric['unit']}: ok")
    return problems


def check_ratios(checks: dict[str, Any], reported: dict[str, Any], found: dict[str, int | float],
                 say: Say) -> list[str]:
    """Compares each [[ratio]] of @p checks (a ratio of two checks' numbers
    in @p found) with its number in @p reported; puts the ratio in @p found."""
    problems: list[str] = []
    for r in checks.get("ratio", []):
        if found.get(r["numerator"]) is not None and found.get(r["denominator"]):
            found[r["name"]] = round(found[r["numerator"]] / found[r["denominator"]],
                                     r.get("decimals", 2))
        num, den = found.get(r["numerator"]), found.get(r["denominator"])
        value = reported.get(r["name"])
        if num is None or not den:
            problems.append(f"{r['name']}: {r['numerator']} / {r['denominator']} was not measured")
        elif not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append(f"{r['name']}: no number in [measurements] (the ratio "
                            f"{r['numerator']} / {r['denominator']})")
        elif abs(value - num / den) > num / den * r.get("tolerance", 0.01):
            problems.append(f"{r['name']}: reported {value}, measured {num / den:.3f} "
                            f"({r['numerator']} / {r['denominator']})")
        else:
            say(f"{r['name']}: reported {value}, measured {num / den:.3f}: ok")
    return problems
