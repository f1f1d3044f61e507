#!/usr/bin/python3
"""Boots a kernel once and checks a METRIC against bounds.

    check_metric.py --metric NAME [--min X] [--max Y] [--absent OTHER]... -- <tools/run arguments>

Fails, saying why, when the run does not end cleanly, when the metric is
missing, when its value is outside [min, max], or when a metric named with
--absent was reported (a counter delta of zero is not reported).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

TOOLS_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "run")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metric", required=True)
    p.add_argument("--min", type=int, default=None)
    p.add_argument("--max", type=int, default=None)
    p.add_argument("--absent", action="append", default=[])
    p.add_argument("run_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        status = subprocess.call([sys.executable, TOOLS_RUN, *run_args, "--quiet", "--json", out])
        if status != 0:
            sys.exit(f"check_metric: the run failed (tools/run status {status})")
        with open(out) as f:
            metrics = json.load(f)["metrics"]
    if args.metric not in metrics:
        sys.exit(f"check_metric: METRIC {args.metric} missing; the run reported {sorted(metrics)}")
    value = metrics[args.metric]["value"]
    if args.min is not None and value < args.min:
        sys.exit(f"check_metric: {args.metric} = {value}, below the minimum {args.min}")
    if args.max is not None and value > args.max:
        sys.exit(f"check_metric: {args.metric} = {value}, above the maximum {args.max}")
    for other in args.absent:
        if other in metrics:
            sys.exit(f"check_metric: {other} = {metrics[other]['value']}, but it must be absent")
    print(f"check_metric: {args.metric} = {value} within [{args.min}, {args.max}]")


if __name__ == "__main__":
    main(sys.argv[1:])
