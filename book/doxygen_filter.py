#!/usr/bin/python3
"""Doxygen input filter for Toll (book/Doxyfile, INPUT_FILTER).

Kernel comments are written for people: they say "#GP", "#address-cells",
"src/arch/<arch>/", "%d" and "tools/run --expect-panic". Doxygen would read
those as a link request, an HTML tag, a no-autolink marker and an en dash
(which Breathe then prints as the entity text "&#8212;"), warn, and drop or
change characters in the book. This filter escapes them inside doc comments
only (after /// or //!, or in a /** */ block), so that the book shows what the
comment says.

Doxygen prints two kinds of span verbatim and does not process a backslash
in them: a `code span` and a "quoted string" (one that closes within its
paragraph). Escaping inside them would put a visible backslash into the book
("PANIC \\<message\\>"), so they are left alone. Both may run over several
comment lines; the filter therefore reads a comment a paragraph at a time.
It never adds or removes a line, so line numbers in warnings stay right.
"""

import re
import sys

# HTML tags that Doxygen understands and that a comment may mean as HTML.
HTML_TAGS = {"a", "b", "br", "blockquote", "caption", "center", "code", "dd", "div", "dl",
             "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "li", "ol",
             "p", "pre", "small", "span", "strike", "strong", "sub", "sup", "table", "td",
             "th", "tr", "tt", "u", "ul", "var", "kbd", "s", "del", "ins", "details",
             "summary"}

HASH = re.compile(r"(?<![\\\w&])#(?=[A-Za-z_])")
PERCENT = re.compile(r"(?<![\\%])%(?=[A-Za-z_])")
TAG = re.compile(r"<(/?)([A-Za-z][\w.-]*)>")
# "--" and "---" are Doxygen's en and em dash; "\--" and "\---" print the dashes.
DASHES = re.compile(r"(?<![-\\])-{2,}")


def escape_tag(match):
    if match.group(2).lower() in HTML_TAGS:
        return match.group(0)
    return "\\<" + match.group(1) + match.group(2) + "\\>"


def escape_plain(text):
    text = HASH.sub(r"\\#", text)
    text = PERCENT.sub(r"\\%", text)
    text = DASHES.sub(lambda m: "\\--" * (len(m.group(0)) // 2) + "-" * (len(m.group(0)) % 2),
                      text)
    return TAG.sub(escape_tag, text)


def escape(text):
    """Escapes one paragraph of doc comment text (lines joined by newlines),
    leaving `code spans` and closed "quoted strings" as they are."""
    out = []
    plain_from = 0
    i = 0
    while i < len(text):
        if text[i] in "`\"":
            end = text.find(text[i], i + 1)
            if end >= 0:
                out.append(escape_plain(text[plain_from:i]))
                out.append(text[i:end + 1])
                i = plain_from = end + 1
                continue
        i += 1
    out.append(escape_plain(text[plain_from:]))
    return "".join(out)


def split_comment(line, in_block):
    """Splits a source line into (before, doc text, after, kind, block still
    open), kind being "line" for a /// or //! comment, "block" for a line of a
    /** block, or None when the line holds no doc comment text."""
    if in_block:
        end = line.find("*/")
        if end < 0:
            return "", line, "", "block", True
        return "", line[:end], line[end:], "block", False
    for marker in ("///", "//!"):
        at = line.find(marker)
        if at >= 0:
            kind = "line" if not line[:at].strip() else "trailing"
            return line[:at + 3], line[at + 3:], "", kind, False
    at = line.find("/**")
    if at >= 0 and not line.startswith("/**/", at):
        rest = line[at + 3:]
        end = rest.find("*/")
        if end >= 0:
            return line[:at + 3], rest[:end], rest[end:], "trailing", False
        return line[:at + 3], rest, "", "block", True
    return line, "", "", None, False


def filter_lines(lines):
    """Returns the lines with every doc comment escaped."""
    out = list(lines)
    para = []  # (index, before, text, after) of the paragraph being read

    def flush():
        if para:
            joined = escape("\n".join(text for _, _, text, _ in para)).split("\n")
            for (index, before, _, after), text in zip(para, joined):
                out[index] = before + text + after
            para.clear()

    in_block = False
    previous = None
    for index, line in enumerate(lines):
        before, text, after, kind, in_block_next = split_comment(line, in_block)
        # A paragraph ends at a blank comment line, at the end of a comment,
        # and where a comment of another kind begins.
        starts_block = kind == "block" and not in_block
        if kind is None or kind == "trailing" or kind != previous or starts_block \
                or not text.strip(" \t*"):
            flush()
        if kind is not None:
            para.append((index, before, text, after))
            if kind == "trailing" or not in_block_next and kind == "block":
                flush()
        previous = kind if kind != "trailing" else None
        in_block = in_block_next
    flush()
    return out


def main(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    sys.stdout.write("\n".join(filter_lines(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
