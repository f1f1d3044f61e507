#!/usr/bin/python3
"""Proves that every budget of tests/bench/budgets.toml can fail.

For each [[budget]] row it writes a results.csv in which every budget holds
with no room to spare (each value at its bound) except that row's, one
instruction or event over, runs `tools/bench --results CSV --budgets`, and
requires the failure to name that row's metric and configuration. The
results at their bounds alone must pass: a bound is a maximum, not a limit
one below it. A row the checker would let through (a typo in a metric's
name cannot be seen here, but a bound that is never compared can) fails
this test.
"""

import csv
import importlib.machinery
import os
import subprocess
import sys
import tempfile
import tomllib
import types
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUDGETS = os.path.join(ROOT, "tests", "bench", "budgets.toml")
BENCH = os.path.join(ROOT, "tools", "bench")


def at_bounds(budgets: list[dict]) -> dict[tuple[str, str], int]:
    """(configuration, metric) -> a value on every bound: the absolute bounds
    first, then each `over` bound on top of its base."""
    values: dict[tuple[str, str], int] = {}
    for b in budgets:
        if "over" not in b:
            key = (b["config"], b["metric"])
            values[key] = min(values.get(key, b["max"]), b["max"])
    for b in budgets:
        if "over" in b:
            base = values.setdefault((b["over"], b["metric"]), 0)
            key = (b["config"], b["metric"])
            values[key] = min(values.get(key, base + b["max"]), base + b["max"])
    return values


def load_bench() -> types.ModuleType:
    """tools/bench as a module, for its check_budgets (one process for all rows)."""
    loader = importlib.machinery.SourceFileLoader("toll_bench", BENCH)
    module = types.ModuleType(loader.name)
    module.__file__ = BENCH
    loader.exec_module(module)
    return module


def rows_of(values: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    return [{"configuration": c, "benchmark": m.split(".")[0], "metric": m, "value": v,
             "unit": "instr"} for (c, m), v in sorted(values.items())]


def check_cli(values: dict[tuple[str, str], int], directory: str) -> subprocess.CompletedProcess:
    """The same check through the command line, tools/bench --results --budgets."""
    path = os.path.join(directory, "results.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["configuration", "benchmark", "metric", "value", "unit"])
        w.writeheader()
        w.writerows(rows_of(values))
    return subprocess.run([sys.executable, BENCH, "--results", path, "--budgets", BUDGETS],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def main() -> int:
    with open(BUDGETS, "rb") as f:
        budgets = tomllib.load(f)["budget"]
    failures = []
    bench = load_bench()
    values = at_bounds(budgets)
    with tempfile.TemporaryDirectory() as directory:
        held = check_cli(values, directory)
        if held.returncode != 0:
            failures.append(f"every value on its bound was refused:\n{held.stdout}")
        for n, b in enumerate(budgets):
            over = dict(values)
            key = (b["config"], b["metric"])
            over[key] += 1
            named = f"{b['metric']} = {over[key]} instr in configuration {b['config']}"
            if n == 0:  # the first through the command line too
                out = check_cli(over, directory)
                if out.returncode == 0 or named not in out.stdout:
                    failures.append(f"tools/bench --budgets let {named} through:\n{out.stdout}")
            problems, _ = bench.check_budgets(BUDGETS, rows_of(over))
            if not any(named in p for p in problems):
                failures.append(f"{b['metric']} ({b['config']}) one over its bound was not "
                                f"refused by name: {problems}")
    print(f"{len(budgets)} budget(s): each refused one over its bound, all held on it")
    for problem in failures:
        print(f"FAILED: {problem}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
