"""The instructor edition of the book (a Sphinx extension).

`make book-instructor` (tools/book --instructor) builds the book with the
Sphinx tag `instructor`. Then, and only then:

* the pages of book/instructor/ join the book, as its last part (conf.py
  leaves the folder out of the student book; tools/mklab leaves it out of
  every starter tree);
* code excerpts print the reference solution of every lab region instead of
  the starter's stub (tollcode.py);
* `.. toll-lab-solutions::` prints every lab region of the tree, with its
  hint and its reference code, lab by lab;
* `.. toll-lab-answers::` prints every lab's written questions with the
  reference answers of its worksheet (labs/<lab>/results.toml, [answers],
  inside the lab's region, which a starter replaces by empty strings).

The student book and the starters never hold any of this; the ctest test
book.instructor.stays_out checks both.
"""

import os
import tomllib

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from lib import lab_regions  # tools/lib, through PYTHONPATH=tools

BOOK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BOOK)
LABS = os.path.join(ROOT, "labs")

LANGUAGE = {".cpp": "cpp", ".h": "cpp", ".S": "none", ".ld": "text", ".toml": "toml",
            ".py": "python", ".cmake": "cmake"}


def instructor(app):
    return app.tags.has("instructor")


def solution_lines(root, region):
    """The reference lines of @region (between its hint and its STUB or END)."""
    with open(os.path.join(root, region.path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    end = (region.stub or region.end) - 1
    return lines[region.hint_end:end]


def reference_answers(lab):
    """{question: reference answer} of labs/@lab/results.toml."""
    path = os.path.join(LABS, lab, "results.toml")
    if not os.path.exists(path):
        return {}
    with open(path, "rb") as f:
        return {k: v.strip() for k, v in tomllib.load(f).get("answers", {}).items()
                if isinstance(v, str) and v.strip()}


def labs_with_answers():
    return sorted(lab for lab in os.listdir(LABS) if reference_answers(lab))


class LabSolutions(SphinxDirective):
    def run(self):
        by_lab = {}
        for r in lab_regions.find_regions(ROOT):
            by_lab.setdefault(r.lab, []).append(r)
        out = []
        for lab in sorted(by_lab):
            section = nodes.section(ids=[f"solutions-{lab}"])
            section += nodes.title(text=f"Lab {lab}")
            for r in by_lab[lab]:
                para = nodes.paragraph(classes=["toll-quoted"])  # the hint, as written
                para += nodes.literal(text=f"{r.path}:{r.begin}-{r.end}")
                para += nodes.Text(f": {r.hint}")
                section += para
                code = "\n".join(solution_lines(ROOT, r))
                block = nodes.literal_block(code, code, source=os.path.join(ROOT, r.path))
                block["language"] = LANGUAGE.get(os.path.splitext(r.path)[1], "text")
                section += block
                self.env.note_dependency(os.path.join(ROOT, r.path))
            out.append(section)
        return out


class LabAnswers(SphinxDirective):
    def run(self):
        out = []
        for lab in labs_with_answers():
            section = nodes.section(ids=[f"answers-{lab}"])
            section += nodes.title(text=f"labs/{lab}")
            for key, text in reference_answers(lab).items():
                item = nodes.definition_list_item()
                item += nodes.term(text=key)
                body = nodes.definition(classes=["toll-quoted"])
                for para in text.split("\n\n"):
                    body += nodes.paragraph(text=" ".join(para.split()))
                item += body
                section += nodes.definition_list("", item)
            self.env.note_dependency(os.path.join(LABS, lab, "results.toml"))
            out.append(section)
        return out


def _add_to_index(app, docname, source):
    """The instructor part joins the root toctree in the instructor edition."""
    if docname == app.config.root_doc and instructor(app):
        source[0] += ("\n\n.. toctree::\n   :maxdepth: 2\n   :caption: Instructor edition\n\n"
                      "   instructor/index\n")


def setup(app):
    app.add_directive("toll-lab-solutions", LabSolutions)
    app.add_directive("toll-lab-answers", LabAnswers)
    app.connect("source-read", _add_to_index)
    return {"version": "1", "parallel_read_safe": True}
