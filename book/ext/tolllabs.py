"""The grading statement of a lab handout, from its rubric (a Sphinx extension).

    .. lab-grading:: labs/lab0-measure/rubric.toml

       prediction | 3 | the prediction, written before the measurement, with its reasons
       explanation | 4 | the explanation of the difference, event by event

renders one table: every automatic item of the rubric (its [[tests]] and
[[measurements]], with their points, read from the rubric so that the
handout cannot disagree with the grader), then the hand-marked written
answers given in the content (key | points | what earns them), and the
totals with the hand-marked share. A rubric that cannot be read, or a
content line that is not `key | points | text`, is a build error.
"""

import os
import tomllib

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

BOOK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BOOK)


def _row(cells):
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=str(cell))
        row += entry
    return row


class LabGrading(SphinxDirective):
    required_arguments = 1
    has_content = True

    def run(self):
        path = os.path.join(ROOT, self.arguments[0])
        self.env.note_dependency(path)
        try:
            with open(path, "rb") as f:
                rubric = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            return [self.state.document.reporter.error(f"lab-grading: {e}", line=self.lineno)]
        automatic = []
        for t in rubric.get("tests", []):
            automatic.append((t["name"], t.get("description", ""), int(t.get("points", 0))))
        for m in rubric.get("measurements", []):
            automatic.append((f"worksheet: {m['name']}",
                              f"METRIC {m.get('metric', '')}, within the rubric's tolerance",
                              int(m.get("points", 0))))
        hand = []
        for line in self.content:
            if not line.strip():
                continue
            parts = [p.strip() for p in line.split("|", 2)]
            if len(parts) != 3 or not parts[1].isdigit():
                return [self.state.document.reporter.error(
                    f"lab-grading: '{line}' is not 'key | points | what earns them'",
                    line=self.lineno)]
            hand.append((parts[0], parts[2], int(parts[1])))
        auto_total = sum(p for _, _, p in automatic)
        hand_total = sum(p for _, _, p in hand)
        total = auto_total + hand_total
        table = nodes.table(classes=["lab-grading"])
        group = nodes.tgroup(cols=4)
        table += group
        for width in (25, 12, 50, 10):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        head += _row(["item", "marked", "what earns the points", "points"])
        group += head
        body = nodes.tbody()
        for name, text, points in automatic:
            body += _row([nodes.paragraph("", "", nodes.literal(text=name)), "automatically",
                          text, points])
        for name, text, points in hand:
            body += _row([nodes.paragraph("", "", nodes.literal(text=name)), "by hand", text,
                          points])
        share = f"{100 * hand_total / total:.0f} %" if total else "0 %"
        # Points are set by the rubric, not measured: mark the sums as such
        # for the number check of tollnumbers.py.
        summary = nodes.paragraph("", "", nodes.inline(
            "", f"{auto_total} automatic, {hand_total} by hand ({share} of the lab marked by hand)",
            classes=["toll-fixed"]))
        body += _row([nodes.paragraph("", "", nodes.strong(text="total")), "", summary, total])
        group += body
        return [table]


def setup(app):
    app.add_directive("lab-grading", LabGrading)
    return {"version": "1", "parallel_read_safe": True}
