"""Numbers in the book's prose that cannot go stale (a Sphinx extension).

Every measured number in the text is written as a reference into the
generated results, never typed by hand:

    :num:`3/1:lat_syscall.getppid`                     -> 182
    :num:`fpu-bench:fpu.lazy_round_trip`               -> a ktest METRIC
    :num:`{4/4:bw_zero.5} / {3/1:bw_zero.5};.2f`       -> an expression, formatted

A key is `<source>:<metric>`. <source> is a configuration of
book/generated/results.csv (written by `tools/bench --book` from make bench)
or a run of book/measurements.toml (its METRICs are in
book/generated/metrics.csv, written by `tools/book --measure`), or
`copyout` for the copy-cost sweep of book/generated/copyout.csv
(`copyout:4/4 fast.256`: instructions per read of 256 bytes), or
`walks <configuration>` for the page walks per operation of
book/generated/walks.csv (`walks bochs 4/4 global on:bw_null.5`), or `suite`
for the size of the suite behind results.csv as `make bench` reports it
(`suite:benchmarks`, `suite:configurations` and `suite:rows`, Toll's
configurations only; `suite:linux_configurations`). An
expression puts keys in braces and may use + - * / ( ) and numbers; after
the last `;` comes a Python format specification (default: integers with
thousands separators, other values with two decimals; `%` gives a percent).

A number the project sets rather than measures (a tolerance, a budget, an
iteration count) is written :fixed:`5 %`.

Figures quoted from elsewhere (real hardware in the mailing-list threads,
a paper) are written :hw:`537 -> 136 kpps <Evans2018a>`: the text as given
and a citation of the bibliography entry it comes from.

The rule the build enforces (any violation is a warning, and the book is
built with -W): in the prose, titles, captions, tables, the literal blocks
the book writes itself (console transcripts; a block quoted from a source
file by literalinclude is the code's own) and alt texts, a number followed by a unit of
measure (instructions, cycles, traps, loads, %, x, kpps, seconds, ...) must
come from :num:, :hw: or :fixed:, and a table cell holding nothing but a number must
come from a generated file (book/generated/) or :num: (except in a grading
table, one whose header says "points"). A key that is not in
the results is an error too.

The same check runs outside Sphinx, on one file, for the test that proves it
can fail:  tollnumbers.py --lint FILE.rst
"""

import ast
import csv
import json
import operator
import os
import re
import sys

from docutils import nodes, utils
from docutils.parsers.rst import roles

BOOK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = os.path.join(BOOK, "generated")
BENCH_CSV = os.path.join(GENERATED, "results.csv")
METRICS_CSV = os.path.join(GENERATED, "metrics.csv")
CONFIGS_TOML = os.path.join(os.path.dirname(BOOK), "tests", "bench", "configs.toml")

# A number followed by a unit of measure: the numbers that must be sourced.
UNITS = (r"%(?![a-z])|×|x(?=[\s,.;:)]|$)|times\b|instructions?\b|instr\b|cycles?\b|traps?\b"
         r"|kpps\b|µs\b|us\b|ns\b"
         r"|ms\b|minutes?\b|seconds?\b|s\b|rows\b|(?:CR3 )?loads?\b|flushes\b|switches\b"
         r"|faults\b|calls?\b|hops?\b|per ?(?:cent|hop|switch|call|1000)\b|kinstr\b"
         r"|thousand\b|million\b|packets\b|transfers\b|benchmark\(s\)|benchmarks?\b"
         r"|configuration\(s\)|configurations?\b")
MEASURED = re.compile(r"(?<![\w./\-:@])(\d[\d,  ]*(?:\.\d+)?)\s*(?:" + UNITS + ")")
# A number written with thousands separators (1,237 or 104 719), unit or not:
# only a count or a measurement is written so, and either comes from a source.
GROUPED = re.compile(r"(?<![\w./\-:@,])\d{1,3}(?:[,  ]\d{3})+(?![\d,])")
BARE_NUMBER = re.compile(r"^[~≈]?\s*\d[\d,  ]*(?:\.\d+)?\s*$")

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv}


class NumberError(Exception):
    pass


class Results:
    """The generated results: (source, metric) -> value."""

    def __init__(self, bench_csv=BENCH_CSV, metrics_csv=METRICS_CSV):
        self.values = {}
        self.files = []
        for path, source_column in ((bench_csv, "configuration"), (metrics_csv, "run")):
            if not os.path.exists(path):
                continue
            self.files.append(path)
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    key = (row[source_column], row["metric"])
                    if key in self.values:
                        raise NumberError(f"{path}: {key[0]}:{key[1]} appears twice "
                                          "(a configuration and a run share a name?)")
                    self.values[key] = float(row["value"])
        # The suite itself, as `make bench` (Toll's configurations, no Linux)
        # reports it: suite:benchmarks, suite:configurations, suite:rows.
        self._suite(bench_csv)
        # The copy-cost sweep of the address-space chapter: copyout:<path>.<bytes>.
        copyout = os.path.join(os.path.dirname(bench_csv), "copyout.csv")
        if os.path.exists(copyout):
            self.files.append(copyout)
            with open(copyout, newline="") as f:
                for row in csv.DictReader(f):
                    key = ("copyout", f"{row['configuration']}.{row['bytes']}")
                    self.values[key] = float(row["instructions_per_read"])
        # The page walks of vm.walks=count runs: walks <configuration>:<metric>.
        walks = os.path.join(os.path.dirname(bench_csv), "walks.csv")
        if os.path.exists(walks):
            self.files.append(walks)
            with open(walks, newline="") as f:
                for row in csv.DictReader(f):
                    key = (f"walks {row['configuration']}", row["metric"])
                    self.values[key] = float(row["walks_per_op"])

        # The kernel profiler's tables (tools/bench --profile):
        # profile-<bench>[-<tag>]:total, the path's measured length.
        generated = os.path.dirname(bench_csv)
        for name in sorted(os.listdir(generated)) if os.path.isdir(generated) else []:
            if name.startswith("profile-") and name.endswith(".csv") and "-calls" not in name:
                path = os.path.join(generated, name)
                self.files.append(path)
                with open(path, newline="") as f:
                    for row in csv.DictReader(f):
                        if row["function"] == "total":
                            self.values[(name[:-4], "total")] = float(row["instr"])

    def _suite(self, bench_csv):
        if not os.path.exists(bench_csv) or not os.path.exists(CONFIGS_TOML):
            return
        import tomllib
        with open(CONFIGS_TOML, "rb") as f:
            linux = {c["name"] for c in tomllib.load(f).get("config", [])
                     if c.get("kernel") == "linux"}
        with open(bench_csv, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["configuration"] not in linux]
        self.values[("suite", "benchmarks")] = float(len({r["benchmark"] for r in rows}))
        self.values[("suite", "configurations")] = float(len({r["configuration"] for r in rows}))
        self.values[("suite", "rows")] = float(len(rows))
        self.values[("suite", "linux_configurations")] = float(len(linux))

    def lookup(self, key):
        source, sep, metric = key.strip().rpartition(":")
        if not sep:
            raise NumberError(f"'{key}' is not <configuration or run>:<metric>")
        if (source, metric) not in self.values:
            close = sorted(f"{s}:{m}" for s, m in self.values if m == metric)[:6]
            hint = f"; the metric exists as {', '.join(close)}" if close else ""
            raise NumberError(f"no result {source}:{metric} in {', '.join(map(os.path.basename, self.files)) or 'book/generated (empty)'}{hint}")
        return self.values[(source, metric)]


def _evaluate(tree, values):
    if isinstance(tree, ast.Expression):
        return _evaluate(tree.body, values)
    if isinstance(tree, ast.Constant) and isinstance(tree.value, (int, float)):
        return tree.value
    if isinstance(tree, ast.Name) and tree.id in values:
        return values[tree.id]
    if isinstance(tree, ast.BinOp) and type(tree.op) in _BINOPS:
        return _BINOPS[type(tree.op)](_evaluate(tree.left, values), _evaluate(tree.right, values))
    if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub):
        return -_evaluate(tree.operand, values)
    raise NumberError("only numbers, {keys}, + - * / and parentheses are allowed")


def render(text, results):
    """The text shown for the content of a :num: role."""
    spec = None
    if ";" in text:
        text, spec = text.rsplit(";", 1)
        spec = spec.strip()
    if "{" not in text and ":" in text:
        text = "{" + text + "}"
    values = {}

    def name(match):
        var = f"k{len(values)}"
        values[var] = results.lookup(match.group(1))
        return var
    expression = re.sub(r"\{([^}]*)\}", name, text)
    try:
        value = _evaluate(ast.parse(expression.strip(), mode="eval"), values)
    except SyntaxError as e:
        raise NumberError(f"bad expression: {e.msg}")
    except ZeroDivisionError:
        raise NumberError("division by zero")
    try:
        if spec:
            return format(value, spec)
        if float(value).is_integer():
            return f"{int(value):,}"
        return f"{value:.2f}"
    except ValueError as e:
        raise NumberError(f"bad format '{spec}': {e}")


_results = None


def results():
    global _results
    if _results is None:
        _results = Results()
    return _results


def num_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    try:
        shown = render(utils.unescape(text), results())
    except NumberError as e:
        msg = inliner.reporter.error(f":num:`{text}`: {e}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    node = nodes.inline(rawtext, shown, classes=["toll-num"])
    node["toll_source"] = text
    return [node], []


HW = re.compile(r"^(.*?)\s*<([A-Za-z][\w.-]*)>$", re.S)


def fixed_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """A number the project sets rather than measures: a tolerance, a budget."""
    node = nodes.inline(rawtext, utils.unescape(text), classes=["toll-fixed"])
    return [node], []


def hw_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    match = HW.match(utils.unescape(text))
    if not match:
        msg = inliner.reporter.error(
            f":hw:`{text}`: a quoted figure needs its source, as :hw:`14 cycles <Evans2006>`",
            line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    shown, label = match.groups()
    node = nodes.inline(rawtext, "", classes=["toll-hw"])
    node += nodes.Text(shown + " ")
    ref = nodes.citation_reference(f"[{label}]_", label, refname=nodes.fully_normalize_name(label))
    node += ref
    inliner.document.note_citation_ref(ref)
    return [node], []


SKIP_PARENTS = (nodes.literal_block, nodes.literal, nodes.raw, nodes.comment, nodes.citation,
                nodes.target, nodes.system_message, nodes.problematic, nodes.reference,
                nodes.citation_reference)


def _source(node):
    while node is not None:
        if getattr(node, "source", None):
            return node.source
        node = node.parent
    return None


def _line(node):
    while node is not None:
        if getattr(node, "line", None):
            return node.line
        node = node.parent
    return None


def _exempt(node):
    parent = node.parent
    while parent is not None:
        if isinstance(parent, SKIP_PARENTS):
            return True
        if isinstance(parent, nodes.inline) and {"toll-num", "toll-hw", "toll-fixed"} & set(parent["classes"]):
            return True
        if isinstance(parent, nodes.Element) and "toll-quoted" in parent.get("classes", []):
            return True  # a worksheet's reference answer, quoted as written
        if parent.__class__.__name__ in ("desc", "desc_signature", "desc_content", "pending_xref"):
            return True  # Breathe's rendering of the code: not prose.
        parent = parent.parent
    return False


def _generated(node):
    source = None
    if isinstance(node, nodes.Element):  # A table entry has no source; its paragraph has.
        for child in node.traverse(nodes.paragraph):
            source = child.source
            break
    source = source or _source(node) or ""
    return os.path.abspath(source.split(":")[0]).startswith(GENERATED + os.sep)


def _points_table(entry):
    """A grading table (a header cell says "points"): its numbers are set, not measured."""
    table = entry
    while table is not None and not isinstance(table, nodes.table):
        table = table.parent
    if table is None:
        return False
    return any("points" in head.astext().lower() for head in table.traverse(nodes.thead))


# A record of Toll's serial protocol, or a row of results.csv, with its value
# typed into a literal block: a console transcript that quotes a measurement.
# Write the block as a parsed-literal with :num: in place of the value.
RECORD = re.compile(r"^\s*(?:\$\s.*)?(?:(?:METRIC|COUNTER)\s+\S+\s+\d[\d,]*\b.*"
                    r"|[\w/.+-]+,[\w.+-]+,[\w.+-]+,\d+,\w+)\s*$", re.M)


def _typed_records(doctree):
    found = []
    for block in doctree.traverse(nodes.literal_block):
        for text in block.traverse(nodes.Text):
            parent, in_role = text.parent, False
            while parent is not None and parent is not block:
                if isinstance(parent, nodes.inline) and "toll-num" in parent["classes"]:
                    in_role = True
                parent = parent.parent
            if in_role:
                continue
            # A record whose value comes from :num: is split around the role:
            # only a line whole in one text node can hold a typed value.
            for match in RECORD.finditer(text.astext()):
                found.append((_source(block), _line(block), match.group(0).strip()))
    return found


def _quoted_code(block):
    """True for a literal block quoted from a file of the tree (literalinclude),
    whose numbers are the code's own, not typed into the book."""
    source = block.get("source") or ""
    return bool(source) and not source.endswith(".rst")


def _typed_in_literals(doctree):
    """Measured numbers typed into a literal block the book writes itself (a
    console transcript, a diagram): the same rule as the prose. A parsed-literal
    takes :num: in their place."""
    found = []
    for block in doctree.traverse(nodes.literal_block):
        if _quoted_code(block) or _generated(block):
            continue
        for text in block.traverse(nodes.Text):
            parent, in_role = text.parent, False
            while parent is not None and parent is not block:
                if (isinstance(parent, nodes.inline)
                        and {"toll-num", "toll-hw", "toll-fixed"} & set(parent["classes"])):
                    in_role = True
                parent = parent.parent
            if in_role:
                continue
            for match in MEASURED.finditer(text.astext()):
                found.append((_source(block), _line(block), match.group(0).strip()))
    return found


def _typed_in_alt(doctree):
    """Measured numbers in an image's alt text, which no role can source: the
    alt text says what the figure shows, the figure and its caption the values."""
    found = []
    for image in doctree.traverse(nodes.image):
        for match in MEASURED.finditer(image.get("alt", "")):
            found.append((_source(image), _line(image), match.group(0).strip()))
        for match in re.finditer(r"(?<![\w./\-:@])\d+(?:\.\d+)\b", image.get("alt", "")):
            found.append((_source(image), _line(image), match.group(0)))
    return found


def unsourced(doctree):
    """(source, line, text) of every hand-typed measured number in @doctree:
    in the prose, tables, captions, titles, literal blocks and alt texts."""
    found = _typed_records(doctree) + _typed_in_literals(doctree) + _typed_in_alt(doctree)
    for text in doctree.traverse(nodes.Text):
        if _exempt(text) or _generated(text):
            continue
        for match in MEASURED.finditer(text.astext()):
            found.append((_source(text), _line(text), match.group(0).strip()))
        for match in GROUPED.finditer(text.astext()):
            if not MEASURED.match(text.astext(), match.start()):
                found.append((_source(text), _line(text), match.group(0).strip()))
    for entry in doctree.traverse(nodes.entry):
        if _generated(entry) or entry.traverse(lambda n: isinstance(n, nodes.inline)
                                               and "toll-num" in n.get("classes", [])):
            continue
        if _exempt(entry) or _points_table(entry):
            continue
        if BARE_NUMBER.match(entry.astext()):
            found.append((_source(entry), _line(entry), entry.astext().strip()))
    return found


def count_sourced(doctree):
    counts = {"num": 0, "hw": 0, "fixed": 0}
    for node in doctree.traverse(nodes.inline):
        for kind in counts:
            if f"toll-{kind}" in node["classes"]:
                counts[kind] += 1
    return counts


# --- Sphinx ------------------------------------------------------------------

def _check_doctree(app, doctree, docname):
    from sphinx.util import logging
    log = logging.getLogger("tollnumbers")
    totals = app.env.toll_numbers
    counts = count_sourced(doctree)
    bad = unsourced(doctree)
    totals[docname] = dict(counts, unsourced=len(bad))
    for source, line, text in bad:
        log.warning(f"a number typed by hand: '{text}'; write it as :num:`<source>:<metric>` "
                    "(book/README.rst, Numbers) or, for a quoted figure, :hw:`... <Label>`",
                    location=(docname, line), type="toll", subtype="numbers")


def _env_init(app):
    if not hasattr(app.env, "toll_numbers"):
        app.env.toll_numbers = {}


def _purge(app, env, docname):
    getattr(env, "toll_numbers", {}).pop(docname, None)


def _write_report(app, exception):
    if exception:
        return
    totals = getattr(app.env, "toll_numbers", {})
    report = {"sourced": sum(t["num"] for t in totals.values()),
              "quoted": sum(t["hw"] for t in totals.values()),
              "fixed": sum(t["fixed"] for t in totals.values()),
              "unsourced": sum(t["unsourced"] for t in totals.values()),
              "pages": totals}
    with open(os.path.join(app.outdir, "..", "numbers.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)


def setup(app):
    roles.register_local_role("num", num_role)
    roles.register_local_role("hw", hw_role)
    roles.register_local_role("fixed", fixed_role)
    app.connect("builder-inited", _env_init)
    app.connect("env-purge-doc", _purge)
    app.connect("doctree-read", lambda app, doctree: _check_doctree(app, doctree, app.env.docname))
    app.connect("build-finished", _write_report)
    return {"version": "1", "parallel_read_safe": False, "env_version": 1}


# --- standalone: tollnumbers.py --lint FILE.rst ------------------------------

def lint(path):
    from docutils.core import publish_doctree
    roles.register_local_role("num", num_role)
    roles.register_local_role("hw", hw_role)
    roles.register_local_role("fixed", fixed_role)
    with open(path) as f:
        text = f.read()
    # Sphinx-only roles and directives are unknown to plain docutils; reading
    # numbers needs neither, so unknown ones only warn (level 2) and are kept.
    doctree = publish_doctree(text, source_path=path,
                              settings_overrides={"report_level": 4, "halt_level": 5})
    bad = unsourced(doctree)
    errors = [m for m in doctree.traverse(nodes.system_message) if m["level"] >= 3
              and ":num:" in m.astext()]
    for source, line, number in bad:
        print(f"{path}:{line}: a number typed by hand: '{number}'")
    for m in errors:
        print(f"{path}:{m.get('line')}: {m.astext()}")
    counts = count_sourced(doctree)
    print(f"{path}: {counts['num']} sourced, {counts['hw']} quoted, {len(bad)} typed by hand, "
          f"{len(errors)} bad reference(s)")
    return 1 if bad or errors else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--lint":
        sys.exit(lint(sys.argv[2]))
    sys.exit("usage: tollnumbers.py --lint FILE.rst")
