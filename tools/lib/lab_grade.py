"""Grading one submission: assemble a tree, build it, run the rubric, score it.

The tree is the grader's own checkout with only the rubric's student files
taken from the submission, so a submission cannot change a test, the rubric,
the grader or the build. Every kernel run gets a fresh random nonce, and a
test passes only on records tagged with it (written by ktest, outside the
student's files). The steps live beside this file: lab_jail (where code
runs, the copies of what boots), lab_compile (the build and the host
tests) and lab_boot (a kernel run and its verdict).
"""

import os
import shutil
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from . import lab_regions, lab_safe, lab_sandbox
# The steps' names, also used through this module by tools/grade and the tests.
from .lab_boot import (PYTHON, boot, console_lines, grader_inputs, judge_measurement,  # noqa: F401
                       judge_run, reported_value)
from .lab_compile import (BUILD_MEMORY, build, last_build_step, limit_words,  # noqa: F401
                          needs_disk_image, run_ctest, tree_relative)
from .lab_jail import (BOOT_FILES, Jail, boot_file_for, copy_boot_files, limits_for,  # noqa: F401
                       sha256_of, tampering)
from .lab_submission import Rejected, assemble, read_text, tail, unpack  # noqa: F401

DISAGREE = "records disagree with the machine"


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
        self.probe: Optional[Dict[str, Any]] = None  # tools/run's probe verdict, if one ran


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
            r.probe = summary.get("probe")
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
    from . import lab_audit, lab_oracle, lab_package
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
            classroom = lab_package.classroom_problem(root, rubric.lab, sub_dir)
            if classroom:
                grade.hold.append(f"its Classroom workflow was changed: {classroom}")
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
