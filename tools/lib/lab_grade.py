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
import sys
import time
import tomllib

from . import lab_regions, lab_sandbox
from .lab_submission import (MAX_STUDENT_FILE, OUTPUT_TAIL_CHARS, Rejected, assemble, read_text,
                             tail, unpack)

PYTHON = "/usr/bin/python3"
BUILD_OUTPUT = 2 << 20   # bytes of build output kept
CTEST_OUTPUT = 1 << 20   # bytes of host-test output kept

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
        self.notices = []           # why a student file was or was not used, in words
        self.error = None           # a problem of the grader, not of the submission
        self.seconds = 0.0
        self.protection = ""        # the sandbox in force (Sandbox.describe())
        self.leftovers = 0          # processes killed after a step had ended
        self.audit = None           # lab_audit.Audit, when the build worked
        self.fingerprint = set()    # lab_batch.fingerprint() of the student's files

    @property
    def score(self):
        return sum(r.score for r in self.results)

    @property
    def max_score(self):
        return self.rubric.max_score


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


def needs_disk_image(rubric):
    """True when a rubric test boots the loaderless disk image (under Bochs or
    with --boot disk), which a kernel-only build does not make."""
    for item in rubric.items:
        args = list(item.run or [])
        pairs = set(zip(args, args[1:])) | {tuple(a.split("=", 1)) for a in args if "=" in a}
        if ("--boot", "disk") in pairs or ("--emu", "bochs") in pairs:
            return True
    return False


class Jail:
    """Where and how one submission's code runs: the sandbox, its dedicated
    uid, the scratch folder it may write (@p work), the grader's checkout
    @p root (of which only tools/ is visible, for tools/run) and the build
    tools. @p trusted marks the grader's own reference build, the only one
    allowed to write the compiler cache."""

    def __init__(self, sandbox, work, root, tools=None, uid=None, trusted=False):
        self.sandbox, self.work, self.root, self.tools = sandbox, work, root, tools
        self.uid, self.trusted = uid, trusted

    def env(self, extra=None):
        env = lab_sandbox.minimal_env(extra)
        if self.tools:
            env = self.tools.env(env)
            if self.tools.ccache and not self.trusted:
                # Student builds read the cache but never write it, so no
                # submission can plant objects for the next one.
                env.update(CCACHE_READONLY="1",
                           CCACHE_TEMPDIR=os.path.join(self.work, "ccache-tmp"))
        return env

    def readable(self):
        paths = [os.path.join(self.root, "tools")]
        if self.tools and self.tools.cache_dir and not self.trusted:
            paths.append(self.tools.cache_dir)
        return paths

    def writable(self):
        paths = [self.work]
        if self.tools and self.tools.cache_dir and self.trusted:
            paths.append(self.tools.cache_dir)
        return paths

    def run(self, cmd, log, timeout, limits, cwd=None, env=None):
        return self.sandbox.run(cmd, log, timeout, limits, writable=self.writable(),
                                readable=self.readable(), cwd=cwd or self.work,
                                env=env or self.env(), uid=self.uid)


def limits_for(seconds, output, memory=3 << 30):
    return lab_sandbox.Limits(cpu_seconds=int(seconds) + 30, output_bytes=output,
                              memory_bytes=memory)


# A compiler needs a few hundred MB; one that reads without end (an
# #include of /dev/zero) stops here.
BUILD_MEMORY = 2 << 30


def limit_words(outcome):
    """What a resource limit did to a command, for a student to read, or ''."""
    words = []
    if outcome.truncated:
        words.append(f"it printed {outcome.output_bytes} bytes, more than the grader keeps")
    sig = outcome.limit_signal()
    if sig:
        words.append(f"a process was stopped by {sig}")
    return "; ".join(words)


def last_build_step(text):
    steps = re.findall(r"^\[\d+/\d+\] (.*)$", text, re.M)
    return steps[-1][:300] if steps else ""


def build(grade, tree, jobs, jail, logs):
    """Configures and builds @p tree in @p jail for the rubric's arches: only
    the rubric's build_targets when it names some, and only the kernel image (not
    the disk images) unless a test boots a disk. Fills grade.build; the log
    goes to @p logs/build.log."""
    r = grade.build
    tools = jail.tools
    bdir = os.path.join(tree, "build-grade")
    log = os.path.join(logs, "build.log")
    env = jail.env({"CMAKE_BUILD_PARALLEL_LEVEL": str(jobs)})  # also the kernel's inner build
    limits = limits_for(grade.rubric.build_timeout, BUILD_OUTPUT, BUILD_MEMORY)
    arches = ";".join(getattr(grade.rubric, "arches", ["i386"]))
    cmd = ["cmake", "-S", tree, "-B", bdir, f"-DTOLL_ARCHES={arches}",
           "-DCMAKE_BUILD_TYPE=RelWithDebInfo"] + (tools.cmake_args() if tools else [])
    if not needs_disk_image(grade.rubric):
        cmd.append("-DTOLL_KERNEL_ONLY=ON")
    first = jail.run(cmd, log + ".configure", grade.rubric.build_timeout, limits, cwd=tree,
                     env=env)
    status, secs = first.status, first.seconds
    text = read_text(log + ".configure")
    outcomes = [first]
    if status == 0:
        cmd = ["cmake", "--build", bdir, "-j", str(jobs)]
        for t in grade.rubric.build_targets:
            cmd += ["--target", t]
        second = jail.run(cmd, log, max(1, grade.rubric.build_timeout - secs), limits, cwd=tree,
                          env=env)
        status = second.status
        secs += second.seconds
        text += read_text(log)
        outcomes.append(second)
    with open(log, "w", encoding="utf-8") as f:
        f.write(text)
    os.unlink(log + ".configure")
    r.seconds = secs
    grade.leftovers += sum(o.leftovers for o in outcomes)
    if status == 0:
        r.status, r.reason = "passed", "the submission builds"
        return bdir
    r.status = "failed"
    if status is None:
        step = last_build_step(text)
        r.reason = (f"the build did not finish within {grade.rubric.build_timeout} s" +
                    (f"; the last step started was: {step}" if step else "") +
                    "; every process it started was stopped")
    else:
        r.reason = "the submission does not build"
    limited = "; ".join(filter(None, (limit_words(o) for o in outcomes)))
    if limited:
        r.reason += f" ({limited})"
    errors = [i for i, line in enumerate(text.splitlines()) if re.search(r"\berror\b", line)]
    lines = text.splitlines()
    if errors:
        first = errors[0]
        r.output = "\n".join(lines[max(0, first - 3):first + 25])[:OUTPUT_TAIL_CHARS]
    else:
        r.output = tail(text)
    r.output = tree_relative(r.output, tree)
    return None


def run_ctest(item, bdir, logs, jail):
    log = os.path.join(logs, f"{item.name}.log")
    cmd = ["ctest", "--test-dir", bdir, "-R", item.ctest, "--no-tests=error",
           "--timeout", str(item.timeout), "--output-on-failure"]
    out = jail.run(cmd, log, item.timeout + 30, limits_for(item.timeout, CTEST_OUTPUT), cwd=bdir)
    status, secs = out.status, out.seconds
    text = read_text(log)
    m = re.search(r"tests passed, (\d+) tests? failed out of (\d+)", text)
    ran = int(m.group(2)) if m else 0
    limited = limit_words(out)
    limited = f" ({limited})" if limited else ""
    if status is None:
        return (False, f"the host tests did not finish within {item.timeout + 30} s; every "
                f"process they started was stopped{limited}", text, secs)
    if status == 0 and ran >= item.min_tests and not out.truncated:
        return True, f"{ran} host test(s) passed", text, secs
    if status == 0 and not out.truncated:
        return False, f"only {ran} host test(s) matched; the rubric expects {item.min_tests}", text, secs
    if status == 0:
        return False, f"the host tests' output was cut{limited}", text, secs
    timeouts = "***Timeout" in text
    reason = "host test(s) failed" + (" (stopped at the time limit: an endless loop?)"
                                      if timeouts else "")
    failed = re.findall(r"^\s*\d+ - (\S.*?) \(", text, re.M)
    if failed:
        reason += ": " + "; ".join(failed[:5])
    return False, reason + limited, text, secs


def boot(item, bdir, logs, max_output, jail):
    """One kernel run through tools/run with a fresh nonce. Returns (summary, console, secs)."""
    nonce = secrets.token_hex(8)
    runs = os.path.join(jail.work, "runs")
    os.makedirs(runs, exist_ok=True)
    if jail.uid is not None:
        os.chown(runs, jail.uid, jail.uid)
    json_path = os.path.join(runs, f"{item.name}.json")
    log = os.path.join(logs, f"{item.name}.log")
    cmd = [PYTHON, os.path.join(jail.root, "tools", "run"), "--build", bdir, "--nonce", nonce,
           "--timeout", str(item.timeout), "--max-output", str(max_output),
           "--json", json_path] + item.run
    if os.path.exists(json_path):
        os.unlink(json_path)
    out = jail.run(cmd, log, item.timeout + 30,
                   limits_for(item.timeout, max_output + 65536), cwd=bdir,
                   env=jail.env({"PYTHONDONTWRITEBYTECODE": "1"}))
    console = read_text(log, max_output + 65536)
    summary = None
    try:
        import json
        text = read_text(json_path, 4 << 20)
        summary = json.loads(text)
        with open(os.path.join(logs, f"{item.name}.json"), "w") as f:
            f.write(text)
        os.unlink(json_path)
    except (OSError, ValueError):
        pass
    if not isinstance(summary, dict):
        summary = {"outcome": "error",
                   "detail": "tools/run wrote no summary" if out.status is not None
                   else "tools/run did not return", "tests": {}, "metrics": {}}
    summary["nonce"] = nonce
    return summary, console, out.seconds


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


def console_lines(console, item, nonce):
    """The console lines @p item's patterns may match: every line when the
    rubric says console_from = "any", else only those the test framework
    printed with this run's nonce (the prefix removed)."""
    lines = console.replace("\r", "").splitlines()
    if item.console_from == "any":
        return lines
    prefix = f"@{nonce} "
    return [line[len(prefix):] for line in lines if nonce and line.startswith(prefix)]


def reported_value(tree, rubric, name):
    """(the number the worksheet reports for @p name, or None; why not)."""
    path = os.path.join(tree, rubric.worksheet)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_STUDENT_FILE + 1)
    except OSError:
        return None, f"the worksheet {rubric.worksheet} is missing"
    if len(raw) > MAX_STUDENT_FILE:
        return None, f"the worksheet {rubric.worksheet} is too large"
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        return None, f"the worksheet {rubric.worksheet} is not UTF-8 text: {e}"
    except tomllib.TOMLDecodeError as e:
        return None, f"the worksheet {rubric.worksheet} is not valid TOML: {e}"
    table = data.get("measurements", {})
    if not isinstance(table, dict):
        return None, (f"in the worksheet {rubric.worksheet}, 'measurements' must be a table "
                      f"([measurements]), not a {type(table).__name__}")
    value = table.get(name)
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


def run_items(grade, tree, bdir, logs, jail):
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
            ok, r.reason, text, r.seconds = run_ctest(item, bdir, logs, jail)
            r.output = tail(text)
        else:
            summary, console, r.seconds = boot(item, bdir, logs, rubric.max_output, jail)
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


def student_fingerprint(grade, tree):
    """The similarity fingerprint of the student's files as submitted."""
    from . import lab_batch
    texts = {}
    for rel in grade.taken:
        if rel == grade.rubric.worksheet:
            continue  # numbers every correct worksheet shares
        texts[rel] = read_text(os.path.join(tree, rel), MAX_STUDENT_FILE)
    return lab_batch.fingerprint(texts, grade.rubric.lab)


def grade_submission(rubric, submission, root, files, work, logs, jail, jobs=2, keep=False,
                     audit_reference=None):
    """Grades @p submission against @p rubric; @p files are the checkout's files.
    Scratch work happens under @p work (removed unless @p keep), and every
    step that builds or runs the submission's code runs in @p jail
    (a Jail whose writable folder is @p work). The build log and each run's
    console go to @p logs, which the jail cannot see. @p audit_reference is
    what lab_audit found in the reference's objects (None: no audit)."""
    from . import lab_audit
    grade = Grade(rubric, submission)
    grade.protection = jail.sandbox.describe()
    start = time.monotonic()
    os.makedirs(work, exist_ok=True)
    tree = os.path.join(work, "tree")
    os.makedirs(logs, exist_ok=True)
    try:
        try:
            sub_dir = unpack(grade, root, work)
        except (Rejected, lab_regions.RegionError, OSError) as e:
            grade.build.status = "failed"
            grade.build.reason = f"the submission could not be read: {e}"
            grade.notices.append("none of your files were used: " + grade.build.reason)
            bdir = None
        else:
            assemble(grade, root, files, sub_dir, tree)
            grade.fingerprint = student_fingerprint(grade, tree)
            jail.sandbox.hand_over(work, jail.uid)
            bdir = build(grade, tree, jobs, jail, logs)
            if bdir and audit_reference is not None:
                grade.audit = lab_audit.audit_build(grade, tree, bdir, jail, audit_reference,
                                                    root)
        run_items(grade, tree, bdir, logs, jail)
    except Exception as e:  # the grader's own failure must not look like a score
        grade.error = f"{type(e).__name__}: {e}"
        sys.stderr.write(f"tools/grade: internal error on {submission}: {grade.error}\n")
    finally:
        grade.seconds = time.monotonic() - start
        if jail.uid is not None:
            grade.leftovers += lab_sandbox.kill_user(jail.uid)
        if not keep:
            shutil.rmtree(tree, ignore_errors=True)
            shutil.rmtree(os.path.join(work, "submission"), ignore_errors=True)
    return grade
