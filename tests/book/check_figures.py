#!/usr/bin/python3
"""The book's figures as a reader meets them: numbered, referenced by number,
no wider than the text column, and with no text too small to read.

    check_figures.py HTML_DIR      check the built book (e.g. build/book/html)
    check_figures.py --self-test   check a scratch site with one planted
                                   defect of each kind: every one must be found

For every <figure> of every page:
* it carries a number (Sphinx numfig's span.caption-number); a figure without
  one cannot be referred to by number;
* some page links to it with text that starts with "Figure" (:numref:), and
  no link to it prints its caption instead (:ref:);
* its image, at the size it is drawn (an <img> width overrides it), is no
  wider than the text column: alabaster's page_width less its sidebar_width
  and the body's padding, both read from book/conf.py;
* every text of its SVG, scaled as the browser scales it (the SVG's width
  over its viewBox, and every scale or matrix transform above the text), is
  at least MIN_TEXT_PT points. That is also the size on paper, since a column
  no wider than the printed one is not shrunk to print.
"""

import html.parser
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONF = os.path.join(ROOT, "book", "conf.py")

MIN_TEXT_PT = 7.0      # the smallest type a printed book sets (footnotes, labels)
PX_PER_PT = 96 / 72    # CSS: 1pt = 4/3 px
BODY_PADDING_PX = 60   # alabaster's div.body: padding 0 30px on each side
UNIT_PX = {"px": 1.0, "pt": PX_PER_PT, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "": 1.0}


def column_px(conf=CONF):
    with open(conf) as f:
        text = f.read()
    page = re.search(r'"page_width":\s*"(\d+)px"', text)
    side = re.search(r'"sidebar_width":\s*"(\d+)px"', text)
    if not page or not side:
        raise SystemExit(f"{conf}: html_theme_options must set page_width and sidebar_width "
                         "in px (the column the figures must fit)")
    return int(page.group(1)) - int(side.group(1)) - BODY_PADDING_PX


def length_px(value):
    m = re.fullmatch(r"\s*([\d.]+)\s*([a-z]*)\s*", value or "")
    if not m or m.group(2) not in UNIT_PX:
        return None
    return float(m.group(1)) * UNIT_PX[m.group(2)]


def transform_scale(value):
    """The scale factor of an SVG transform list (the geometric mean of x and y)."""
    scale = 1.0
    for name, args in re.findall(r"(\w+)\s*\(([^)]*)\)", value or ""):
        nums = [float(a) for a in re.split(r"[\s,]+", args.strip()) if a]
        if name == "scale" and nums:
            sx, sy = nums[0], nums[1] if len(nums) > 1 else nums[0]
            scale *= (abs(sx * sy)) ** 0.5
        elif name == "matrix" and len(nums) == 6:
            a, b, c, d = nums[:4]
            scale *= abs(a * d - b * c) ** 0.5
    return scale


def font_size(element):
    size = element.get("font-size")
    style = element.get("style") or ""
    m = re.search(r"font-size\s*:\s*([\d.]+\w*)", style) or re.search(
        r"font\s*:\s*(?:[a-z-]+\s+)*([\d.]+(?:px|pt)?)", style)
    if m:
        size = m.group(1)
    return length_px(size) if size else None


def svg_problems(path, shown_width_px, column):
    """Problems of one SVG drawn @shown_width_px wide (None: its own width)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        return [f"cannot read {path}: {e}"]
    width = length_px(root.get("width"))
    box = [float(v) for v in re.split(r"[\s,]+", root.get("viewBox", "").strip()) if v]
    if width is None and len(box) == 4:
        width = box[2]
    if width is None:
        return [f"{os.path.basename(path)}: the SVG has no width"]
    shown = shown_width_px or width
    problems = []
    if shown > column + 0.5:
        problems.append(f"{os.path.basename(path)} is {shown:.0f} px wide, the column "
                        f"{column} px: the browser shrinks it and every text with it")
    # A user unit in CSS px: the SVG's width over its viewBox, then as shown.
    unit = (width / box[2] if len(box) == 4 and box[2] else 1.0) * min(shown, column) / width
    smallest = None

    def walk(node, scale, inherited):
        nonlocal smallest
        scale *= transform_scale(node.get("transform"))
        size = font_size(node) or inherited
        tag = node.tag.rsplit("}", 1)[-1]
        if tag in ("text", "tspan") and size and "".join(node.itertext()).strip():
            pt = size * scale * unit / PX_PER_PT
            if smallest is None or pt < smallest[0]:
                smallest = (pt, "".join(node.itertext()).strip()[:40])
        for child in node:
            walk(child, scale, size)
    walk(root, 1.0, None)
    if smallest and smallest[0] < MIN_TEXT_PT - 0.05:
        problems.append(f"{os.path.basename(path)}: text '{smallest[1]}' is {smallest[0]:.1f} pt "
                        f"on the page, below {MIN_TEXT_PT:g} pt")
    return problems


class Page(html.parser.HTMLParser):
    """The figures of one HTML page and the links out of it."""

    def __init__(self):
        super().__init__()
        self.figures = []   # dicts: id, img, width, numbered
        self.links = []     # (href, text)
        self._figure = None
        self._link = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure":
            self._figure = {"id": a.get("id"), "img": None, "width": None, "numbered": False}
            self.figures.append(self._figure)
        elif tag == "img" and self._figure is not None and self._figure["img"] is None:
            self._figure["img"] = a.get("src")
            w = a.get("width") or (re.search(r"width\s*:\s*([\d.]+\w*)", a.get("style") or "")
                                   or [None, None])[1]
            self._figure["width"] = length_px(w) if w and not w.endswith("%") else None
        elif (tag == "span" and self._figure is not None
              and "caption-number" in (a.get("class") or "")):
            self._figure["numbered"] = True
        elif tag == "a" and a.get("href") and "headerlink" not in (a.get("class") or ""):
            self._link = [a["href"], ""]

    def handle_data(self, data):
        if self._link is not None:
            self._link[1] += data

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = None
        elif tag == "a" and self._link is not None:
            self.links.append(tuple(self._link))
            self._link = None


def check(html_dir, column=None):
    column = column or column_px()
    pages = {}
    for folder, _, files in os.walk(html_dir):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                page = Page()
                with open(path, encoding="utf-8") as f:
                    page.feed(f.read())
                pages[os.path.relpath(path, html_dir)] = page
    refs = {}  # (page, id) -> link texts
    for rel, page in pages.items():
        for href, text in page.links:
            if "://" in href or "#" not in href:
                continue
            target, _, anchor = href.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(rel), target)) if target else rel
            refs.setdefault((target, anchor), []).append(" ".join(text.split()))
    problems, count = [], 0
    for rel, page in sorted(pages.items()):
        for fig in page.figures:
            count += 1
            where = f"{rel}#{fig['id']}"
            if not fig["numbered"]:
                problems.append(f"{where}: the figure has no number (a toll-figure needs a "
                                "caption, and conf.py numfig = True)")
            texts = refs.get((rel, fig["id"]), [])
            by_caption = [t for t in texts if not t.startswith("Figure")]
            if by_caption:
                problems.append(f"{where}: referenced by its caption ('{by_caption[0][:50]}'); "
                                "write :numref:`" + str(fig["id"]) + "`")
            if not any(t.startswith("Figure") for t in texts):
                problems.append(f"{where}: no text refers to it by number (:numref:)")
            if fig["img"] and fig["img"].endswith(".svg"):
                svg = os.path.normpath(os.path.join(html_dir, os.path.dirname(rel), fig["img"]))
                problems += [f"{where}: {p}" for p in svg_problems(svg, fig["width"], column)]
    return count, problems


# --- the self-test: one planted defect of each kind --------------------------

GOOD_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="300pt" height="100pt" '
            'viewBox="0 0 300 100"><g transform="scale(1 1)"><text font-size="10">ok</text>'
            '</g></svg>')
WIDE_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="1200pt" height="100pt" '
            'viewBox="0 0 1200 100"><text font-size="14">wide</text></svg>')
TINY_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="300pt" height="100pt" '
            'viewBox="0 0 300 100"><g transform="scale(0.5)"><text style="font: 10px sans">tiny'
            '</text></g></svg>')


def figure(fid, svg, numbered=True):
    number = '<span class="caption-number">Figure 1.1 </span>' if numbered else ""
    return (f'<figure id="{fid}"><img alt="a" src="{svg}"/><figcaption><p>{number}'
            f'<span class="caption-text">A caption</span></p></figcaption></figure>')


def self_test():
    planted = {"figure-unnumbered": "has no number", "figure-wide": "px wide, the column",
               "figure-tiny": "below 7 pt", "figure-bycaption": "referenced by its caption",
               "figure-unreferenced": "no text refers to it by number"}
    with tempfile.TemporaryDirectory() as site:
        for name, text in (("good.svg", GOOD_SVG), ("wide.svg", WIDE_SVG), ("tiny.svg", TINY_SVG)):
            with open(os.path.join(site, name), "w") as f:
                f.write(text)
        body = "".join([figure("figure-good", "good.svg"),
                        figure("figure-unnumbered", "good.svg", numbered=False),
                        figure("figure-wide", "wide.svg"), figure("figure-tiny", "tiny.svg"),
                        figure("figure-bycaption", "good.svg"),
                        figure("figure-unreferenced", "good.svg")])
        links = "".join(f'<a href="#{fid}">Figure 1.{n}</a>' for n, fid in enumerate(
            ["figure-good", "figure-unnumbered", "figure-wide", "figure-tiny",
             "figure-bycaption"]))
        links += '<a href="page.html#figure-bycaption">A caption</a>'
        with open(os.path.join(site, "page.html"), "w") as f:
            f.write(f"<html><body>{body}<p>{links}</p></body></html>")
        _, problems = check(site, column=660)
    failed = 0
    for fid, words in planted.items():
        if not any(p.startswith(f"page.html#{fid}:") and words in p for p in problems):
            print(f"FAIL: the planted defect of {fid} ({words}) was not found")
            failed += 1
    wrong = [p for p in problems if p.startswith("page.html#figure-good:")]
    for p in wrong:
        print(f"FAIL: a sound figure was refused: {p}")
    if failed or wrong:
        return 1
    print(f"OK: all {len(planted)} planted figure defects found, the sound figure passed")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 1:
        sys.exit(__doc__)
    count, problems = check(argv[0])
    for p in problems:
        print(f"FAIL {p}")
    if not count:
        print(f"FAIL: no figure in {argv[0]}")
        return 1
    if problems:
        print(f"FAILED: {len(problems)} problem(s) in {count} figure(s)")
        return 1
    print(f"OK: {count} figures, each numbered, referenced by number, within the "
          f"{column_px()} px column and no text below {MIN_TEXT_PT:g} pt")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
