#!/usr/bin/python3
"""Boots a kernel several times in deterministic mode and checks that a METRIC
is identical in every run.

    determinism.py --metric kern.loop_100k [--runs 2] -- <tools/run arguments>

Each run is `tools/run <arguments> --deterministic --quiet --json <file>`
(--deterministic is added when missing). Fails, saying why, when a run does
not end cleanly, when the metric is missing from a run, or when its values
differ between runs.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS_RUN = os.path.join(HERE, "..", "..", "tools", "run")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metric", required=True, help="the METRIC name to compare")
    p.add_argument("--runs", type=int, default=2, help="how many boots (at least 2)")
    p.add_argument("--run", default=TOOLS_RUN, help=argparse.SUPPRESS)
    p.add_argument("run_args", nargs=argparse.REMAINDER, help="-- then tools/run arguments")
    args = p.parse_args(argv)
    if args.run_args and args.run_args[0] == "--":
        args.run_args = args.run_args[1:]
    if args.runs < 2:
        p.error("--runs must be at least 2")
    if "--deterministic" not in args.run_args:
        args.run_args.append("--deterministic")
    return args


def boot_once(args, index, scratch):
    """Runs tools/run once; returns (metric value or None, message)."""
    summary_path = os.path.join(scratch, f"run{index}.json")
    command = [sys.executable, args.run] + args.run_args + ["--quiet", "--json", summary_path]
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    verdict = proc.stderr.strip().splitlines()[-1:] or ["(no verdict)"]
    if proc.returncode != 0:
        return None, f"run {index} did not end cleanly (exit {proc.returncode}): {verdict[0]}"
    try:
        with open(summary_path) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        return None, f"run {index} left no readable JSON summary: {e}"
    metric = summary.get("metrics", {}).get(args.metric)
    if metric is None:
        known = ", ".join(sorted(summary.get("metrics", {}))) or "none"
        return None, f"run {index} reported no METRIC {args.metric} (metrics seen: {known})"
    return metric["value"], f"run {index}: {args.metric} = {metric['value']} {metric['unit']}"


def main(argv):
    args = parse_args(argv)
    values = []
    with tempfile.TemporaryDirectory(prefix="toll-determinism-") as scratch:
        for index in range(1, args.runs + 1):
            value, message = boot_once(args, index, scratch)
            print(f"determinism: {message}")
            if value is None:
                print(f"determinism: FAIL: {message}", file=sys.stderr)
                return 1
            values.append(value)
    if len(set(values)) != 1:
        print(f"determinism: FAIL: {args.metric} differs between runs: "
              f"{', '.join(str(v) for v in values)} (tools/run {' '.join(args.run_args)})",
              file=sys.stderr)
        return 1
    print(f"determinism: PASS: {args.metric} = {values[0]} in all {args.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
