"""Figures drawn from sources in the repository (a Sphinx extension).

    .. toll-figure:: trampoline-path
       :alt: The path of a system call under 4/4

       The caption, as in a figure directive.

draws book/figures/trampoline-path.dot with Graphviz (`dot -Tsvg`) or runs
book/figures/trampoline-path.py (matplotlib; it is given the SVG path to
write as its only argument, and reads what it plots from book/generated/).
The SVG goes to <build>/book/figures/, never into the source tree; it is
drawn again when its source, book/figures/figstyle.py or anything in
book/generated/ is newer. A figure whose source is missing or fails to draw
is a build error, so `make book` (with -W) fails.
"""

import os
import shutil
import subprocess
import sys

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

BOOK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(BOOK, "figures")
GENERATED = os.path.join(BOOK, "generated")
PYTHON = "/usr/bin/python3"  # Debian's matplotlib lives in this Python.

log = logging.getLogger("tollfigures")


def _inputs_mtime(source):
    times = [os.path.getmtime(source)]
    for folder in (GENERATED,):
        for name in os.listdir(folder):
            times.append(os.path.getmtime(os.path.join(folder, name)))
    style = os.path.join(FIGURES, "figstyle.py")
    if os.path.exists(style):
        times.append(os.path.getmtime(style))
    return max(times)


def draw(name, outdir):
    """Draws figure @name into @outdir; returns the SVG path. Raises RuntimeError."""
    dot = os.path.join(FIGURES, name + ".dot")
    script = os.path.join(FIGURES, name + ".py")
    source = dot if os.path.exists(dot) else script if os.path.exists(script) else None
    if source is None:
        raise RuntimeError(f"no source for figure '{name}': write book/figures/{name}.dot "
                           f"(Graphviz) or book/figures/{name}.py (matplotlib)")
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, name + ".svg")
    if os.path.exists(out) and os.path.getmtime(out) >= _inputs_mtime(source):
        return out
    if source == dot:
        if not shutil.which("dot"):
            raise RuntimeError("Graphviz's dot is missing (Debian package graphviz; tools/deps)")
        cmd = ["dot", "-Tsvg", "-o", out + ".tmp", dot]
    else:
        cmd = [PYTHON, script, out + ".tmp"]
    proc = subprocess.run(cmd, cwd=FIGURES, capture_output=True, text=True,
                          env=dict(os.environ, MPLBACKEND="svg", MPLCONFIGDIR=outdir,
                                   SOURCE_DATE_EPOCH="0"))
    if proc.returncode != 0 or not os.path.exists(out + ".tmp"):
        detail = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        if "matplotlib" in proc.stderr and "No module" in proc.stderr:
            detail = "matplotlib is missing (Debian package python3-matplotlib; tools/deps)"
        raise RuntimeError(f"figure '{name}': {' '.join(cmd[:2])} failed: {detail}")
    os.replace(out + ".tmp", out)
    return out


class TollFigure(SphinxDirective):
    required_arguments = 1
    has_content = True
    option_spec = {"alt": directives.unchanged_required, "width": directives.unchanged}

    def run(self):
        name = self.arguments[0]
        outdir = os.path.join(os.path.dirname(self.env.app.outdir), "figures")
        try:
            svg = draw(name, outdir)
        except RuntimeError as e:
            return [self.state.document.reporter.error(str(e), line=self.lineno)]
        docdir = os.path.dirname(os.path.join(self.env.srcdir, self.env.docname))
        uri = os.path.relpath(svg, docdir)
        if "alt" not in self.options:
            return [self.state.document.reporter.error(
                f"toll-figure {name}: give it an :alt: text", line=self.lineno)]
        image = nodes.image(uri=uri, alt=self.options["alt"], candidates={"*": uri})
        if "width" in self.options:
            image["width"] = self.options["width"]
        figure = nodes.figure("", image, ids=[f"figure-{name}"], names=[f"figure-{name}"])
        self.state.document.note_explicit_target(figure)
        if not self.content:
            return [self.state.document.reporter.error(
                f"toll-figure {name}: give it a caption; it carries the figure's number",
                line=self.lineno)]
        if True:
            caption = nodes.caption()
            text, _ = self.state.inline_text(" ".join(self.content), self.lineno)
            caption += text
            figure += caption
        self.env.note_dependency(os.path.join(FIGURES, name + (".dot" if os.path.exists(
            os.path.join(FIGURES, name + ".dot")) else ".py")))
        return [figure]


def setup(app):
    app.add_directive("toll-figure", TollFigure)
    return {"version": "1", "parallel_read_safe": True}


if __name__ == "__main__":
    # tollfigures.py NAME OUTDIR: draw one figure outside Sphinx.
    print(draw(sys.argv[1], sys.argv[2]))
