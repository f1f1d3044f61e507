"""Grading one submission: assemble a tree, build it, run the rubric, score it.

The tree is the grader's own checkout with only the rubric's student files
taken from the submission, so a submission cannot change a test, the rubric,
the grader or the build. Every kernel run gets a fresh random nonce, and a
test passes only on records tagged with it (written by ktest, outside the
student's files).
"""

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import tomllib

from . import lab_regions, process

MAX_STUDENT_FILE = 4 << 20  # bytes; a larger "source file" is refused
OUTPUT_TAIL_LINES = 40
OUTPUT_TAIL_CHARS = 6000
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
}


class Result:
    """The verdict on one rubric item (or on the build)."""

    def __init__(self, name, max_score, kind):
        self.name, self.max_score, self.kind = name, max_score, kind
        self.score = 0
        self.status = "skipped"  # passed, failed, skipped, error
        self.reason = ""
        self.output = ""
        self.seconds = 0.0
        self.covers = True
        self.description = ""


class Grade:
    """Everything known about one graded submission."""

    def __init__(self, rubric, submission):
        self.rubric, self.submission = rubric, submission
        self.form = None            # tree, bundle or patch
        self.taken = []             # student files taken from the submission
        self.missing = []           # student files the submission lacks (starter used)
        self.ignored = []           # other files it changed, replaced by the grader's
        self.build = Result("build", 0, "build")
        self.results = []
        self.error = None           # a problem of the grader, not of the submission
        self.seconds = 0.0

    @property
    def score(self):
        return sum(r.score for r in self.results)

    @property
    def max_score(self):
        return self.rubric.max_score


class Rejected(Exception):
    """The submission cannot be read (a patch that does not apply, a bad bundle)."""


def _clean_env():
    env = dict(os.environ)
    for key in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CMAKE_BUILD_PARALLEL_LEVEL", "DESTDIR"):
        env.pop(key, None)
    return env


def run_limited(cmd, timeout, log_path, cwd=None, env=None):
    """Runs @p cmd with stdout and stderr to @p log_path, killing its whole
    process group after @p timeout seconds. Returns (status or None on timeout, seconds)."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        # Leaving the block kills the group: also any child left behind.
        with process.Group(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd,
                           env=env or _clean_env()) as child:
            status = child.wait(timeout=timeout)
    return status, time.monotonic() - start


def read_text(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def tail(text, lines=OUTPUT_TAIL_LINES, chars=OUTPUT_TAIL_CHARS):
    kept = text.replace("\r", "").splitlines()[-lines:]
    out = "\n".join(kept)
    return out[-chars:]


def tree_relative(text, tree):
    """@p text with the paths of files in @p tree made relative to it: a
    compile without ccache names a file by its absolute path (in __FILE__ and
    in compiler messages), one through ccache by a path relative to its build
    folder (../../src/...). Both read src/... here, so the cache changes no
    reason a student sees."""
    text = text.replace(tree + "/", "")

    def strip(m):
        rel = m.group(2)
        return rel if os.path.exists(os.path.join(tree, rel)) else m.group(0)
    return re.sub(r"(?<![\w./])((?:\.\./)+)([\w+-][\w.+/-]*)", strip, text)


def submission_form(path):
    if os.path.isdir(path):
        return "tree"
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith((b"# v2 git bundle", b"# v3 git bundle")):
        return "bundle"
    return "patch"


def unpack(grade, root, scratch):
    """Makes the submission a folder; returns its path. Raises Rejected."""
    path = grade.submission
    grade.form = submission_form(path)
    if grade.form == "tree":
        return path
    dest = os.path.join(scratch, "submission")
    log = os.path.join(scratch, "unpack.log")
    if grade.form == "bundle":
        status, _ = run_limited(["git", "clone", "-q", os.path.abspath(path), dest], 120, log)
        if status != 0:
            raise Rejected("the git bundle could not be cloned: " + tail(read_text(log), 5))
        if not [n for n in os.listdir(dest) if n != ".git"]:
            heads = subprocess.run(["git", "-C", dest, "for-each-ref", "--format=%(refname)",
                                    "refs/remotes"], capture_output=True, text=True).stdout.split()
            if heads:
                run_limited(["git", "-C", dest, "checkout", "-q", heads[0]], 60, log)
        return dest
    # A patch against the starter: write the starter, then apply it there.
    lab_regions.write_starter(root, grade.rubric.lab, dest)
    run_limited(["git", "init", "-q", dest], 60, log)
    status, _ = run_limited(["git", "apply", "--whitespace=nowarn", os.path.abspath(path)], 60,
                            log, cwd=dest)
    if status != 0:
        raise Rejected("the patch does not apply to the lab's starter (make it with "
                       "`git diff` in a tree from tools/mklab): " + tail(read_text(log), 8))
    return dest


def assemble(grade, root, files, sub_dir, tree):
    """Copies the grader's checkout to @p tree, then the student files from @p sub_dir."""
    for rel in files:
        dest = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(os.path.join(root, rel), dest)
    student = set(grade.rubric.student_files)
    lab_regions_by_file = {}
    for r in lab_regions.find_regions(root, [f for f in files if f in student]):
        if r.lab == grade.rubric.lab:
            lab_regions_by_file.setdefault(r.path, []).append(r)
    for rel in grade.rubric.student_files:
        src = os.path.join(sub_dir, rel)
        dest = os.path.join(tree, rel)
        # A symlink (of the file or of a folder above it) could point anywhere
        # on the grading machine: only a regular file inside the submission counts.
        inside = os.path.realpath(src).startswith(os.path.realpath(sub_dir) + os.sep)
        if (inside and os.path.isfile(src) and not os.path.islink(src)
                and os.path.getsize(src) <= MAX_STUDENT_FILE):
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(src, dest)
            grade.taken.append(rel)
            continue
        grade.missing.append(rel)
        if rel in lab_regions_by_file:  # what the student started from
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = lab_regions.stub_text(f.read(), lab_regions_by_file[rel])
            with open(dest, "w", encoding="utf-8") as f:
                f.write(text)
    for rel in files:  # say which other changes were thrown away
        if rel in student:
            continue
        src = os.path.join(sub_dir, rel)
        if os.path.isfile(src) and not os.path.islink(src):
            try:
                with open(src, "rb") as a, open(os.path.join(root, rel), "rb") as b:
                    if a.read() != b.read():
                        grade.ignored.append(rel)
            except OSError:
                grade.ignored.append(rel)


def needs_disk_image(rubric):
    """True when a rubric test boots the loaderless disk image (under Bochs or
    with --boot disk), which a kernel-only build does not make."""
    for item in rubric.items:
        args = list(item.run or [])
        pairs = set(zip(args, args[1:])) | {tuple(a.split("=", 1)) for a in args if "=" in a}
        if ("--boot", "disk") in pairs or ("--emu", "bochs") in pairs:
            return True
    return False


def build(grade, tree, jobs, tools=None):
    """Configures and builds the i386 side of @p tree: only the rubric's
    build_targets when it names some, and only the kernel image (not the disk
    images) unless a test boots a disk. @p tools (lab_build.BuildTools: Ninja,
    ccache) says how, when given. Fills grade.build."""
    r = grade.build
    bdir = os.path.join(tree, "build-grade")
    log = os.path.join(tree, "build.log")
    env = _clean_env()
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(jobs)  # also for the kernel's inner build
    if tools:
        env = tools.env(env)
    cmd = ["cmake", "-S", tree, "-B", bdir, "-DTOLL_ARCHES=i386",
           "-DCMAKE_BUILD_TYPE=RelWithDebInfo"] + (tools.cmake_args() if tools else [])
    if not needs_disk_image(grade.rubric):
        cmd.append("-DTOLL_KERNEL_ONLY=ON")
    status, secs = run_limited(cmd, grade.rubric.build_timeout, log, env=env)
    text = read_text(log)
    if status == 0:
        cmd = ["cmake", "--build", bdir, "-j", str(jobs)]
        for t in grade.rubric.build_targets:
            cmd += ["--target", t]
        status, more = run_limited(cmd, max(1, grade.rubric.build_timeout - secs), log, env=env)
        secs += more
        text += read_text(log)
    r.seconds = secs
    if status == 0:
        r.status, r.reason = "passed", "the submission builds"
        return bdir
    r.status = "failed"
    if status is None:
        r.reason = f"the build did not finish within {grade.rubric.build_timeout} s"
    else:
        r.reason = "the submission does not build"
    errors = [i for i, line in enumerate(text.splitlines()) if re.search(r"\berror\b", line)]
    lines = text.splitlines()
    if errors:
        first = errors[0]
        r.output = "\n".join(lines[max(0, first - 3):first + 25])[:OUTPUT_TAIL_CHARS]
    else:
        r.output = tail(text)
    r.output = tree_relative(r.output, tree)
    return None


def run_ctest(item, bdir, logs):
    log = os.path.join(logs, f"{item.name}.log")
    cmd = ["ctest", "--test-dir", bdir, "-R", item.ctest, "--no-tests=error",
           "--timeout", str(item.timeout), "--output-on-failure"]
    status, secs = run_limited(cmd, item.timeout + 30, log)
    text = read_text(log)
    m = re.search(r"tests passed, (\d+) tests? failed out of (\d+)", text)
    ran = int(m.group(2)) if m else 0
    if status is None:
        return False, f"the host tests did not finish within {item.timeout + 30} s", text, secs
    if status == 0 and ran >= item.min_tests:
        return True, f"{ran} host test(s) passed", text, secs
    if status == 0:
        return False, f"only {ran} host test(s) matched; the rubric expects {item.min_tests}", text, secs
    timeouts = "***Timeout" in text
    reason = "host test(s) failed" + (" (stopped at the time limit: an endless loop?)"
                                      if timeouts else "")
    failed = re.findall(r"^\s*\d+ - (\S.*?) \(", text, re.M)
    if failed:
        reason += ": " + "; ".join(failed[:5])
    return False, reason, text, secs


def boot(item, bdir, logs, max_output, root):
    """One kernel run through tools/run with a fresh nonce. Returns (summary, console, secs)."""
    nonce = secrets.token_hex(8)
    json_path = os.path.join(logs, f"{item.name}.json")
    log = os.path.join(logs, f"{item.name}.log")
    cmd = [PYTHON, os.path.join(root, "tools", "run"), "--build", bdir, "--nonce", nonce,
           "--timeout", str(item.timeout), "--max-output", str(max_output),
           "--json", json_path] + item.run
    if os.path.exists(json_path):
        os.unlink(json_path)
    status, secs = run_limited(cmd, item.timeout + 30, log)
    console = read_text(log, max_output + 65536)
    summary = None
    try:
        import json
        with open(json_path) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        pass
    if summary is None:
        summary = {"outcome": "error",
                   "detail": "tools/run wrote no summary" if status is not None
                   else "tools/run did not return", "tests": {}, "metrics": {}}
    summary["nonce"] = nonce
    return summary, console, secs


def explain(summary, item, max_output):
    outcome = summary.get("outcome")
    if outcome == "done":
        return ""
    if outcome == "incomplete" and summary.get("malformed"):
        outcome = "malformed"  # e.g. a DONE line whose numbers were not printed
    template = OUTCOME_REASON.get(outcome, "the run ended badly: {outcome} {detail}")
    return template.format(timeout=item.timeout, panic=summary.get("panic") or "",
                           max_output=max_output, detail=summary.get("detail") or "",
                           malformed=(summary.get("malformed") or [""])[0], outcome=outcome)


def judge_run(item, summary, console, max_output):
    """(passed, reason) for a `run` test from its trusted records and console."""
    problems = []
    outcome = summary.get("outcome")
    if outcome == "error":
        return None, "the grader could not run the kernel: " + (summary.get("detail") or "")
    tests = summary.get("tests", {})
    if item.panic is not None:
        if outcome != "panic" or item.panic not in (summary.get("panic") or ""):
            problems.append(f"expected a kernel PANIC containing {item.panic!r}; " +
                            (explain(summary, item, max_output) or "the run ended without one"))
    elif item.expect_done and outcome != "done":
        problems.append(explain(summary, item, max_output))
    elif outcome in ("timeout", "reset", "panic", "flood", "garbage"):
        problems.append(explain(summary, item, max_output))
    for name in item.expect_pass:
        t = tests.get(name)
        if t is None:
            problems.append(f"no trusted result for kernel test {name}")
        elif t["status"] != "PASS":
            problems.append(f"kernel test {name}: {t['status']} {t.get('reason', '')}".rstrip())
    lines = console.replace("\r", "").splitlines()
    for pattern in item.console:
        if not any(re.search(pattern, line) for line in lines):
            problems.append(f"the console has no line matching {pattern!r}")
    untrusted = summary.get("untrusted_records", 0)
    note = (f"; ignored {untrusted} record(s) without this run's nonce (printed by other "
            f"code than the test framework, so they earn nothing)") if untrusted else ""
    if problems:
        return False, "; ".join(dict.fromkeys(problems)) + note
    return True, "passed" + note


def reported_value(tree, rubric, name):
    path = os.path.join(tree, rubric.worksheet)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError:
        return None, f"the worksheet {rubric.worksheet} is missing"
    except tomllib.TOMLDecodeError as e:
        return None, f"the worksheet {rubric.worksheet} is not valid TOML: {e}"
    value = data.get("measurements", {}).get(name)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None, f"{rubric.worksheet} reports no number for measurements.{name}"
    return value, ""


def judge_measurement(item, summary, tree, rubric, max_output):
    if summary.get("outcome") == "error":
        return None, "the grader could not run the kernel: " + (summary.get("detail") or "")
    metric = summary.get("metrics", {}).get(item.metric)
    if metric is None:
        why = explain(summary, item, max_output)
        return False, f"the kernel reported no trusted METRIC {item.metric}" + (f": {why}" if why else "")
    measured = metric["value"]
    value, why = reported_value(tree, rubric, item.name)
    if value is None:
        return False, why + f" (the grader measured {measured} {metric['unit']})"
    allowed = abs(measured) * item.tolerance
    verdict = f"reported {value}, measured {measured} {metric['unit']}, allowed +/- {allowed:g}"
    return abs(value - measured) <= allowed, verdict


def run_items(grade, tree, bdir, logs, root):
    rubric = grade.rubric
    by_name = {}
    for item in rubric.items:
        r = Result(item.name, item.points, item.kind)
        r.covers, r.description = item.covers, item.description
        grade.results.append(r)
        by_name[item.name] = r
        if bdir is None:
            r.reason = "not run: the submission does not build"
            continue
        blocked = [d for d in item.depends_on if by_name[d].status != "passed"]
        if blocked:
            r.reason = f"not run: needs {', '.join(blocked)}, which did not pass"
            continue
        if item.kind == "ctest":
            ok, r.reason, text, r.seconds = run_ctest(item, bdir, logs)
            r.output = tail(text)
        else:
            summary, console, r.seconds = boot(item, bdir, logs, rubric.max_output, root)
            if item.kind == "run":
                ok, r.reason = judge_run(item, summary, console, rubric.max_output)
            else:
                ok, r.reason = judge_measurement(item, summary, tree, rubric, rubric.max_output)
            r.output = tail(console)
        # Paths inside the scratch tree mean nothing to the student.
        r.reason = tree_relative(r.reason, tree)
        r.output = tree_relative(r.output, tree)
        if ok is None:
            r.status = "error"
            grade.error = grade.error or f"{item.name}: {r.reason}"
        else:
            r.status = "passed" if ok else "failed"
        r.score = item.points if ok else 0


def grade_submission(rubric, submission, root, files, work, logs, jobs=2, keep=False,
                     tools=None, before_build=None, after_build=None):
    """Grades @p submission against @p rubric; @p files are the checkout's files.
    Scratch work happens under @p work (removed unless @p keep); the build log
    and each run's console go to @p logs. @p tools says how to build (see
    build()); @p before_build and @p after_build, when given, are called
    around the build stage (after_build always, even when there was none),
    which lets a batch warm the compiler cache with one build first."""
    grade = Grade(rubric, submission)
    start = time.monotonic()
    os.makedirs(work, exist_ok=True)
    tree = os.path.join(work, "tree")
    os.makedirs(logs, exist_ok=True)
    try:
        try:
            try:
                sub_dir = unpack(grade, root, work)
            except (Rejected, lab_regions.RegionError, OSError) as e:
                grade.build.status = "failed"
                grade.build.reason = f"the submission could not be read: {e}"
                bdir = None
            else:
                assemble(grade, root, files, sub_dir, tree)
                if before_build:
                    waited = time.monotonic()
                    before_build()
                    start += time.monotonic() - waited  # waiting is not grading
                bdir = build(grade, tree, jobs, tools)
                shutil.copy(os.path.join(tree, "build.log"), os.path.join(logs, "build.log"))
        finally:
            if after_build:
                after_build()
        run_items(grade, tree, bdir, logs, root)
    except Exception as e:  # the grader's own failure must not look like a score
        grade.error = f"{type(e).__name__}: {e}"
        sys.stderr.write(f"tools/grade: internal error on {submission}: {grade.error}\n")
    finally:
        grade.seconds = time.monotonic() - start
        if not keep:
            shutil.rmtree(tree, ignore_errors=True)
            shutil.rmtree(os.path.join(work, "submission"), ignore_errors=True)
    return grade
