"""Code excerpts without the labs' solutions (a Sphinx extension).

Every file that a `literalinclude` quotes is read as a student's starter tree
holds it: each lab region (`// LAB <id> BEGIN: <hint>` ... `// LAB <id> END`)
is replaced by its stub, the hint as a TODO and the region's STUB lines,
exactly as tools/mklab writes it (the same code, tools/lib/lab_regions.py).
So the book never prints a reference solution (only the instructor edition,
built with the Sphinx tag `instructor`, does), and it prints the same
excerpt in the full tree and in every lab's starter: a region that a starter
has already stubbed is left as it is.

Every excerpt is recorded in <build>/book/includes.json (file, options,
text); `tools/book --check-starters` reads the same excerpts from each lab's
starter version of the files and requires the same text (book.starters in
make check).
"""

import json
import os

from sphinx.directives import code

from lib import lab_regions  # tools/lib: tools/book runs Sphinx with PYTHONPATH=tools

BOOK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BOOK)


def already_stubbed(lines, region):
    """True when @region of @lines holds a starter's stub rather than a solution."""
    after_begin = lines[region.begin] if region.begin < len(lines) else ""
    return after_begin.strip().startswith(f"{region.comment} TODO(lab {region.lab}):")


# The instructor edition (sphinx -t instructor) prints the solutions.
_show_solutions = False


def as_starter(path, text):
    """@text of the file @path with every solved lab region replaced by its stub."""
    if _show_solutions:
        return text
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    if "LAB" not in text or not lab_regions.may_hold_regions(rel):
        return text
    lines = text.splitlines(keepends=True)
    regions = [r for r in lab_regions.parse_regions(rel, text) if not already_stubbed(lines, r)]
    return lab_regions.stub_text(text, regions) if regions else text


_original_read_file = code.LiteralIncludeReader.read_file
_original_read = code.LiteralIncludeReader.read
_recorded = []


def _read_file(self, filename, location=None):
    lines = _original_read_file(self, filename, location)
    return as_starter(filename, "".join(lines)).splitlines(keepends=True)


def _read(self, location=None):
    text, count = _original_read(self, location)
    _recorded.append({"file": os.path.relpath(os.path.abspath(self.filename), ROOT),
                      "options": {k: v for k, v in self.options.items()
                                  if isinstance(v, (str, int, bool)) or v is None},
                      "text": text})
    return text, count


def _write(app, exception):
    if exception:
        return
    with open(os.path.join(app.outdir, "..", "includes.json"), "w") as f:
        json.dump(_recorded, f, indent=1)


def _inited(app):
    global _show_solutions
    _show_solutions = app.tags.has("instructor")


def setup(app):
    app.connect("builder-inited", _inited)
    code.LiteralIncludeReader.read_file = _read_file
    code.LiteralIncludeReader.read = _read
    app.connect("build-finished", _write)
    return {"version": "1", "parallel_read_safe": False}
