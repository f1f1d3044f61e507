#!/usr/bin/python3
"""The repository stands alone: no file refers to documents that are not in
it (the design notes, mechanism notes and style guide the project was
started from, the mailing-list "seed" files by name, a shared folder beside
the repository) or to the issue tracker by number.

    stands_alone.py [DIR]      (default: the repository)
    stands_alone.py --self-test

Prints each offending line and exits 1, or prints how many files it read."""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_DIRS = {".git", "build", "__pycache__"}
# Spelled in pieces, so that this file does not match itself.
FORBIDDEN = re.compile("|".join([
    r"DESIGN" + r"\.md", r"MECHANISMS" + r"\.md", r"STYLE" + r"\.md",
    r"\.\./" + r"shared\b", r"\bseeds" + r"/", r"\b00[0-4]_[0-9a-f]{16}\b",
    # An issue number used as a reference (in parentheses, with #, possessive),
    # not the verb ("would otherwise issue 512 TLBIs").
    r"(?:\(|\bsee )issue" + r" #?\d+", r"\bissue" + r" #\d+", r"\bissue" + r" \d+(?:\)|'s|:)",
]), re.I)


def offending(top):
    found, read = [], 0
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue  # Binary files hold no references.
            read += 1
            for n, line in enumerate(text.splitlines(), 1):
                if FORBIDDEN.search(line):
                    found.append(f"{os.path.relpath(path, top)}:{n}: {line.strip()[:120]}")
    return found, read


def self_test():
    """The check can fail: a planted reference in a scratch tree is found."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "planted.h"), "w") as f:
            f.write("// the protocol of " + "DESIGN" + ".md\n")
        found, _ = offending(tmp)
    if len(found) != 1 or not found[0].startswith("planted.h:1:"):
        print(f"stands_alone: FAIL: the planted reference was not found: {found}")
        return 1
    print("stands_alone: the planted reference was found")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    top = argv[0] if argv else ROOT
    found, read = offending(top)
    for line in found:
        print(line)
    if found:
        print(f"stands_alone: FAIL: {len(found)} line(s) refer to documents outside the "
              "repository; write what the reader needs into the book (book/appendix/) instead")
        return 1
    print(f"stands_alone: {read} file(s) read, none refers to a document outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
