#!/usr/bin/python3
"""Grades the hostile batch once (tools/grade --batch -j N) and checks every result.

Proves that the demonstration lab means something (the reference scores full
marks; the starter builds and fails exactly the tests that cover its regions)
and that no hostile submission earns what it did not: each gets the right
score and a clear reason within its timeouts. Exit status 0 only if all hold.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
import hostile  # this folder, which is first on the path of a script run from it
from lib import lab_rubric  # tools/lib, through PYTHONPATH=tools (ctest sets it)

# How each submission must fare: "kernel_broken" ones keep the host tests (the
# sabotage is kernel-only) and must fail every kernel item, naming the cause.
EXPECT = {
    "reference": {"all_pass": True},
    "starter": {"like_starter": True},
    "edits_tests": {"like_starter": True,
                    "ignored": ["tests/unit/test_lib.cpp", "src/kernel/kern/kern_ktests.cpp",
                                "labs/lab-demo/rubric.toml"]},
    "nocompile": {"build_fails": "error"},
    "loop": {"kernel_broken": "did not finish within"},
    "triple": {"kernel_broken": "triple fault"},
    "panic": {"kernel_broken": "panicked: hostile submission gives up"},
    "flood": {"kernel_broken": "the console printed more than"},
    "forged": {"forged": "without this run's nonce"},
}


class Checker:
    def __init__(self, rubric):
        self.rubric = rubric
        self.items = {i.name: i for i in rubric.items}
        self.failures = []

    def expect(self, cond, who, what):
        if not cond:
            self.failures.append(f"{who}: {what}")

    def check(self, name, out):
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
        with open(os.path.join(out, "report.txt")) as f:
            report = f.read()
        ET.parse(os.path.join(out, "junit.xml"))  # must be well-formed XML
        tests = {t["name"]: t for t in results["tests"]}
        build = tests.pop("build")
        rule = EXPECT[name]
        self.expect(results["max_score"] == self.rubric.max_score, name, "max_score is wrong")
        self.expect(set(tests) == set(self.items), name, "results.json lacks rubric items")
        self.expect(abs(sum(t["score"] for t in tests.values()) - results["score"]) < 1e-9, name,
                    "the score is not the sum of the items")
        self.expect("GRADER ERROR" not in report, name, "the grader reported its own error")
        passed = {n for n, t in tests.items() if t["status"] == "passed"}
        for n, t in tests.items():
            self.expect(t["score"] == (self.items[n].points if n in passed else 0), name,
                        f"{n} scored {t['score']} with status {t['status']}")
        if rule.get("all_pass"):
            self.expect(passed == set(self.items), name,
                        f"the reference must pass everything; failed: {sorted(set(tests) - passed)}")
        if rule.get("like_starter"):
            covered = {n for n, i in self.items.items() if i.covers}
            self.expect(passed == set(self.items) - covered, name,
                        f"must fail exactly the covering items {sorted(covered)}; "
                        f"passed {sorted(passed)}")
            self.expect(results["score"] < results["max_score"], name, "scores full marks")
            self.expect(build["status"] == "passed", name, "the starter must build")
        for rel in rule.get("ignored", []):
            self.expect(rel in report and rel in results["output"], name,
                        f"the report does not say that {rel} was ignored")
        if "build_fails" in rule:
            self.expect(results["score"] == 0, name, "a build failure must score 0")
            self.expect(build["status"] == "failed" and rule["build_fails"] in build["output"],
                        name, "the build output must show the compiler's error")
        if "kernel_broken" in rule or "forged" in rule:
            for n, i in self.items.items():
                if i.kind == "ctest":
                    self.expect(n in passed, name, f"host item {n} should pass (kernel-only sabotage)")
                elif "kernel_broken" in rule:
                    self.expect(n not in passed, name, f"kernel item {n} must not pass")
                elif i.covers:
                    self.expect(n not in passed, name, f"forged records earned {n}")
            ran = [t for n, t in tests.items() if self.items[n].kind != "ctest"
                   and not t["output"].startswith("not run")]
            key = rule.get("kernel_broken") or rule.get("forged")
            self.expect(ran and all(key in t["output"] for t in ran if t["status"] != "passed"),
                        name, f"every kernel item that ran must say {key!r}")


def plain_batch(rubric, batch):
    """The reference (this checkout's student files) and the lab's starter."""
    os.makedirs(batch)
    for rel in rubric.student_files:
        dest = os.path.join(batch, "reference", rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(os.path.join(ROOT, rel), dest)
    hostile.lab_regions.write_starter(ROOT, rubric.lab, os.path.join(batch, "starter"))
    return {"reference": "the reference", "starter": "the starter from tools/mklab"}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", required=True, help="scratch folder (emptied first)")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    p.add_argument("--cache", metavar="DIR",
                   help="the grader's ccache folder, kept between runs (default: in --work)")
    p.add_argument("--lab", default=hostile.LAB,
                   help="the lab (default demo, the only one with hostile variants)")
    p.add_argument("--plain", action="store_true",
                   help="grade only the reference and the starter (any lab)")
    args = p.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    rubric = lab_rubric.find(ROOT, args.lab)
    batch, out = os.path.join(args.work, "batch"), os.path.join(args.work, "out")
    if args.lab == hostile.LAB and not args.plain:
        made = hostile.make_batch(ROOT, batch, os.path.join(args.work, "scratch"))
    else:
        made = plain_batch(rubric, batch)
    start = time.monotonic()
    cmd = [sys.executable, os.path.join(ROOT, "tools", "grade"), "--lab", rubric.lab,
           "--batch", batch, "-j", str(args.jobs), "--out", out,
           "--work", os.path.join(args.work, "grading")]
    if args.cache:
        cmd += ["--cache", args.cache]
    status = subprocess.call(cmd)
    print(f"check_batch: the batch of {len(made)} took {time.monotonic() - start:.1f} s")
    checker = Checker(rubric)
    checker.expect(status == 0, "batch", f"tools/grade exited {status}")
    with open(os.path.join(out, "summary.csv")) as f:
        rows = f.read().splitlines()
    checker.expect(len(rows) == len(made) + 1, "batch", "summary.csv lacks submissions")
    for name in made:
        try:
            checker.check(name, os.path.join(out, name))
        except (OSError, ValueError, KeyError, ET.ParseError) as e:
            checker.failures.append(f"{name}: unreadable results: {e}")
    print("\n".join(rows))
    for f in checker.failures:
        print(f"check_batch: FAIL {f}")
    if checker.failures:
        print(f"check_batch: reports kept in {out}")
        return 1
    print(f"check_batch: all {len(made)} submissions graded as expected")
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
