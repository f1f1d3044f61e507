#!/usr/bin/python3
"""The API entries the book renders from doc comments (Doxygen, then Breathe)
say what the comments say, and say something.

    check_api_docs.py BUILD     checks BUILD/book/html and BUILD/book/doxygen/xml
    check_api_docs.py --self-test

Defects it finds, each named with its page or source line:
  * an escape the reader sees: a backslash before "<", ">", "#", "%" or "--"
    (book/doxygen_filter.py escaped text that Doxygen then printed as it is);
  * an entity printed as text ("&#8212;" on the page);
  * a "--" of a comment turned into a dash (Doxygen's <ndash/> or <mdash/>);
    kernel comments mean "--" as in "tools/run --expect-panic";
  * an entry with no description of its own;
  * a struct or class the book renders with a public member that has no doc
    comment (Breathe leaves such a member out without a word), or a member
    named in its :members: option that it does not have.
Exits 1 and prints each defect, or prints what it read. The self-test plants
one defect of each kind and runs the real filter and Doxygen over a header
with the comments that used to break, so the check is shown to fail."""

import glob
import html
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 77

# A Breathe entry: the signature, then the description.
ENTRY = re.compile(r'<dl class="(?:cpp|c) (\w+)">\s*<dt class="sig[^"]*" id="([^"]+)">'
                   r'(.*?)</dt>\s*<dd>(.*?)</dd>', re.S)
VISIBLE_ESCAPE = re.compile(r"\\(?:&lt;|&gt;|#|%|--|<|>)")
ENTITY_AS_TEXT = re.compile(r"&amp;(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
DASH = re.compile(r"[\u2013\u2014]|&#821[12];|&[nm]dash;")
DIRECTIVE = re.compile(r"^\.\. doxygen(struct|class)::\s*(\S+)\s*$")
OPTION = re.compile(r"^\s+:(\w[\w-]*):\s*(.*)$")


def text_of(fragment):
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def own_description(body):
    """The text of an entry's description before its member sections."""
    return text_of(re.split(r'<div class="breathe-sectiondef', body, 1)[0])


def check_html(html_dir):
    problems, entries = [], 0
    for path in sorted(glob.glob(os.path.join(html_dir, "**", "*.html"), recursive=True)):
        page = os.path.relpath(path, html_dir)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in ENTITY_AS_TEXT.finditer(text):
            problems.append(f"{page}: an entity printed as text: {html.unescape(m.group(0))}")
        for m in VISIBLE_ESCAPE.finditer(text):
            context = text_of(text[max(0, m.start() - 60):m.end() + 30])
            problems.append(f"{page}: a visible escape backslash: ...{context}...")
        for m in ENTRY.finditer(text):
            entries += 1
            kind, ident, signature, body = m.groups()
            name = text_of(signature).replace(" ¶", "").rstrip("¶ ")
            for d in DASH.finditer(body):
                context = text_of(body[max(0, d.start() - 60):d.end() + 30])
                problems.append(f"{page}: {name}: a dash where the comment has '--': "
                                f"...{context}...")
            if not own_description(body):
                problems.append(f"{page}: {name}: the {kind} has no description")
    return problems, entries


def location(element):
    loc = element.find("location")
    if loc is None:
        return "?"
    return f"{loc.get('file')}:{loc.get('line')}"


def check_xml_dashes(xml_dir):
    """Every <ndash/> or <mdash/> in the XML came from a "--" in a comment."""
    problems = []
    for path in sorted(glob.glob(os.path.join(xml_dir, "*.xml"))):
        tree = ET.parse(path)
        for member in tree.iter("memberdef"):
            if member.find(".//ndash") is not None or member.find(".//mdash") is not None:
                problems.append(f"{location(member)}: {member.findtext('name')}: "
                                "'--' in the doc comment became a dash")
        for compound in tree.iter("compounddef"):
            for part in ("briefdescription", "detaileddescription"):
                node = compound.find(part)
                if node is not None and (node.find(".//ndash") is not None
                                         or node.find(".//mdash") is not None):
                    problems.append(f"{location(compound)}: {compound.findtext('compoundname')}:"
                                    " '--' in the doc comment became a dash")
    return problems


def rendered_compounds(rst_files):
    """(file, line, kind, name, members or None) of every doxygenstruct and
    doxygenclass directive in @rst_files."""
    found = []
    for path in rst_files:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            m = DIRECTIVE.match(line)
            if not m:
                continue
            members = None
            for option in lines[i + 1:]:
                o = OPTION.match(option)
                if not o:
                    break
                if o.group(1) == "members" and o.group(2).strip():
                    members = [w.strip() for w in o.group(2).split(",") if w.strip()]
            found.append((path, i + 1, m.group(1), m.group(2), members))
    return found


def described(member):
    for part in ("briefdescription", "detaileddescription"):
        node = member.find(part)
        if node is not None and "".join(node.itertext()).strip():
            return True
    return False


def check_members(xml_dir, compounds):
    """Every public member of a rendered struct or class has a doc comment."""
    problems = []
    index = ET.parse(os.path.join(xml_dir, "index.xml"))
    refids = {c.findtext("name"): c.get("refid") for c in index.iter("compound")
              if c.get("kind") in ("struct", "class")}
    for path, line, kind, name, wanted in compounds:
        where = f"{os.path.relpath(path, ROOT)}:{line}"
        if name not in refids:
            problems.append(f"{where}: doxygen{kind} {name}: not in the Doxygen XML")
            continue
        tree = ET.parse(os.path.join(xml_dir, refids[name] + ".xml"))
        public = {}
        for member in tree.iter("memberdef"):
            if member.get("prot") == "public" and member.get("kind") in ("variable", "function"):
                public.setdefault(member.findtext("name"), []).append(member)
        for missing in sorted(set(wanted or []) - set(public)):
            problems.append(f"{where}: {name} has no public member {missing} (:members:)")
        for member_name in (wanted if wanted is not None else sorted(public)):
            for member in public.get(member_name, []):
                if not described(member):
                    problems.append(f"{location(member)}: {name}::{member_name} has no doc "
                                    f"comment, so the book (at {where}) leaves it out")
    return problems


def book_rst_files(root):
    files = glob.glob(os.path.join(root, "book", "**", "*.rst"), recursive=True)
    return sorted(files + glob.glob(os.path.join(root, "labs", "*", "handout.rst")))


def check_build(build):
    html_dir = os.path.join(build, "book", "html")
    xml_dir = os.path.join(build, "book", "doxygen", "xml")
    for d in (html_dir, xml_dir):
        if not os.path.isdir(d):
            return [f"{d} is missing: build the book first (make book)"], 0, 0
    problems, entries = check_html(html_dir)
    problems += check_xml_dashes(xml_dir)
    compounds = rendered_compounds(book_rst_files(ROOT))
    problems += check_members(xml_dir, compounds)
    return problems, entries, len(compounds)


# --- self-test --------------------------------------------------------------

PLANTED_HEADER = """\
namespace planted {
/// Runs the test (checks the PANIC with tools/run --expect-panic).
void dashes();
/// Prints "PANIC <message>" as a record; src/arch/<arch>/ holds the rest.
void quoted();
/// A struct whose second member has no doc comment.
struct Pair {
    int first; ///< documented
    int second;
};
}
"""


def run_doxygen(header_dir, out_dir, filtered):
    """Runs Doxygen (XML only) over @header_dir, through book/doxygen_filter.py
    when @filtered; returns the XML directory."""
    # Paths are quoted for Doxygen, and the filter's for the shell that
    # Doxygen runs it with: a checkout's folder name may hold a space.
    config = (f'INPUT = "{header_dir}"\nFILE_PATTERNS = *.h\nGENERATE_XML = YES\n'
              f'GENERATE_HTML = NO\nGENERATE_LATEX = NO\nQUIET = YES\nWARNINGS = NO\n'
              f'OUTPUT_DIRECTORY = "{out_dir}"\n')
    if filtered:
        command = shlex.join([sys.executable, os.path.join(ROOT, "book", "doxygen_filter.py")])
        config += f'INPUT_FILTER = "{command}"\n'
    subprocess.run(["doxygen", "-"], input=config, text=True, check=True, capture_output=True)
    return os.path.join(out_dir, "xml")


def self_test():
    if not shutil.which("doxygen"):
        print("check_api_docs: SKIP: doxygen is missing (Debian package doxygen)")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        # 1. Planted pages: each defect is found, the clean entry is not.
        site = os.path.join(tmp, "html")
        os.makedirs(site)

        def entry(ident, description):
            return (f'<dl class="cpp function">\n<dt class="sig sig-object cpp" id="{ident}">'
                    f'<span class="pre">{ident}</span></dt>\n<dd>{description}</dd></dl>\n')
        with open(os.path.join(site, "page.html"), "w") as f:
            f.write(entry("escaped", "<p>Prints &quot;PANIC \\&lt;message\\&gt;&quot;.</p>")
                    + entry("entity", "<p>with tools/run &amp;#8212;expect-panic.</p>")
                    + entry("dashed", "<p>with tools/run \u2013expect-panic.</p>")
                    + entry("empty", "\n")
                    + entry("clean", "<p>Returns x &lt; y -- or not.</p>"))
        problems, entries = check_html(site)
        expected = ["page.html: a visible escape backslash", "page.html: an entity printed",
                    "page.html: dashed: a dash", "page.html: empty: the function has no desc"]
        for e in expected:
            if not any(p.startswith(e) for p in problems):
                failures.append(f"the planted defect '{e}' was not found")
        if any("clean" in p for p in problems) or entries != 5:
            failures.append(f"the clean entry was flagged, or entries miscounted: {problems}")

        # 2. The real filter and Doxygen over the comments that used to break:
        # without the filter the check finds the dash; with it, nothing.
        src = os.path.join(tmp, "src")
        os.makedirs(src)
        with open(os.path.join(src, "planted.h"), "w") as f:
            f.write(PLANTED_HEADER)
        raw = run_doxygen(src, os.path.join(tmp, "raw"), filtered=False)
        if not any("dashes" in p for p in check_xml_dashes(raw)):
            failures.append("without the filter, '--' did not show up as a dash in the XML")
        clean = run_doxygen(src, os.path.join(tmp, "filtered"), filtered=True)
        if check_xml_dashes(clean):
            failures.append(f"with the filter, a dash is left: {check_xml_dashes(clean)}")
        xml_text = "".join(open(p, encoding="utf-8").read()
                           for p in glob.glob(os.path.join(clean, "*.xml")))
        for wanted in ("tools/run --expect-panic", "&quot;PANIC &lt;message&gt;&quot;",
                       "src/arch/&lt;arch&gt;/"):
            if wanted not in xml_text:
                failures.append(f"with the filter, the XML lacks {wanted!r}")
        if "\\&lt;" in xml_text:
            failures.append("with the filter, a backslash is left before '<' in the XML")

        # 3. An undocumented member of a rendered struct, and a :members: name
        # that does not exist, are found.
        rst = os.path.join(tmp, "page.rst")
        with open(rst, "w") as f:
            f.write(".. doxygenstruct:: planted::Pair\n   :members: first, second, third\n")
        problems = check_members(clean, rendered_compounds([rst]))
        for e in ("planted::Pair::second has no doc comment", "has no public member third"):
            if not any(e in p for p in problems):
                failures.append(f"'{e}' was not found: {problems}")
        if any("Pair::first" in p for p in problems):
            failures.append(f"the documented member was flagged: {problems}")
    for f in failures:
        print("check_api_docs: FAIL:", f)
    if failures:
        return 1
    print("check_api_docs: every planted defect was found; the filter prints the comments "
          "that used to break as written")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 1:
        print(__doc__)
        return 2
    problems, entries, compounds = check_build(argv[0])
    for p in problems:
        print(p)
    if problems:
        print(f"check_api_docs: FAIL: {len(problems)} defect(s) in the rendered API entries")
        return 1
    if entries == 0:
        print("check_api_docs: FAIL: no rendered API entry found: is this the book's HTML?")
        return 1
    print(f"check_api_docs: {entries} rendered API entries and {compounds} structs/classes "
          "checked: no escape artifact, no dash from '--', no empty description, no "
          "undocumented member")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
