#!/usr/bin/python3
"""Instructor material stays with the instructor.

    check_instructor.py BUILD      check BUILD/book/html, BUILD/book-instructor/html
                                   and a starter tree of every lab
    check_instructor.py --self-test  plant a solution line and an answer in a
                                   student page and a starter: both must be found

Every "Predict, then measure" exercise of a chapter must have its reasoning
in book/instructor/exercises.rst. The student book (make book) must hold no
lab solution, no reference answer
and no page of book/instructor/; a starter tree (tools/mklab) must hold no
file of book/instructor/ and neither the solution nor the reference answers
of its own lab. The instructor edition (make book-instructor) must hold all
of them: that is also the proof that the search below can find them in a
built page.

A solution is recognised by its distinctive lines: a line of a lab region's
reference code (20 characters or more, spaces folded) that occurs nowhere in
the file once the region is stubbed. An answer, by its sentences of eight
words or more.
"""

import html as html_lib
import os
import re
import shutil
import sys
import tempfile
import tomllib

from lib import lab_regions  # tools/lib, through PYTHONPATH=tools (ctest sets it)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

MIN_LINE = 20
MIN_WORDS = 8


def fold(text):
    return " ".join(text.split())


def distinctive_lines(root=ROOT):
    """{lab: [solution lines]}: the lines of a lab's reference code that occur
    nowhere else, neither in its file once that lab's regions are stubbed
    (another path may hold the same instruction) nor in any other file of
    the tree (a test may spell out the expected line)."""
    files = lab_regions.source_files(root)
    regions = lab_regions.find_regions(root, files)
    texts = {}
    for rel in files:
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                texts[rel] = fold(f.read().replace("`", ""))  # rst's ``code`` as read
        except (UnicodeDecodeError, OSError):
            pass
    found = {}
    for lab in sorted({r.lab for r in regions}):
        by_file = {}
        for r in regions:
            if r.lab == lab:
                by_file.setdefault(r.path, []).append(r)
        for path, mine in by_file.items():
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            stubbed = fold(lab_regions.stub_text(text, mine))
            lines = text.splitlines()
            for r in mine:
                for line in lines[r.hint_end:(r.stub or r.end) - 1]:
                    line = fold(line)
                    if len(line) < MIN_LINE or line in stubbed:
                        continue
                    if any(line in t for rel, t in texts.items() if rel != path):
                        continue
                    found.setdefault(lab, set()).add(line)
    return {lab: sorted(lines) for lab, lines in found.items()}


def answer_sentences(root=ROOT):
    """{lab: [sentences of its reference answers]}, keyed by the rubric's lab id."""
    found = {}
    labs = os.path.join(root, "labs")
    for folder in sorted(os.listdir(labs)):
        path = os.path.join(labs, folder, "results.toml")
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            answers = tomllib.load(f).get("answers", {})
        with open(path, encoding="utf-8") as f:
            m = re.search(r"\[answers\]\s*\n#\s*LAB\s+(\S+)\s+BEGIN", f.read())
        lab = m.group(1) if m else folder
        for text in answers.values():
            if isinstance(text, str):
                for s in re.split(r"(?<=[.;:?!])\s+", fold(text)):
                    if len(s.split()) >= MIN_WORDS:
                        found.setdefault(lab, []).append(s)
    return found


def html_text(html_dir):
    """{page: its text, folded} for every page of a built book."""
    pages = {}
    for folder, _, files in os.walk(html_dir):
        for name in files:
            if name.endswith(".html"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = re.sub(r"<[^>]+>", "", f.read())
                pages[os.path.relpath(os.path.join(folder, name), html_dir)] = fold(
                    html_lib.unescape(text))
    return pages


def tree_text(tree):
    pages = {}
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as f:
                    pages[os.path.relpath(path, tree)] = fold(f.read())
            except (UnicodeDecodeError, OSError):
                pass
    return pages


def leaks(pages, needles):
    """(page, needle) for each needle found in some page."""
    found = []
    for needle in needles:
        for name, text in pages.items():
            if needle in text:
                found.append((name, needle))
                break
    return found


def check_student(html_dir, solutions, answers):
    problems = []
    if os.path.isdir(os.path.join(html_dir, "instructor")):
        problems.append(f"{html_dir}/instructor/: the student book has the instructor's pages")
    pages = html_text(html_dir)
    for lab, lines in solutions.items():
        for page, line in leaks(pages, lines):
            problems.append(f"student book {page}: the solution of lab {lab}: '{line[:70]}'")
    for lab, sentences in answers.items():
        for page, s in leaks(pages, sentences):
            problems.append(f"student book {page}: a reference answer of lab {lab}: '{s[:70]}'")
    return problems


def check_instructor(html_dir, solutions, answers):
    problems = []
    pages = html_text(html_dir)
    for lab, lines in solutions.items():
        missing = [line for line in lines if not leaks(pages, [line])]
        if missing:
            problems.append(f"instructor edition: lab {lab}'s solution line '{missing[0][:70]}' "
                            "is not in it")
    for lab, sentences in answers.items():
        if not leaks(pages, sentences[:1]):
            problems.append(f"instructor edition: lab {lab}'s reference answers are not in it")
    return problems


def check_starter(tree, lab, solutions, answers):
    problems = []
    for folder in lab_regions.INSTRUCTOR_ONLY:
        if os.path.exists(os.path.join(tree, folder)):
            problems.append(f"starter of lab {lab}: {folder} is in it")
    pages = tree_text(tree)
    for page, line in leaks(pages, solutions.get(lab, [])):
        problems.append(f"starter of lab {lab}: {page} holds the solution '{line[:70]}'")
    for page, s in leaks(pages, answers.get(lab, [])):
        problems.append(f"starter of lab {lab}: {page} holds a reference answer '{s[:70]}'")
    return problems


def check_predictions(root=ROOT):
    """Every "Predict, then measure" exercise of a chapter has its reasoning
    in the instructor's notes (book/instructor/exercises.rst): as many
    "(prediction)" notes under the chapter's title as the chapter asks."""
    problems = []
    notes_path = os.path.join(root, "book", "instructor", "exercises.rst")
    with open(notes_path, encoding="utf-8") as f:
        notes = f.read()
    sections = {}
    for m in re.finditer(r"^(\S[^\n]*)\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", notes, re.S | re.M):
        sections[m.group(1).strip()] = m.group(2)
    chapters = os.path.join(root, "book", "chapters")
    for name in sorted(os.listdir(chapters)):
        with open(os.path.join(chapters, name), encoding="utf-8") as f:
            text = f.read()
        asked = len(re.findall(r"^\d+\. Predict, then measure", text, re.M))
        if not asked:
            continue
        title = re.search(r"^(\S[^\n]*)\n=+\n", text, re.M).group(1).strip()
        given = sections.get(title, "").count("(prediction).")
        if given < asked:
            problems.append(f"{name} asks for {asked} prediction(s); the instructor notes under "
                            f"'{title}' reason {given}")
    return problems


def check_starters(solutions, answers, labs):
    problems = []
    with tempfile.TemporaryDirectory(prefix="toll-instructor-") as scratch:
        for lab in labs:
            tree = os.path.join(scratch, lab)
            lab_regions.write_starter(ROOT, lab, tree)
            problems += check_starter(tree, lab, solutions, answers)
            shutil.rmtree(tree)
    return problems


def self_test():
    solutions, answers = distinctive_lines(), answer_sentences()
    lab = sorted(set(solutions) & set(answers))[0]
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        site = os.path.join(scratch, "html")
        os.makedirs(os.path.join(site, "chapters"))
        with open(os.path.join(site, "chapters", "planted.html"), "w") as f:
            f.write(f"<html><body><pre>{html_lib.escape(solutions[lab][0])}</pre>"
                    f"<p>{html_lib.escape(answers[lab][0])}</p></body></html>")
        problems = check_student(site, solutions, answers)
        for what in ("the solution of lab", "a reference answer of lab"):
            if not any(what in p for p in problems):
                print(f"FAIL: the planted student page's {what.split(' of ')[0]} was not found")
                failed += 1
        tree = os.path.join(scratch, "starter")
        os.makedirs(os.path.join(tree, "book", "instructor"))
        with open(os.path.join(tree, "book", "instructor", "notes.rst"), "w") as f:
            f.write("notes\n")
        with open(os.path.join(tree, "planted.cpp"), "w") as f:
            f.write(solutions[lab][0] + "\n")
        problems = check_starter(tree, lab, solutions, answers)
        for what in ("book/instructor/ is in it", "holds the solution"):
            if not any(what in p for p in problems):
                print(f"FAIL: the planted starter's '{what}' was not found")
                failed += 1
        # A chapter asking for a prediction whose reasoning the notes lack.
        fake = os.path.join(scratch, "fake")
        os.makedirs(os.path.join(fake, "book", "chapters"))
        os.makedirs(os.path.join(fake, "book", "instructor"))
        with open(os.path.join(fake, "book", "chapters", "x.rst"), "w") as f:
            f.write("A chapter\n=========\n\n1. Predict, then measure. How many?\n")
        with open(os.path.join(fake, "book", "instructor", "exercises.rst"), "w") as f:
            f.write("Notes\n=====\n\nA chapter\n---------\n\nThink 1.\n   Yes.\n")
        if not any("asks for 1 prediction" in p for p in check_predictions(fake)):
            print("FAIL: the planted prediction without its reasoning was not found")
            failed += 1
    if failed:
        return 1
    print(f"OK: the planted solution, answer and instructor folder (lab {lab}) and a "
          "prediction without its reasoning are all found")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 1:
        sys.exit(__doc__)
    build = argv[0]
    solutions, answers = distinctive_lines(), answer_sentences()
    if not solutions or not answers:
        print("FAIL: found no lab solution or no reference answer to look for")
        return 1
    problems = check_student(os.path.join(build, "book", "html"), solutions, answers)
    problems += check_instructor(os.path.join(build, "book-instructor", "html"), solutions,
                                 answers)
    problems += check_starters(solutions, answers, sorted(solutions))
    problems += check_predictions()
    for p in problems:
        print(f"FAIL {p}")
    if problems:
        print(f"FAILED: {len(problems)} problem(s)")
        return 1
    print(f"OK: the solutions of {len(solutions)} labs and their reference answers are in the "
          "instructor edition only: not in the student book, not in any lab's starter")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
