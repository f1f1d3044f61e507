#!/usr/bin/python3
"""Checks that every lab is a thinking lab, as the course promises.

For each labs/<dir>/ with a rubric, its handout, rubric, worksheet and
starter must have:

* a "Learning goals" section with a list, and a "Background" section that
  links (:ref:) into a chapter of the book;
* at least one command the build runs (``.. command::`` with ``:run:``,
  executed by the ctest test book.commands);
* a "Grading" section whose ``.. lab-grading::`` names this lab's rubric and
  gives at least one hand-marked written question with its points;
* for each hand-marked key, a written question in the handout (the key as a
  definition term) that asks why, and the key in the reference worksheet's
  [answers] and, ready to fill in, in the starter's (as tools/mklab writes it);
* every number of the worksheet's [measurements] checked by the grader (a
  rubric [[measurements]] item or a [[check]]/[[ratio]] of checks.toml),
  every checked number present in the starter's worksheet uncommented, and a
  checks.toml used by a ctest test and asking for the same written answers,
  whose minimum length the grading statement states.

Exit status 0 when every lab passes, 1 otherwise, each problem named.
With --self-test, plants one defect of each kind in a copy of a lab and
requires each to be found.
"""

import argparse
import glob
import os
import re
import shutil
import sys
import tempfile
import tomllib

from lib import lab_regions, lab_rubric  # tools/lib, through PYTHONPATH=tools (ctest sets it)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def sections(text):
    """{title: body} of the handout's second-level sections (underlined with -)."""
    lines = text.splitlines()
    found, title, body = {}, None, []
    for i, line in enumerate(lines):
        if (i + 1 < len(lines) and line.strip() and re.fullmatch(r"-{3,}", lines[i + 1])
                and len(lines[i + 1]) >= len(line.rstrip())):
            if title:
                found[title] = "\n".join(body)
            title, body = line.strip(), []
        elif title is not None and not re.fullmatch(r"-{3,}", line):
            body.append(line)
    if title:
        found[title] = "\n".join(body)
    return found


def chapter_labels(root):
    labels = set()
    for path in glob.glob(os.path.join(root, "book", "chapters", "*.rst")):
        with open(path) as f:
            labels.update(re.findall(r"^\.\. _([\w-]+):\s*$", f.read(), re.M))
    return labels


def grading_rows(text):
    """(rubric argument, [(key, points, text)]) of the handout's lab-grading directive."""
    m = re.search(r"^\.\. lab-grading::[ \t]*(\S+)[ \t]*\n((?:[ \t]*\n|[ \t]+\S.*\n?)*)", text,
                  re.M)
    if not m:
        return None, []
    rows = []
    for line in m.group(2).splitlines():
        if line.strip():
            parts = [p.strip() for p in line.split("|", 2)]
            if len(parts) == 3 and parts[1].isdigit():
                rows.append((parts[0], int(parts[1]), parts[2]))
    return m.group(1), rows


def question(text, key):
    """The text of the written question defined by ``key`` (a definition
    term at the start of a line, its body indented below), or None."""
    m = re.search(r"^``" + re.escape(key) + r"``[ \t]*\n((?:[ \t]+\S.*\n?)+)", text, re.M)
    return m.group(1) if m else None


def load_toml(text, where, problems):
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        problems.append(f"{where}: not TOML: {e}")
        return {}


def check_lab(root, rubric, labels, cmake_text):
    """The problems of one lab, in words."""
    where = os.path.relpath(rubric.dir, root)
    problems = []
    say = lambda what: problems.append(f"{where}: {what}")  # noqa: E731
    try:
        with open(os.path.join(rubric.dir, "handout.rst")) as f:
            text = f.read()
    except OSError as e:
        return [f"{where}: no handout ({e})"]
    parts = sections(text)
    goals = parts.get("Learning goals", "")
    if not re.search(r"^\* \S", goals, re.M):
        say("handout: no 'Learning goals' section listing the goals")
    refs = re.findall(r":ref:`(?:[^`<]*<)?([\w-]+)>?`", parts.get("Background", ""))
    if not set(refs) & labels:
        say("handout: no 'Background' section linking (:ref:) into a chapter")
    if not re.search(r"^\.\. command::[ \t]*\n(?:[ \t]+:[\w]+:.*\n)*[ \t]+:run:", text, re.M):
        say("handout: no command marked :run: (book.commands runs those)")
    target, rows = grading_rows(parts.get("Grading", ""))
    if target != os.path.relpath(rubric.path, root):
        say(f"handout: the Grading section's lab-grading directive names {target}, not "
            f"{os.path.relpath(rubric.path, root)}")
    hand = [k for k, _, _ in rows]
    if not hand:
        say("handout: the grading statement has no hand-marked written question")
    for key, points, _ in rows:
        body = question(text, key)
        if body is None:
            say(f"handout: the hand-marked '{key}' has no written question (``{key}`` as a "
                f"definition term)")
        elif not re.search(r"\bwhy\b", body, re.I):
            say(f"handout: the written question '{key}' does not ask why")
        if points <= 0:
            say(f"handout: the written question '{key}' carries no points")
    if not rubric.worksheet:
        say("rubric: no worksheet")
        return problems
    sheet_path = os.path.join(root, rubric.worksheet)
    with open(sheet_path) as f:
        sheet_text = f.read()
    sheet = load_toml(sheet_text, rubric.worksheet, problems)
    regions = [r for r in lab_regions.parse_regions(rubric.worksheet, sheet_text)
               if r.lab == rubric.lab]
    starter = load_toml(lab_regions.stub_text(sheet_text, regions),
                        f"{rubric.worksheet} (starter)", problems)
    answers = set(sheet.get("answers", {}))
    if answers != set(hand):
        say(f"worksheet [answers] {sorted(answers)} differ from the hand-marked questions "
            f"{sorted(hand)}")
    missing = set(hand) - set(starter.get("answers", {}))
    if missing:
        say(f"the starter's worksheet lacks the answer keys {sorted(missing)}")
    checked = {i.name for i in rubric.items if i.kind == "measurement"}
    checks_path = os.path.join(rubric.dir, "checks.toml")
    if os.path.exists(checks_path):
        with open(checks_path, "rb") as f:
            checks = tomllib.load(f)
        checked |= {c["name"] for c in checks.get("check", []) + checks.get("ratio", [])}
        required = set(checks.get("answers", {}).get("required", []))
        if required != set(hand):
            say(f"checks.toml requires the answers {sorted(required)}, the handout marks "
                f"{sorted(hand)}")
        if os.path.relpath(checks_path, root) not in cmake_text:
            say(f"no ctest test uses {os.path.relpath(checks_path, root)}")
        if not any(i.kind == "ctest" and i.covers for i in rubric.items):
            say("rubric: no item runs the worksheet's ctest test")
        words = checks.get("answers", {}).get("min_words")
        if words and not re.search(rf"at least\s+{words}\s+words", parts.get("Grading", "")):
            say(f"handout: the Grading section does not say that the answers need at least "
                f"{words} words for the worksheet's points")
    reported = set(sheet.get("measurements", {}))
    if reported - checked:
        say(f"worksheet numbers nothing checks: {sorted(reported - checked)}")
    if checked - reported:
        say(f"checked numbers missing from the worksheet: {sorted(checked - reported)}")
    blank = checked - set(starter.get("measurements", {}))
    if blank:
        say(f"the starter's worksheet lacks the keys {sorted(blank)} (commented out or "
            f"missing: not ready to fill in)")
    return problems


def check_all(root, quiet=False):
    labels = chapter_labels(root)
    cmake_text = ""
    for path in glob.glob(os.path.join(root, "tests", "*.cmake")):
        with open(path) as f:
            cmake_text += f.read()
    problems = []
    rubrics = lab_rubric.all_rubrics(root)
    for rubric in rubrics:
        mine = check_lab(root, rubric, labels, cmake_text)
        problems += mine
        if not mine and not quiet:
            print(f"check_handouts: {os.path.relpath(rubric.dir, root)}: ok")
    return rubrics, problems


# Each planted defect (a change to the copied lab's files: every match of
# the patterns marked "all", else the first) and words of the problem it
# must cause.
PLANTS = [
    ("handout.rst", r"\nLearning goals\n-+\n", "\nGoals\n-----\n", "Learning goals"),
    ("handout.rst", r":ref:`", ":doc:`", "Background", "all"),
    ("handout.rst", r":run:", ":norun:", "marked :run:", "all"),
    ("handout.rst", r"(?i)\bwhy\b", "how", "does not ask why", "all"),
    ("handout.rst", r"(?m)^(\.\. lab-grading::.*\n\n)[ \t]+\S[^|\n]*\|", r"\1   renamed |",
     "differ from the hand-marked"),
    ("results.toml", r"(?m)^# ([a-z0-9_]+ = 0)", r"# # \1", "not ready to fill in"),
    ("results.toml", r"(?m)^(\[measurements\]\n(?:#.*\n)*)", r"\1extra_number = 1\n",
     "nothing checks"),
    ("handout.rst", r"at least (\d+) words", r"at least 1\1 words", "at least"),
]


def self_test(lab_dir):
    """Copies the repository's labs, book chapters and tests/*.cmake into a
    scratch tree, plants each defect in lab @p lab_dir and requires it found."""
    failures = 0
    for i, (name, pattern, repl, words, *every) in enumerate(PLANTS):
        scratch = tempfile.mkdtemp(prefix="check-handouts-")
        try:
            shutil.copytree(os.path.join(ROOT, "labs"), os.path.join(scratch, "labs"))
            shutil.copytree(os.path.join(ROOT, "book", "chapters"),
                            os.path.join(scratch, "book", "chapters"))
            os.makedirs(os.path.join(scratch, "tests"))
            for path in glob.glob(os.path.join(ROOT, "tests", "*.cmake")):
                shutil.copy(path, os.path.join(scratch, "tests"))
            path = os.path.join(scratch, "labs", lab_dir, name)
            with open(path) as f:
                text = f.read()
            changed = re.sub(pattern, repl, text, count=0 if every else 1)
            if changed == text:
                print(f"check_handouts: FAIL self-test {i}: the plant {pattern!r} matched "
                      f"nothing in {name}")
                failures += 1
                continue
            with open(path, "w") as f:
                f.write(changed)
            _, problems = check_all(scratch, quiet=True)
            if not any(words in p and f"labs/{lab_dir}" in p for p in problems):
                print(f"check_handouts: FAIL self-test {i}: planting {pattern!r} in {name} "
                      f"was not found (wanted {words!r}); problems: {problems}")
                failures += 1
            else:
                print(f"check_handouts: self-test {i}: found ({words})")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--self-test", metavar="LAB_DIR", nargs="?", const="lab-superpages",
                   help="plant defects in a copy of this lab (default lab-superpages)")
    args = p.parse_args(argv)
    if args.self_test:
        return self_test(args.self_test)
    rubrics, problems = check_all(ROOT)
    for problem in problems:
        print(f"check_handouts: FAIL {problem}")
    if not rubrics:
        print("check_handouts: FAIL no lab found")
        return 1
    if problems:
        return 1
    print(f"check_handouts: all {len(rubrics)} labs are thinking labs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
