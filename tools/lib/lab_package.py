"""The Gradescope autograder package of a lab (tools/grade --package gradescope).

Gradescope unpacks the zip into /autograder/source, runs setup.sh there once
(as root, on its Ubuntu base image) to build the autograder image, then runs
run_autograder for every submission with the student's upload in
/autograder/submission, and shows /autograder/results/results.json. The zip
holds this checkout (the grader and the reference) under toll/, so the
students never see it: Gradescope keeps the source out of their reach.
"""

import importlib.machinery
import importlib.util
import json
import os
import re
import shlex
import stat
import zipfile
from typing import Any, List, Optional, Union

from . import lab_regions, lab_safe

SETUP = """#!/usr/bin/env bash
# setup.sh: Gradescope runs this once, as root, in /autograder/source, to make
# the autograder image for lab {lab} of Toll. It installs what grading needs
# (the GRADING list of toll/tools/deps) and builds the reference once, so that
# every submission's build finds a warm compiler cache.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
here=/autograder/source
dpkg --add-architecture i386
dpkg --add-architecture arm64
apt-get update
missing=""
for package in {packages}; do
    apt-get install -y --no-install-recommends "$package" || missing="$missing $package"
done
# Ubuntu keeps clang 14's runtime in libclang-common-14-dev.
if [[ " $missing " == *" libclang-rt-14-dev "* ]] &&
        apt-get install -y --no-install-recommends libclang-common-14-dev; then
    missing=${{missing/ libclang-rt-14-dev/}}
fi
# The grader needs Python 3.11 (tomllib); older releases have it as python3.11.
python=python3
if ! python3 -c 'import tomllib' 2>/dev/null; then
    apt-get install -y --no-install-recommends python3.11
    python=python3.11
fi
echo "$python" > "$here/python"
if [ -n "$missing" ]; then
    echo "setup.sh: these packages could not be installed:$missing" >&2
    exit 1
fi
"$python" "$here/toll/tools/grade" --lab {lab} --prepare --work /autograder/work \\
    --cache /autograder/cache
"""

RUN = """#!/usr/bin/env bash
# run_autograder: Gradescope runs this for every submission of lab {lab}.
# It grades /autograder/submission with the grader this package carries
# (nothing of the submission is ever run outside the sandbox) and the grader
# writes /autograder/results/results.json once, at the end
# (TOLL_AUTOGRADER_ROOT replaces /autograder, for testing the package).
# The whole script is one block, read by bash before any of it runs: a file
# changed under it cannot change what it does.
{{
root=${{TOLL_AUTOGRADER_ROOT:-/autograder}}
here="$root/source"
python=$(cat "$here/python" 2>/dev/null || echo python3)
mkdir -p "$root/results"
"$python" "$here/toll/tools/grade" --lab {lab} --autograder "$root" \\
    --work "${{TOLL_GRADE_WORK:-$root/work}}" --cache "${{TOLL_GRADE_CACHE:-$root/cache}}"
status=$?
if [ ! -s "$root/results/results.json" ]; then
    # The grader could not even start: a result with no score, saying so.
    cat > "$root/results/results.json" <<'EOF'
{{"output":
   "Grader error (please tell the staff; this is not a grade): the autograder did not run.",
 "tests": [],
 "extra_data": {{"grader_error": "run_autograder: tools/grade wrote no results"}}}}
EOF
fi
exit $status
}}
"""


def grading_packages(root: str) -> List[str]:
    """The GRADING list of tools/deps, read from the script itself."""
    path = os.path.join(root, "tools", "deps")
    loader = importlib.machinery.SourceFileLoader("toll_deps", path)
    spec = importlib.util.spec_from_loader("toll_deps", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return list(module.GRADING)


def _add(z: zipfile.ZipFile, name: str, text: Union[str, bytes], executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    mode = 0o755 if executable else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, text)


def write_gradescope(root: str, rubric: Any, out_zip: str) -> None:
    """Writes the autograder zip of @p rubric's lab to @p out_zip."""
    packages = " ".join(shlex.quote(p) for p in grading_packages(root))
    lab = shlex.quote(rubric.lab)
    with zipfile.ZipFile(out_zip, "w") as z:
        _add(z, "setup.sh", SETUP.format(lab=lab, packages=packages), True)
        _add(z, "run_autograder", RUN.format(lab=lab), True)
        for rel in lab_regions.source_files(root):
            path = os.path.join(root, rel)
            with open(path, "rb") as f:
                data = f.read()
            _add(z, "toll/" + rel, data, os.access(path, os.X_OK))


WORKFLOW = """# Grades lab {lab} on every push with the course's own grader: the
# grader is fetched from the instructor's repository at a pinned commit, and
# this repository is only the submission (its tools/ and tests are never
# run). The report is in the run's log and in the grade-report artifact.
# Written by tools/mklab.
name: grade lab {lab}
on: [push, workflow_dispatch]
env:
  GRADER_REPO: {repo}
  GRADER_COMMIT: {commit}
jobs:
  grade:
    runs-on: ubuntu-latest
    container: debian:12
    timeout-minutes: 30
    steps:
      - name: Install git and Python
        run: |
          apt-get update
          apt-get install -y --no-install-recommends git ca-certificates python3
      - uses: actions/checkout@v4
        with:
          path: submission
      - name: Fetch the course's grader at its pinned commit
        run: |
          git init -q /opt/toll-grader
          git -C /opt/toll-grader fetch -q --depth 1 "$GRADER_REPO" "$GRADER_COMMIT"
          git -C /opt/toll-grader checkout -q FETCH_HEAD
          test "$(git -C /opt/toll-grader rev-parse HEAD)" = "$GRADER_COMMIT"
      - name: Install Toll's dependencies
        run: python3 /opt/toll-grader/tools/deps
      - name: Grade
        run: |
          mkdir -p -m 0755 /var/tmp/toll-grade
          python3 /opt/toll-grader/tools/grade --lab {lab} submission --out grade-report \\
              --work /var/tmp/toll-grade
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: grade-report
          path: grade-report
"""
WORKFLOW_PATH = ".github/workflows/grade.yml"
HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def grader_origin(root: str) -> "tuple[str, str]":
    """(repository URL, commit) of the instructor's grader: TOLL_GRADER_REPO
    and TOLL_GRADER_COMMIT, else the checkout's origin and HEAD."""
    import subprocess

    def git(*args: str) -> str:
        r = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    repo = os.environ.get("TOLL_GRADER_REPO") or git("remote", "get-url", "origin")
    commit = os.environ.get("TOLL_GRADER_COMMIT") or git("rev-parse", "HEAD")
    return repo or "SET-THE-INSTRUCTORS-GRADER-REPOSITORY-HERE", commit or "0" * 40


def _known_commit(root: str, commit: str) -> Optional[bool]:
    """True when @p commit is HEAD of the grader's checkout @p root or one
    of its ancestors; None when @p root is no git checkout (a package)."""
    import subprocess
    if not os.path.isdir(os.path.join(root, ".git")) and \
            not os.path.isfile(os.path.join(root, ".git")):
        return None
    r = subprocess.run(["git", "-C", root, "merge-base", "--is-ancestor", commit, "HEAD"],
                       capture_output=True)
    return r.returncode == 0


def classroom_problem(root: str, lab: str, folder: str) -> str:
    """What is wrong with the Classroom workflow in the submission @p folder,
    or '' (none there, or the one tools/mklab writes for @p lab, pinned to a
    commit of the course's grader): a changed workflow means that the grade
    GitHub showed for it was not the course's grader's."""
    path = os.path.join(folder, WORKFLOW_PATH)
    if not os.path.lexists(path):
        return ""
    try:
        text = lab_safe.read_regular(path, 1 << 20, top=folder).decode("utf-8", "replace")
    except (OSError, lab_safe.Unsafe) as e:
        return f"{WORKFLOW_PATH} cannot be read as a regular file ({e})"
    repo, _ = grader_origin(root)
    pin = re.search(r"^  GRADER_COMMIT: ([0-9a-f]{40})$", text, re.M)
    commit = pin.group(1) if pin else ""
    if text != WORKFLOW.format(lab=lab, repo=json.dumps(repo), commit=commit):
        return (f"{WORKFLOW_PATH} is not the workflow the course gave for lab {lab} (the "
                f"grader it runs, or how, was changed)")
    if _known_commit(root, commit) is False:
        return (f"{WORKFLOW_PATH} fetches the grader at {commit}, which is not a commit of "
                f"the course's grader")
    return ""


def write_classroom_workflow(starter: str, lab: str, root: str = HERE) -> str:
    """Puts the GitHub Classroom workflow of @p lab into the starter tree,
    pinned to the grader of the checkout at @p root."""
    repo, commit = grader_origin(root)
    path = os.path.join(starter, WORKFLOW_PATH)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(WORKFLOW.format(lab=lab, repo=json.dumps(repo), commit=commit))
    return WORKFLOW_PATH
