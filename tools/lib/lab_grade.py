"""Grading one submission: assemble a tree, build it, run the rubric, score it.

The tree is the grader's own checkout with only the rubric's student files
taken from the submission, so a submission cannot change a test, the rubric,
the grader or the build. Every kernel run gets a fresh random nonce, and a
test passes only on records tagged with it (written by ktest, outside the
student's files).
"""

import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import time
import tomllib
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from . import lab_regions, lab_safe, lab_sandbox
from .lab_submission import (MAX_STUDENT_FILE, OUTPUT_TAIL_CHARS, Rejected, assemble, read_text,
                             tail, unpack)

# What tools/run boots, by (arch, granule, boot): the files the grader copies
# out of the build right after the kernels are built, before any of the
# student's host code runs, and hands to every boot read-only.
BOOT_FILES = {
    ("i386", None, "multiboot"): "i386/arch/i386/toll-i386.elf",
    ("i386", None, "disk"): "i386/arch/i386/boot/bootsect/toll-disk.img",
    ("arm64", "4K", "multiboot"): "arm64/arch/arm64/toll-arm64.elf",
    ("arm64", "16K", "multiboot"): "arm64-16k/arch/arm64/toll-arm64.elf",
}
DISAGREE = "records disagree with the machine"

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

    def __init__(self, name: str, max_score: float, kind: str) -> None:
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

    def __init__(self, rubric: Any, submission: str) -> None:
        self.rubric, self.submission = rubric, submission
        self.form: Optional[str] = None  # tree, bundle or patch
        self.taken: List[str] = []  # student files taken from the submission
        self.missing: List[str] = []  # student files the submission lacks (starter used)
        self.ignored: List[str] = []  # other files it changed, replaced by the grader's
        self.build = Result("build", 0, "build")
        self.results: List[Result] = []
        self.notices: List[str] = []  # why a student file was or was not used, in words
        self.error: Optional[str] = None  # a problem of the grader, not of the submission
        self.seconds = 0.0
        self.protection = ""        # the sandbox in force (Sandbox.describe())
        self.leftovers = 0          # processes killed after a step had ended
        self.audit: Any = None  # lab_audit.Audit, when the build worked
        # lab_batch.fingerprint() of the student's files
        self.fingerprint: Set[Tuple[str, str]] = set()
        self.empty = False          # the submission holds no file at all
        self.texts: Dict[str, str] = {}  # student file -> the text graded (regions spliced)
        self.submitted: Dict[str, str] = {}  # student file -> its text as submitted
        self.tampered = ""          # what changed in the build after the grader hashed it
        self.hold: List[str] = []  # why a person must look before the grade counts
        self.disagree: List[str] = []  # items whose records the grader's own check contradicts

    @property
    def score(self) -> float:
        if self.tampered:
            return 0
        return sum(r.score for r in self.results)

    @property
    def max_score(self) -> float:
        return self.rubric.max_score


def tree_relative(text: str, tree: str) -> str:
    """@p text with the paths of files in @p tree made relative to it: a
    compile without ccache names a file by its absolute path (in __FILE__ and
    in compiler messages), one through ccache by a path relative to its build
    folder (../../src/...). Both read src/... here, so the cache changes no
    reason a student sees."""
    text = text.replace(tree + "/", "")

    def strip(m: "re.Match[str]") -> str:
        rel = m.group(2)
        return rel if os.path.exists(os.path.join(tree, rel)) else m.group(0)
    return re.sub(r"(?<![\w./])((?:\.\./)+)([\w+-][\w.+/-]*)", strip, text)


def needs_disk_image(rubric: Any) -> bool:
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
    tools. @p trusted marks the grader's own builds, the only ones allowed
    to write a compiler cache. @p private is a folder of the grader's that
    no step can write (the build's copies, read-only, go there)."""

    def __init__(self, sandbox: lab_sandbox.Sandbox, work: str, root: str, tools: Any = None,
                 uid: Optional[int] = None, trusted: bool = False,
                 private: Optional[str] = None, cache_dir: Optional[str] = None,
                 store: Optional[str] = None, store_writable: bool = False) -> None:
        self.sandbox, self.work, self.root, self.tools = sandbox, work, root, tools
        self.uid, self.trusted = uid, trusted
        self.private = private
        self.cache_dir = cache_dir if cache_dir is not None else (
            tools.cache_dir if tools else None)
        self.store, self.store_writable = store, store_writable
        self.frozen = False       # the build is over: the tree is read-only from now on
        # tree-relative path -> (grader's copy, sha256)
        self.boot_copies: Dict[str, Tuple[str, str]] = {}
        self.tree: Optional[str] = None

    @property
    def home(self) -> str:
        """HOME and TMPDIR of the steps: the private /tmp under bubblewrap,
        a folder of this grading's own without it."""
        private_tmp = self.sandbox.bwrap or getattr(self.sandbox, "hides", False)
        return "/tmp" if private_tmp else os.path.join(self.work, "home")

    def env(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        env = lab_sandbox.minimal_env(extra, home=self.home)
        if self.tools:
            env = self.tools.env(env, self.cache_dir, self.store, self.store_writable)
            if self.cache_dir and not self.trusted:
                # Student builds read the cache but never write it, so no
                # submission can plant objects for the next one.
                env.update(CCACHE_READONLY="1",
                           CCACHE_TEMPDIR=os.path.join(self.work, "ccache-tmp"))
        return env

    def readable(self) -> List[str]:
        paths = [os.path.join(self.root, "tools")]
        if self.cache_dir and not self.trusted:
            paths.append(self.cache_dir)
        if self.store and not self.store_writable:
            paths.append(self.store)
        return paths

    def writable(self) -> List[str]:
        paths = [self.work]
        if self.cache_dir and self.trusted:
            paths.append(self.cache_dir)
        if self.store and self.store_writable:
            paths.append(self.store)
        return paths

    def overlays(self, writable_inside: Sequence[str] = ()) -> List[Tuple[str, str, str]]:
        """Mounts laid over the scratch folder once the build is over: the
        tree read-only, the grader's copies of what boots, and @p
        writable_inside (folders of the scratch folder a step may still write)."""
        if not self.frozen or not (self.sandbox.bwrap or getattr(self.sandbox, "hides", False)):
            return []
        assert self.tree is not None
        mounts = [("ro", self.tree, self.tree)]
        for path in writable_inside:
            mounts.append(("rw", path, path))
        return mounts

    def run(self, cmd: Sequence[str], log: str, timeout: float, limits: lab_sandbox.Limits,
            cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
            writable_inside: Sequence[str] = (), result_limit: int = 0,
            stdin_data: bytes = b"") -> lab_sandbox.Outcome:
        readable = self.readable()
        if self.frozen and self.private and os.path.isdir(self.boot_dir):
            readable.append(self.boot_dir)
        return self.sandbox.run(cmd, log, timeout, limits, writable=self.writable(),
                                readable=readable, cwd=cwd or self.work,
                                env=env or self.env(), uid=self.uid,
                                overlays=self.overlays(writable_inside),
                                result_limit=result_limit, watch=self.work,
                                stdin_data=stdin_data)

    @property
    def boot_dir(self) -> str:
        """The grader's read-only copies of what boots (root's, readable by
        this grading's uid alone): beside the private folder."""
        assert self.private is not None
        return os.path.join(os.path.dirname(self.private), "boot")

    def freeze(self, tree: str) -> None:
        """Ends the build: from now on no step can change the tree (its files
        go back to the grader's user; under bubblewrap it is also mounted
        read-only)."""
        self.tree, self.frozen = tree, True
        if self.uid is None:
            return
        for base, dirs, files in os.walk(tree):
            for name in [base] + [os.path.join(base, n) for n in dirs + files]:
                try:
                    os.lchown(name, 0, 0)
                except OSError:
                    pass

    def writable_folder(self, name: str) -> str:
        """A fresh folder of the scratch folder that a step after the build
        may write (its own output: ctest's Testing, a run's temporary files)."""
        return lab_safe.fresh_folder(os.path.join(self.work, name), self.uid)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_boot_files(jail: "Jail", bdir: str) -> None:
    """Copies what the rubric's runs boot out of @p bdir into the grader's
    own folder, with their hashes: every boot uses these copies."""
    dest = jail.boot_dir
    os.makedirs(dest, exist_ok=True)
    if jail.uid is not None:
        os.chown(dest, 0, jail.uid)
    os.chmod(dest, 0o750)
    for rel in sorted(set(BOOT_FILES.values())):
        src = os.path.join(bdir, rel)
        if not os.path.lexists(src):
            continue
        data = lab_safe.read_regular(src, 256 << 20, top=bdir, what=rel)
        copy = os.path.join(dest, rel.replace("/", "_"))
        lab_safe.write_private(copy, data)
        os.chmod(copy, 0o444)
        jail.boot_copies[rel] = (copy, sha256_of(data))


def tampering(jail: "Jail", bdir: str) -> str:
    """'' when the build's boot files and the grader's copies still hash as
    they did right after the kernels were built, else what changed."""
    changed = []
    for rel, (copy, digest) in sorted(jail.boot_copies.items()):
        for what, path, top in (("the grader's copy of", copy, None), ("the build's", rel, bdir)):
            full = os.path.join(top, path) if top else path
            try:
                now = sha256_of(lab_safe.read_regular(full, 256 << 20, top=top))
            except (OSError, lab_safe.Unsafe):
                now = ""
            if now != digest:
                changed.append(f"{what} {rel}")
    return ", ".join(changed)


def boot_file_for(run_args: Optional[Sequence[str]]) -> Optional[str]:
    """The BOOT_FILES key of a tools/run argument list."""
    args = list(run_args or [])

    def value(flag: str, default: str) -> str:
        for i, a in enumerate(args):
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
        return default
    arch = value("--arch", "i386")
    emu = value("--emu", "qemu")
    boot = value("--boot", "disk" if emu == "bochs" else "multiboot")
    granule = value("--granule", "4K") if arch == "arm64" else None
    return BOOT_FILES.get((arch, granule, boot))


def limits_for(seconds: float, output: int, memory: int = 3 << 30) -> lab_sandbox.Limits:
    return lab_sandbox.Limits(cpu_seconds=int(seconds) + 30, output_bytes=output,
                              memory_bytes=memory)


# A compiler needs a few hundred MB; one that reads without end (an
# #include of /dev/zero) stops here.
BUILD_MEMORY = 2 << 30


def limit_words(outcome: lab_sandbox.Outcome) -> str:
    """What a resource limit did to a command, for a student to read, or ''."""
    words = []
    if outcome.truncated:
        words.append(f"it printed {outcome.output_bytes} bytes, more than the grader keeps")
    sig = outcome.limit_signal()
    if sig:
        words.append(f"a process was stopped by {sig}")
    return "; ".join(words)


def last_build_step(text: str) -> str:
    steps = re.findall(r"^\[\d+/\d+\] (.*)$", text, re.M)
    return steps[-1][:300] if steps else ""


def build(grade: Grade, tree: str, jobs: int, jail: "Jail", logs: str) -> Optional[str]:
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
    # The kernels first, before any host program of the student's runs (test
    # discovery runs them at build time): the grader copies what boots right
    # after, so no later step can change it.
    targets = list(grade.rubric.build_targets)
    kernels = [t for t in targets if t.startswith("kernel-")]
    if not targets:
        kernels = [f"kernel-{a}" for a in getattr(grade.rubric, "arches", ["i386"])
                   if a == "i386"]
    phases = [kernels, [t for t in targets if t not in kernels] if targets else []]
    if targets and not phases[1]:
        phases = phases[:1]
    if not kernels:
        phases = phases[1:]
    for n, phase in enumerate(phases):
        if status != 0:
            break
        cmd = ["cmake", "--build", bdir, "-j", str(jobs)]
        for t in phase:
            cmd += ["--target", t]
        step_log = f"{log}.{n}"
        step = jail.run(cmd, step_log, max(1, grade.rubric.build_timeout - secs), limits,
                        cwd=tree, env=env)
        status = step.status
        secs += step.seconds
        text += read_text(step_log)
        os.unlink(step_log)
        outcomes.append(step)
        if status == 0 and n == 0 and kernels and jail.private:
            copy_boot_files(jail, bdir)
    if status == 0 and jail.private and not kernels:
        copy_boot_files(jail, bdir)
    with open(log, "w", encoding="utf-8") as f:
        f.write(text)
    os.unlink(log + ".configure")
    r.seconds = secs
    grade.leftovers += sum(o.leftovers for o in outcomes)
    if any(o.disk_full for o in outcomes):
        status = status or 1
    if status == 0:
        r.status, r.reason = "passed", "the submission builds"
        return bdir
    r.status = "failed"
    if status is None:
        last = last_build_step(text)
        r.reason = (f"the build did not finish within {grade.rubric.build_timeout} s" +
                    (f"; the last step started was: {last}" if last else "") +
                    "; every process it started was stopped")
    else:
        r.reason = "the submission does not build"
    limited = "; ".join(filter(None, (limit_words(o) for o in outcomes)))
    if any(o.disk_full for o in outcomes):
        limited = "; ".join(filter(None, [limited, f"the scratch folder grew past "
                                          f"{lab_sandbox.SCRATCH_BYTES >> 20} MiB"]))
    if limited:
        r.reason += f" ({limited})"
    errors = [i for i, line in enumerate(text.splitlines()) if re.search(r"\berror\b", line)]
    lines = text.splitlines()
    if errors:
        at = errors[0]
        r.output = "\n".join(lines[max(0, at - 3):at + 25])[:OUTPUT_TAIL_CHARS]
    else:
        r.output = tail(text)
    r.output = tree_relative(r.output, tree)
    return None


def run_ctest(item: Any, bdir: str, logs: str, jail: "Jail",
              extra_env: Optional[Dict[str, str]] = None,
              tag: str = "") -> Tuple[bool, str, str, float]:
    """Runs @p item's host tests; @p extra_env is added to the tests'
    environment and @p tag to the names of the log and the scratch folder."""
    log = os.path.join(logs, f"{item.name}{tag}.log")
    cmd = ["ctest", "--test-dir", bdir, "-R", item.ctest, "--no-tests=error",
           "--timeout", str(item.timeout), "--output-on-failure"]
    testing = jail.writable_folder(f"ctest-{item.name}{tag}")
    cmd += ["--output-log", os.path.join(testing, "ctest.log")]
    scratch = os.path.join(bdir, "Testing")
    out = jail.run(cmd, log, item.timeout + 30, limits_for(item.timeout, CTEST_OUTPUT), cwd=bdir,
                   env=jail.env(extra_env) if extra_env else None,
                   writable_inside=[testing] + ([scratch] if os.path.isdir(scratch) else []))
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
        return (False, f"only {ran} host test(s) matched; the rubric expects {item.min_tests}",
                text, secs)
    if status == 0:
        return False, f"the host tests' output was cut{limited}", text, secs
    timeouts = "***Timeout" in text
    reason = "host test(s) failed" + (" (stopped at the time limit: an endless loop?)"
                                      if timeouts else "")
    failed = re.findall(r"^\s*\d+ - (\S.*?) \(", text, re.M)
    if failed:
        reason += ": " + "; ".join(failed[:5])
    return False, reason + limited, text, secs


# In a rubric's run arguments: a number from 1 to 255 that the grader draws
# for each run, different from every other one drawn for that run (inputs
# only the grader knows: a test program checks what it was given).
RANDOM_BYTE = "{random_byte}"


def grader_inputs(args: Sequence[str]) -> List[str]:
    """@p args with each RANDOM_BYTE replaced by a fresh, distinct number."""
    drawn: Set[int] = set()
    out = []
    for a in args:
        while RANDOM_BYTE in a:
            value = secrets.randbelow(255) + 1
            if value not in drawn:
                drawn.add(value)
                a = a.replace(RANDOM_BYTE, str(value), 1)
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


def console_lines(console: str, item: Any, nonce: Optional[str]) -> List[str]:
    """The console lines @p item's patterns may match: every line when the
    rubric says console_from = "any", else only those the test framework
    printed with this run's nonce (the prefix removed)."""
    lines = console.replace("\r", "").splitlines()
    if item.console_from == "any":
        return lines
    prefix = f"@{nonce} "
    return [line[len(prefix):] for line in lines if nonce and line.startswith(prefix)]


def reported_value(grade: Grade, rubric: Any, name: str) -> Tuple[Optional[float], str]:
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


def judge_measurement(item: Any, summary: Dict[str, Any], grade: Grade, rubric: Any,
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


def run_items(grade: Grade, tree: str, bdir: Optional[str], logs: str, jail: "Jail") -> None:
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
        ok: Optional[bool]
        if item.kind == "ctest":
            ok, r.reason, text, r.seconds = run_ctest(item, bdir, logs, jail)
            r.output = tail(text)
        else:
            summary, console, r.seconds = boot(item, bdir, logs, rubric.max_output, jail)
            if item.kind == "run":
                ok, r.reason = judge_run(item, summary, console, rubric.max_output)
            else:
                ok, r.reason = judge_measurement(item, summary, grade, rubric, rubric.max_output)
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


def student_fingerprint(grade: Grade, tree: str) -> Set[Tuple[str, str]]:
    """The similarity fingerprint of the student's files as submitted."""
    from . import lab_batch
    texts = {}
    for rel in grade.taken:
        if rel == grade.rubric.worksheet:
            continue  # numbers every correct worksheet shares
        texts[rel] = grade.submitted.get(rel, "")
    return lab_batch.fingerprint(texts, grade.rubric.lab)


def grade_submission(rubric: Any, submission: str, root: str, files: Sequence[str], work: str,
                     logs: str, jail: Jail, jobs: int = 2, keep: bool = False,
                     audit_reference: Optional[Dict[str, Any]] = None) -> Grade:
    """Grades @p submission against @p rubric; @p files are the checkout's files.
    @p work is a folder of the grader's (its scratch slot): the submission is
    unpacked in work/private, which no step can see, and the tree is built
    in work/scratch, the jail's only writable folder. The build log and each
    run's console go to @p logs, which the jail cannot see. @p
    audit_reference is what lab_audit found in the reference's objects
    (None: no audit)."""
    from . import lab_audit, lab_oracle
    grade = Grade(rubric, submission)
    grade.protection = jail.sandbox.describe()
    start = time.monotonic()
    private = os.path.join(work, "private")
    os.makedirs(private, mode=0o700, exist_ok=True)
    os.chmod(private, 0o700)
    scratch = jail.work
    os.makedirs(scratch, exist_ok=True)
    jail.private = private
    tree = os.path.join(scratch, "tree")
    os.makedirs(logs, exist_ok=True)
    try:
        try:
            sub_dir = unpack(grade, root, private)
        except (Rejected, lab_regions.RegionError, OSError) as e:
            grade.build.status = "failed"
            grade.build.reason = f"the submission could not be read: {e}"
            grade.notices.append("none of your files were used: " + grade.build.reason)
            bdir = None
        else:
            assemble(grade, root, files, sub_dir, tree)
            grade.fingerprint = student_fingerprint(grade, tree)
            bdir = None
            if grade.empty:
                grade.build.status = "failed"
                grade.build.reason = ("the submission is empty: it holds no file, so nothing "
                                      "was built or run")
                grade.notices.append(grade.build.reason)
            else:
                os.makedirs(os.path.join(scratch, "home"), exist_ok=True)
                jail.sandbox.hand_over(scratch, jail.uid)
                bdir = build(grade, tree, jobs, jail, logs)
        if bdir:
            # The build ran student code (test discovery): whatever it left
            # at Testing is replaced, never followed.
            jail.freeze(tree)
            lab_safe.fresh_folder(os.path.join(bdir, "Testing"), jail.uid)
            if audit_reference is not None:
                grade.audit = lab_audit.audit_build(grade, tree, bdir, jail, audit_reference,
                                                    root, logs)
            grade.hold = lab_audit.hold_reasons(grade, root)
        run_items(grade, tree, bdir, logs, jail)
        if bdir:
            lab_oracle.check(grade, tree, bdir, logs, jail)
            grade.tampered = tampering(jail, bdir)
            if grade.tampered:
                for r in grade.results:
                    r.score = 0
                    if r.status == "passed":
                        r.status = "failed"
                        r.reason = "tampering: " + grade.tampered + " changed after the build"
    except lab_safe.SetupProblem as e:
        grade.error = f"the grader's setup is at fault (tell the instructor): {e}"
    except Exception as e:  # the grader's own failure must not look like a score
        grade.error = f"{type(e).__name__}: {e}"
        sys.stderr.write(f"tools/grade: internal error on {submission}: {grade.error}\n")
    finally:
        grade.seconds = time.monotonic() - start
        if jail.uid is not None:
            grade.leftovers += lab_sandbox.kill_user(jail.uid)
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.rmtree(private, ignore_errors=True)
            shutil.rmtree(jail.boot_dir, ignore_errors=True)
    return grade
