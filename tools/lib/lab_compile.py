"""Building a submission's tree in its jail and running its host tests:
the kernels first (the grader copies what boots right after), then the
rubric's other targets; the reasons a student reads when either fails.
"""

import os
import re
from typing import Any, Dict, Optional, Tuple

from . import lab_sandbox
from .lab_jail import Jail, copy_boot_files, limits_for
from .lab_submission import OUTPUT_TAIL_CHARS, read_text, tail

BUILD_OUTPUT = 2 << 20   # bytes of build output kept


CTEST_OUTPUT = 1 << 20   # bytes of host-test output kept


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


# A compiler needs a few hundred MB; one that reads without end (an
# #include of /dev/zero) stops here.
BUILD_MEMORY = 2 << 30


def limit_words(outcome: lab_sandbox.Outcome) -> str:
    """What a resource limit did to a command, for a student to read, or ''."""
    words = []
    if outcome.truncated:
        words.append(f"it printed {outcome.output_bytes} bytes, more than the grader keeps")
    if outcome.disk_full:
        words.append(lab_sandbox.disk_words())
    sig = outcome.limit_signal()
    if sig and not outcome.disk_full:
        words.append(f"a process was stopped by {sig}")
    return "; ".join(words)


def last_build_step(text: str) -> str:
    steps = re.findall(r"^\[\d+/\d+\] (.*)$", text, re.M)
    return steps[-1][:300] if steps else ""


def build(grade: Any, tree: str, jobs: int, jail: "Jail", logs: str) -> Optional[str]:
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
    if getattr(jail, "initrds", None):
        cmd.append(f"-DTOLL_PREBUILT_INITRDS={jail.initrds}")
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
    if status == 0 and ran >= item.min_tests and not out.truncated and not out.disk_full:
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
