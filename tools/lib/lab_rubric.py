"""A lab's rubric (labs/<dir>/rubric.toml), read with tomllib and checked.

The rubric names the student's files, the tests with their points, timeouts,
dependencies and the records each must produce, and the measurements the
student reports in the worksheet. The book's appendix "Grading" documents
every key; check() rejects anything else, so a typo cannot silently give
points away.
"""

import os
import shlex
import tomllib
from typing import Any, Dict, List, Set

from . import probes

# tools/run options the grader sets itself; a rubric may not.
RESERVED_RUN_OPTIONS = ("--nonce", "--build", "--json", "--timeout", "--interactive", "--gdb",
                        "--parse", "--quiet", "--max-output", "--kernel", "--expect-panic",
                        "--probe", "--symbols")

TOP_KEYS = {"lab", "title", "student_files", "worksheet", "build_timeout", "build_targets",
            "arches", "max_output", "tests", "measurements", "visibility"}
# The kernels a lab may need built (CMake's TOLL_ARCHES).
ARCHES = ("i386", "arm64")
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
TEST_KEYS = {"name", "points", "timeout", "ctest", "run", "pass", "done", "console", "panic",
             "depends_on", "covers", "min_tests", "description", "console_from",
             "visibility", "oracle", "probe"}
CONSOLE_FROM = ("nonce", "any")
MEASUREMENT_KEYS = {"name", "points", "timeout", "metric", "run", "tolerance", "depends_on",
                    "covers", "description", "visibility"}


class RubricError(Exception):
    """A rubric that cannot be graded with, and why."""


class Item:
    """A test or a measurement of the rubric (measurements have kind "measurement")."""

    def __init__(self, table: Dict[str, Any], kind: str) -> None:
        self.kind = kind  # "ctest", "run" or "measurement"
        self.name = table["name"]
        self.points = table.get("points", 0)
        self.timeout = table.get("timeout", 30)
        self.depends_on = list(table.get("depends_on", []))
        self.covers = table.get("covers", True)
        self.description = table.get("description", "")
        self.ctest = table.get("ctest")
        run = table.get("run", [])
        self.run = shlex.split(run) if isinstance(run, str) else list(run)
        self.expect_pass = list(table.get("pass", []))
        self.expect_done = table.get("done", kind == "run" and "panic" not in table)
        self.console = list(table.get("console", []))
        self.console_from = table.get("console_from", "nonce")
        self.panic = table.get("panic")
        self.min_tests = table.get("min_tests", 1)
        self.metric = table.get("metric")
        self.tolerance = table.get("tolerance", 0.0)
        self.visibility = table.get("visibility", "visible")
        # The grader's own check of the mechanism (lab_oracle.ORACLES).
        self.oracle = table.get("oracle")
        # A check through QEMU's gdb stub during the item's own boot
        # (tools/lib/probes.py), judged with the oracles.
        self.probe = table.get("probe")


class Rubric:
    def __init__(self, path: str, data: Dict[str, Any]) -> None:
        self.path = path
        self.dir = os.path.dirname(path)
        self.lab = data["lab"]
        self.title = data.get("title", self.lab)
        self.student_files = list(data["student_files"])
        self.worksheet = data.get("worksheet")
        self.build_timeout = data.get("build_timeout", 300)
        self.build_targets = list(data.get("build_targets", []))
        self.arches = list(data.get("arches", ["i386"]))
        self.max_output = data.get("max_output", 1 << 20)
        self.visibility = data.get("visibility", "visible")
        self.items = [Item(t, "ctest" if "ctest" in t else "run") for t in data.get("tests", [])]
        self.items += [Item(m, "measurement") for m in data.get("measurements", [])]

    @property
    def max_score(self) -> float:
        return sum(i.points for i in self.items)


def _check_keys(table: Dict[str, Any], allowed: Set[str], where: str) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise RubricError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")


def check(data: Dict[str, Any], where: str) -> None:
    """Raises RubricError unless @p data is a complete, consistent rubric."""
    _check_keys(data, TOP_KEYS, where)
    for key in ("lab", "student_files"):
        if key not in data:
            raise RubricError(f"{where}: missing '{key}'")
    if not data["student_files"]:
        raise RubricError(f"{where}: student_files is empty")
    arches = data.get("arches", ["i386"])
    if not isinstance(arches, list) or not arches or not set(arches) <= set(ARCHES):
        raise RubricError(f"{where}: arches must be a non-empty list of {', '.join(ARCHES)}")
    for f in data["student_files"]:
        if os.path.isabs(f) or ".." in f.split("/"):
            raise RubricError(f"{where}: student file {f!r} must be a relative path in the tree")
    for table in [data] + list(data.get("tests", [])) + list(data.get("measurements", [])):
        if table.get("visibility", "visible") not in VISIBILITIES:
            raise RubricError(f"{where}: visibility must be one of {', '.join(VISIBILITIES)}")
    seen = set()
    tables = [(t, "tests", TEST_KEYS) for t in data.get("tests", [])]
    tables += [(m, "measurements", MEASUREMENT_KEYS) for m in data.get("measurements", [])]
    if not tables:
        raise RubricError(f"{where}: no tests and no measurements")
    for table, section, keys in tables:
        name = table.get("name")
        here = f"{where}: [[{section}]] {name or '(no name)'}"
        _check_keys(table, keys, here)
        if not name:
            raise RubricError(f"{here}: missing 'name'")
        if name in seen:
            raise RubricError(f"{here}: a second item with this name")
        for dep in table.get("depends_on", []):
            if dep not in seen:
                raise RubricError(f"{here}: depends on {dep!r}, which is not an earlier item")
        seen.add(name)
        if not isinstance(table.get("points", 0), (int, float)) or table.get("points", 0) < 0:
            raise RubricError(f"{here}: points must be a number >= 0")
        if section == "tests" and ("ctest" in table) == ("run" in table):
            raise RubricError(f"{here}: give exactly one of 'ctest' (a regex) or 'run' (tools/run "
                              f"arguments)")
        if section == "measurements":
            if "metric" not in table or "run" not in table:
                raise RubricError(f"{here}: a measurement needs 'metric' and 'run'")
            if not data.get("worksheet"):
                raise RubricError(f"{here}: measurements need a 'worksheet' file")
        run = table.get("run", [])
        words = shlex.split(run) if isinstance(run, str) else run
        for w in words:
            if w.split("=")[0] in RESERVED_RUN_OPTIONS:
                raise RubricError(f"{here}: {w} is set by the grader, not the rubric")
        if "console" in table and table.get("console_from") not in CONSOLE_FROM:
            raise RubricError(
                f"{here}: 'console' needs console_from = \"nonce\" (only lines the test "
                f"framework printed with the run's nonce count) or console_from = \"any\" "
                f"(any code, the student's included, could have printed the line: say so)")
        if "probe" in table and (section != "tests" or "run" not in table
                                 or table["probe"] not in probes.PROBES):
            raise RubricError(f"{here}: 'probe' names one of {', '.join(sorted(probes.PROBES))} "
                              f"and applies to 'run' tests only")
        if section == "tests" and "ctest" in table and \
                not {"pass", "console", "panic"}.isdisjoint(table):
            raise RubricError(f"{here}: pass/console/panic apply to 'run' tests only")
    ws = data.get("worksheet")
    if ws and ws not in data["student_files"]:
        raise RubricError(f"{where}: the worksheet {ws} must be one of the student_files")


def load(path: str) -> Rubric:
    """Reads and checks the rubric at @p path."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise RubricError(f"{path}: {e}")
    check(data, path)
    return Rubric(path, data)


def find(root: str, lab: str) -> Rubric:
    """The rubric of lab @p lab under @p root/labs: the one whose `lab` key or
    folder name (with or without a `lab-`/`labN-` prefix) is @p lab."""
    labs_dir = os.path.join(root, "labs")
    candidates = []
    for d in sorted(os.listdir(labs_dir)) if os.path.isdir(labs_dir) else []:
        path = os.path.join(labs_dir, d, "rubric.toml")
        if not os.path.isfile(path):
            continue
        candidates.append(d)
        try:
            with open(path, "rb") as f:
                declared = tomllib.load(f).get("lab")
        except (OSError, tomllib.TOMLDecodeError):
            declared = None
        if lab in (declared, d) or d.split("-", 1)[-1] == lab:
            return load(path)
    raise RubricError(f"no rubric for lab {lab!r} under {labs_dir} "
                      f"(labs with a rubric: {', '.join(candidates) or 'none'})")


def all_rubrics(root: str) -> List[Rubric]:
    """Every labs/*/rubric.toml under @p root, loaded and checked."""
    labs_dir = os.path.join(root, "labs")
    found = []
    for d in sorted(os.listdir(labs_dir)) if os.path.isdir(labs_dir) else []:
        path = os.path.join(labs_dir, d, "rubric.toml")
        if os.path.isfile(path):
            found.append(load(path))
    return found
