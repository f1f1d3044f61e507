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

from . import lab_regions, lab_sandbox, process

MAX_STUDENT_FILE = 4 << 20  # bytes; a larger "source file" is refused
OUTPUT_TAIL_LINES = 40
OUTPUT_TAIL_CHARS = 6000
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


MAX_ZIP_TOTAL = 64 << 20   # bytes a .zip may unpack to
MAX_ZIP_MEMBERS = 20000


def submission_form(path):
    if os.path.isdir(path):
        return "tree"
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith((b"# v2 git bundle", b"# v3 git bundle")):
        return "bundle"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if path.endswith((".patch", ".diff")) or head.startswith((b"diff ", b"--- ", b"From ")):
        return "patch"
    return "unknown"


def unzip(path, dest):
    """Unpacks the .zip at @p path into @p dest: regular files only, no path
    leaving @p dest, at most MAX_ZIP_TOTAL bytes. Raises Rejected."""
    import zipfile
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if len(members) > MAX_ZIP_MEMBERS:
                raise Rejected(f"the .zip holds {len(members)} files, more than {MAX_ZIP_MEMBERS}")
            total = 0
            for m in members:
                name = m.filename
                mode = (m.external_attr >> 16) & 0o170000
                if m.is_dir() or mode == 0o120000:  # folders; symbolic links are never followed
                    continue
                parts = name.replace("\\", "/").split("/")
                if name.startswith("/") or ".." in parts:
                    continue
                total += m.file_size
                if total > MAX_ZIP_TOTAL:
                    raise Rejected(f"the .zip unpacks to more than {MAX_ZIP_TOTAL >> 20} MiB")
                target = os.path.join(dest, *parts)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with z.open(m) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise Rejected(f"the .zip could not be read: {e}")


def unpack(grade, root, scratch):
    """Makes the submission a folder; returns its path. Raises Rejected."""
    path = grade.submission
    grade.form = submission_form(path)
    if grade.form == "tree":
        return path
    dest = os.path.join(scratch, "submission")
    log = os.path.join(scratch, "unpack.log")
    if grade.form == "unknown":
        raise Rejected("it is neither a folder, a git bundle, a .zip nor a patch (a patch starts "
                       "with 'diff ' or '--- ' and is made with `git diff`)")
    if grade.form == "zip":
        unzip(path, dest)
        return dest
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


def _regular_inside(path, top):
    """True when @p path is a regular file (no link on the way) inside @p top."""
    return (os.path.realpath(path).startswith(os.path.realpath(top) + os.sep)
            and os.path.isfile(path) and not os.path.islink(path))


def locate(rel, sub_dir, all_student):
    """Where the student's @p rel is in @p sub_dir: (path, note). The file at
    its place wins; else a file of the same name at the top (a flat upload,
    when that name is unique among the student files) or at its place below
    one folder (a nested upload). path None with a note when it is unusable."""
    exact = os.path.join(sub_dir, rel)
    if os.path.lexists(exact):
        if os.path.islink(exact) or not _regular_inside(exact, sub_dir):
            return None, f"{rel} is a symbolic link (or lies under one), which is never followed"
        size = os.path.getsize(exact)
        if size > MAX_STUDENT_FILE:
            return None, (f"{rel} is {size} bytes, over the {MAX_STUDENT_FILE >> 20} MiB limit "
                          f"of a student file")
        return exact, ""
    base = os.path.basename(rel)
    candidates = []
    flat = os.path.join(sub_dir, base)
    if sum(1 for f in all_student if os.path.basename(f) == base) == 1 and os.path.isfile(flat):
        candidates.append((flat, f"{rel} was taken from {base} at the top of the submission "
                                 f"(uploaded without its folders)"))
    try:
        tops = sorted(os.listdir(sub_dir))
    except OSError:
        tops = []
    for top in tops:
        nested = os.path.join(sub_dir, top, rel)
        if top != ".git" and os.path.isfile(nested):
            candidates.append((nested, f"{rel} was taken from {top}/{rel} (the submission "
                                       f"is nested one folder deep)"))
    for path, note in candidates:
        if not _regular_inside(path, sub_dir):
            return None, f"{os.path.relpath(path, sub_dir)} is a symbolic link, never followed"
        if os.path.getsize(path) > MAX_STUDENT_FILE:
            return None, f"{os.path.relpath(path, sub_dir)} is over the size limit of a student file"
        return path, note
    return None, ""


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
        dest = os.path.join(tree, rel)
        src, note = locate(rel, sub_dir, grade.rubric.student_files)
        if src:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(src, dest)
            grade.taken.append(rel)
            if note:
                grade.notices.append(note)
            continue
        grade.missing.append(rel)
        grade.notices.append((note or f"{rel} is not in the submission") +
                             "; the starter's version was graded instead")
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
                    if a.read(MAX_STUDENT_FILE) != b.read(MAX_STUDENT_FILE):
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
