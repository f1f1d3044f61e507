#!/usr/bin/python3
"""Grades the hostile batch once (tools/grade --batch -j N) and checks every result.

Proves that the demonstration lab means something (the reference scores full
marks; the starter builds and fails exactly the tests that cover its regions)
and that no hostile submission earns what it did not: each gets the right
score and a clear reason within its timeouts. Exit status 0 only if all hold.
"""

import argparse
import csv
import fcntl
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
import planted
from lib import lab_rubric, lab_sandbox  # tools/lib, through PYTHONPATH=tools (ctest sets it)

# The hostile batch's scratch cap, in MiB: a demonstration-lab tree takes
# about 40.
BATCH_SCRATCH_MB = 256

# How each submission must fare. "all_pass_but" names the items that must
# fail (with words their output must hold); every other item must pass. A
# kernel-only sabotage breaks what calls split_arguments in the kernel and
# nothing else: the kernel still boots and measures.
SPLIT_BROKEN = {"kern.split_in_kernel": None, "user.echo": "not run: needs"}


def broken(words, **more):
    return {**SPLIT_BROKEN, "kern.split_in_kernel": words, **more}


EXPECT = {
    "reference": {"all_pass": True},
    "starter": {"like_starter": True},
    "edits_tests": {"like_starter": True,
                    "ignored": ["tests/unit/test_lib.cpp", "src/kernel/kern/kern_ktests.cpp",
                                "labs/lab-demo/rubric.toml"]},
    "nocompile": {"build_fails": "error"},
    "loop": {"all_pass_but": broken("did not finish within"),
             "notice": "taken from cmdline.cpp at the top of the submission",
             "hold": "inline assembly"},
    "triple": {"all_pass_but": broken("triple fault", loop_100k="reported 0"),
               "notice": "is a symbolic link", "hold": "inline assembly"},
    "panic": {"all_pass_but": broken("panicked: hostile submission gives up",
                                     loop_100k="reported 0"),
              "audit": ["toll::panic"], "hold": "inline assembly"},
    # Region code can reach the console only through the record path: held.
    "flood": {"all_pass_but": broken("the console printed more than", loop_100k="reported 0"),
              "audit": ["kprintf"], "hold": "inline assembly"},
    "forged": {"all_pass_but": broken("without this run's nonce", loop_100k="reported 0"),
               "audit": ["record-shaped strings"], "hold": "record-shaped text"},
    # A correct solution whose region attacks the grader from the host
    # tests; every attack fails or stays in the sandbox, the kernel it tried
    # to patch still passes, and the grade is held for its calls.
    "escape": {"all_pass_but": {"loop_100k": "reported 0"},
               "notice": "outside its lab regions were ignored",
               "hold": "inline assembly", "audit": ["fork [processes]", "fopen [files]"],
               "no_output": ["tampering", "LEAK "],
               # The attack ran (the grader's own check ran the region too) and
               # planted its links, but overwrote no kernel.
               "log_has": {"oracle.log": ["escape: attacking", "escape: planted"]},
               "log_lacks": {"oracle.log": ["escape: overwrote", "LEAK "]}},
    # Not stoppable by the nonce (it forges its records with it): the audit
    # shows how in one line, and holds the grade.
    "forger": {"like_starter": True,
               "audit": ["LOOK AT THIS SUBMISSION", "param_get", "[command line]", "poweroff",
                         "[power-off]", "kprintf", "[console]", "record-shaped strings"],
               "hold": "the command line or the nonce"},
    # Right on every line the tests use, wrong where they do not look ('='
    # splits its words): the grader's own lines catch it.
    "tuned": {"all_pass_but": {"kern.split_in_kernel": "records disagree with the machine"},
              "disagree": ["kern.split_in_kernel"]},
    "copy_a": {"all_pass_but": {"loop_100k": "loop_100k"},
               "notice": "no usable lab demo region"},
    "copy_b": {"all_pass_but": {"loop_100k": "loop_100k"},
               "notice": "outside its lab regions were ignored"},
    "copy_c": {"like_starter": True, "notice": "were the LAB markers removed?"},
    "formatter_forge": {"like_starter": True, "ignored": ["src/lib/format.cpp"]},
    "fifo": {"all_pass_but": {"loop_100k": "loop_100k"}, "notice": "is a FIFO"},
    "hardlink": {"like_starter": True, "notice": "is a hard link"},
    "deep_toml": {"all_pass_but": {"loop_100k": "nests tables or arrays too deeply"}},
    "ansi": {"build_fails": "error"},
    "empty": {"build_fails": "", "build_says": "the submission is empty", "empty": True},
    # Links planted at build time (test discovery runs the unit tests'
    # program): the grader writes, chowns and empties none of their targets
    # (check_containment), and the grade is the reference's; held for the
    # calls of its constructor.
    "buildtime_links": {"all_pass": True, "hold": "inline assembly",
                        "audit": ["symlink"],
                        "log_has": {"build.log": ["at-load: planted audit.json",
                                                  "at-load: planted runs",
                                                  "at-load: planted Testing"]}},
    # A Classroom workflow that runs another grader: the grade GitHub shows
    # is not the course's, so a person must look.
    "classroom_repin": {"like_starter": True, "hold": "Classroom workflow was changed"},
    # Code outside the region's function: held, whatever it does.
    # A preprocessor line in a function body: what its kind does not permit.
    "scope_escape": {"all_pass": True, "hold": ["code outside the function it is in",
                                                "lines its kind of region does not permit"]},
    # Fills the scratch disk at build time: stopped with the reason, and the
    # others' grades stay as they are.
    "fill_scratch": {"build_fails": "", "build_says": "so the step was stopped"},
    **planted.EXPECT,
}
# Lines that must never reach a report: files of the grading machine.
SECRET_FILES = ("/etc/passwd", "/etc/hostname")


def read_log(out, name):
    try:
        with open(os.path.join(out, "logs", name), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


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
        held_now = bool(results.get("extra_data", {}).get("hold"))
        self.expect(held_now or abs(sum(t["score"] for t in tests.values()) -
                                    results["score"]) < 1e-9, name,
                    "the score is not the sum of the items")
        self.expect("GRADER ERROR" not in report, name, "the grader reported its own error")
        self.expect("Sandbox: " in report and "protection" in results.get("extra_data", {}),
                    name, "the report does not say which sandbox was in force")
        for t in results["tests"]:
            self.expect(t.get("visibility") in ("visible", "hidden", "after_due_date",
                                                "after_published"), name,
                        f"{t['name']} has no visibility")
        self.expect(isinstance(results.get("execution_time"), (int, float)), name,
                    "no execution_time")
        self.check_no_secrets(name, report + json.dumps(results))
        self.expect("\x1b" not in report + json.dumps(results) and "\\u001b" not in
                    json.dumps(results), name, "a terminal escape reached the report")
        self.expect("SECRET_INSTRUCTOR_TOKEN" not in report + json.dumps(results), name,
                    "a file of the grading machine reached the report through a hard link")
        held = results["extra_data"].get("hold") or []
        self.expect(bool(held) == ("hold" in rule), name,
                    f"the hold is {held!r}, expected {rule.get('hold')!r}")
        if "hold" in rule:
            for words in [rule["hold"]] if isinstance(rule["hold"], str) else rule["hold"]:
                self.expect(any(words in h for h in held), name,
                            f"the hold does not name {words!r}: {held}")
            self.expect(results["score"] == 0 and "ON HOLD" in report, name,
                        "a held grade counts")
        flagged = "LOOK AT THIS SUBMISSION" in report
        self.expect(flagged == ("audit" in rule), name,
                    "the audit " + ("missed what it calls" if "audit" in rule else
                                    "flags a submission that does nothing suspicious"))
        for words in rule.get("audit", []):
            audit = next((l for l in report.splitlines() if l.startswith("Audit:")), "")
            self.expect(words in audit, name, f"the audit line lacks {words!r}: {audit}")
        if "notice" in rule:
            self.expect(rule["notice"] in report and rule["notice"] in results["output"], name,
                        f"the report does not tell the student {rule['notice']!r}")
        disagree = results["extra_data"].get("records_disagree") or []
        self.expect(disagree == rule.get("disagree", []), name,
                    f"records disagree with the machine on {disagree}, expected "
                    f"{rule.get('disagree', [])}")
        if disagree:
            self.expect("records disagree with the machine" in report, name,
                        "the report does not say that the records disagree with the machine")
        for words in rule.get("no_output", []):
            self.expect(words not in report + json.dumps(results), name,
                        f"the report says {words!r}")
        for log, lines in rule.get("log_has", {}).items():
            text = read_log(out, log)
            for words in lines:
                self.expect(words in text, name, f"logs/{log} lacks {words!r}: the attack "
                            f"did not run, so proves nothing")
        for log, lines in rule.get("log_lacks", {}).items():
            text = read_log(out, log)
            for words in lines:
                self.expect(words not in text, name, f"logs/{log} says {words!r}")
        for item, words in rule.get("item_says", {}).items():
            self.expect(words in tests[item]["output"], name, f"{item} does not say {words!r}")
        if "all_pass_but" in rule:
            for n, t in tests.items():
                failing = n in rule["all_pass_but"]
                why = rule["all_pass_but"].get(n)
                self.expect((t["status"] == "passed") != failing, name,
                            f"{n}: {t['status']} ({t['output'][:200]})")
                if why:
                    self.expect(why in t["output"], name, f"{n} does not say {why!r}")
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
            self.expect(build["status"] == "failed" and rule["build_fails"] in
                        build["output"] + build["name"],
                        name, "the build output must show the compiler's error")
            if rule.get("build_says"):
                self.expect(rule["build_says"] in build["output"], name,
                            f"the build does not say {rule['build_says']!r}: {build['output'][:300]}")

    def check_no_secrets(self, name, text):
        for path in SECRET_FILES:
            try:
                with open(path) as f:
                    lines = [l.strip() for l in f if len(l.strip()) >= 8]
            except OSError:
                continue
            for line in lines:
                self.expect(line not in text, name, f"a line of {path} is in the report")
        # The reference solution of the lab (the grader's own copy) must stay unseen.
        reference = "bool more = *in == ' ';"
        if name in ("starter", "forger", "hardlink"):
            self.expect(reference not in text, name, "the reference solution is in the report")


def leftover_processes(work, uids):
    """Live processes started for the batch: running as a sandbox uid, or
    whose command line or working folder lies in the scratch folder."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                status = f.read()
            if "\nState:\tZ" in status:
                continue
            uid = int(status.split("\nUid:\t")[1].split()[0])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except (OSError, IndexError, ValueError):
            continue
        if int(pid) == os.getpid():
            continue
        # work + "/": another check's scratch folder (grading-check-vm86 beside
        # grading-check) is not this batch's, and its processes are not leftovers.
        inside = work.rstrip("/") + "/"
        named = any(w == inside[:-1] or inside in w for w in cmd.split())
        if uid in uids or (cwd + "/").startswith(inside) or (named and "check_batch" not in cmd):
            found.append(f"{pid} (uid {uid}): {cmd[:120]}")
    return found


def check_containment(checker, out, work, results_before):
    """After the batch: nothing it started runs, nothing was written outside
    the reports, and no results.json changed after the grader wrote it."""
    time.sleep(1.0)  # an escaped process would have rewritten results by now
    from lib import lab_sandbox
    # Only the sandbox uids no grader holds now: other graders on the machine
    # (another lab's check, another checkout's batch) run as the others.
    uids = set()
    held = []
    for uid in range(lab_sandbox.DEFAULT_UID_BASE, lab_sandbox.DEFAULT_UID_BASE +
                     lab_sandbox.UID_POOL):
        try:
            fd = os.open(os.path.join(lab_sandbox.UID_LOCKS, str(uid)), os.O_RDWR)
        except OSError:
            uids.add(uid)  # never used
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            uids.add(uid)
            held.append(fd)  # kept until the scan is done
        except OSError:
            os.close(fd)
    left = leftover_processes(work, uids)
    for fd in held:
        os.close(fd)
    checker.expect(not left, "containment", f"processes outlived the grader: {left}")
    for pid in left:  # never leave them behind, even when the test fails
        try:
            os.kill(int(pid.split()[0]), 9)
        except (OSError, ValueError):
            pass
    checker.expect(not os.path.exists(os.path.join(out, "escaped.txt")), "containment",
                   "student code wrote into the output folder")
    planted = hostile.planted_target(out)
    checker.expect(not os.path.lexists(planted), "containment",
                   f"the grader wrote through a link a submission planted ({planted} exists)")
    folder = hostile.planted_dir(out)
    if os.path.isdir(folder):
        st = os.stat(folder)
        checker.expect(st.st_uid == os.geteuid() and os.listdir(folder) == ["keep.txt"],
                       "containment", f"the grader changed {folder} through a planted link "
                       f"(owner {st.st_uid}, files {os.listdir(folder)})")
    for path, text in results_before.items():
        with open(path) as f:
            checker.expect(f.read() == text, "containment", f"{path} changed after grading")
    size = sum(os.path.getsize(os.path.join(b, f)) for b, _, fs in os.walk(out) for f in fs)
    checker.expect(size < 20 << 20, "containment", f"the reports take {size} bytes")


def check_batch_reports(checker, out, made, rubric):
    """The batch's own reports: one JUnit file with unique names per student
    and points, and the similarity report pairing the copies."""
    suites = ET.parse(os.path.join(out, "junit.xml")).getroot()
    names = [c.get("name") for c in suites.iter("testcase")]
    checker.expect(len(names) == len(set(names)), "junit", "test names repeat across students")
    checker.expect(len(names) == len(made) * (len(rubric.items) + 1), "junit",
                   f"{len(names)} test cases for {len(made)} students")
    checker.expect(all(c.find("properties/property[@name='points']") is not None
                       for c in suites.iter("testcase")), "junit", "a test case has no points")
    if "copy_a" in made:
        with open(os.path.join(out, "similarity.csv")) as f:
            rows = list(csv.reader(f))[1:]
        top = [r for r in rows if float(r[0]) >= 0.999 and "(reference)" not in r[1:3]]
        pairs = {tuple(sorted(r[1:3])) for r in top}
        checker.expect(("copy_a", "copy_b") in pairs, "similarity",
                       f"copy_a and copy_b are not paired at 1.000: {rows[:3]}")
        copies = {"copy_a", "copy_b", "copy_c"}
        others = [r for r in rows if len(copies & set(r[1:3])) == 1 and float(r[0]) > 0.5]
        checker.expect(not others, "similarity", f"the copies resemble others: {others[:3]}")
        # Without its markers, copy_c still pairs with copy_a above every
        # pair of independent work.
        unmarked = [float(r[0]) for r in rows if {"copy_a", "copy_c"} == set(r[1:3])]
        # copy_a and the reference are the batch's two independent solutions.
        honest = [float(r[0]) for r in rows if {"copy_a", "(reference)"} == set(r[1:3])]
        checker.expect(unmarked and unmarked[0] > max(honest + [0.0]), "similarity",
                       f"copy_c (markers removed) scores {unmarked} with copy_a, not above "
                       f"the honest pairs' {max(honest + [0.0])}")


def check_shards_and_resume(checker, cmd, out, work, made):
    """Resuming grades nothing again; two shards, resumed from the batch's
    results, merge into the batch's gradebook."""
    start = time.monotonic()
    text = subprocess.run(cmd + ["--resume"], capture_output=True, text=True).stdout
    checker.expect(text.count("already graded") == len(made), "resume",
                   f"a resumed batch graded again: {text[-500:]}")
    shards = []
    for i in (1, 2):
        shard_out = os.path.join(work, f"shard{i}")
        shutil.copytree(out, shard_out)
        for n in os.listdir(shard_out):  # each shard keeps only its own students' results
            if n.endswith((".csv", ".txt", ".xml")):
                os.unlink(os.path.join(shard_out, n))
        text = subprocess.run(cmd[:cmd.index("--out")] + ["--out", shard_out, "--resume",
                                                          "--shard", f"{i}/2"] +
                              cmd[cmd.index("--out") + 2:], capture_output=True, text=True).stdout
        checker.expect(f"shard {i}/2" in text, "shards", text[-300:])
        with open(os.path.join(shard_out, "summary.csv")) as f:
            shards.append(len(f.read().splitlines()) - 1)
        for n in os.listdir(shard_out):
            if os.path.isdir(os.path.join(shard_out, n)) and f"{n}:" not in text:
                shutil.rmtree(os.path.join(shard_out, n))  # not this shard's
    checker.expect(sum(shards) == len(made) and min(shards) > 0, "shards",
                   f"the shards hold {shards} of {len(made)}")
    merged = os.path.join(work, "merged")
    status = subprocess.call(cmd[:cmd.index("--batch")] + ["--merge",
                             os.path.join(work, "shard1"), os.path.join(work, "shard2"),
                             "--out", merged])
    checker.expect(status == 0, "merge", f"tools/grade --merge exited {status}")

    def scores(path):
        with open(path) as f:
            return sorted(tuple(r[:3]) for r in csv.reader(f))
    checker.expect(scores(os.path.join(merged, "summary.csv")) ==
                   scores(os.path.join(out, "summary.csv")), "merge",
                   "the merged gradebook differs from the batch's")
    names = [c.get("name") for c in ET.parse(os.path.join(merged, "junit.xml")).iter("testcase")]
    checker.expect(len(names) == len(set(names)) and names, "merge", "merged JUnit names repeat")
    print(f"check_batch: resume, two shards and the merge took {time.monotonic() - start:.1f} s")


def plain_batch(rubric, batch):
    """The reference (this checkout's student files) and the lab's starter."""
    os.makedirs(batch)
    for rel in rubric.student_files:
        dest = os.path.join(batch, "reference", rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(os.path.join(ROOT, rel), dest)
    hostile.lab_regions.write_starter(ROOT, rubric.lab, os.path.join(batch, "starter"))
    made = {"reference": "the reference", "starter": "the starter from tools/mklab"}
    # Kernels whose records are right while the mechanism is not.
    made.update(planted.make(ROOT, rubric.lab, batch, rubric.student_files))
    return made


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
        made = hostile.make_batch(ROOT, batch, os.path.join(args.work, "scratch"), out)
    else:
        made = plain_batch(rubric, batch)
    start = time.monotonic()
    cmd = [sys.executable, os.path.join(ROOT, "tools", "grade"), "--lab", rubric.lab,
           "--batch", batch, "-j", str(args.jobs), "--out", out,
           "--work", os.path.join(args.work, "grading")]
    if args.cache:
        cmd += ["--cache", args.cache]
    # The scratch cap lowered from 3 GiB, so that fill_scratch writes little.
    env = dict(os.environ, **{lab_sandbox.SCRATCH_MB_VARIABLE: str(BATCH_SCRATCH_MB)})
    status = subprocess.call(cmd, env=env)
    print(f"check_batch: the batch of {len(made)} took {time.monotonic() - start:.1f} s")
    checker = Checker(rubric)
    results_before = {}
    for name in made:
        path = os.path.join(out, name, "results.json")
        if os.path.exists(path):
            with open(path) as f:
                results_before[path] = f.read()
    if not args.plain:
        check_containment(checker, out, os.path.abspath(args.work), results_before)
        check_batch_reports(checker, out, made, rubric)
        check_shards_and_resume(checker, cmd, out, args.work, made)
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
