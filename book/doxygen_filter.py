#!/usr/bin/python3
"""Doxygen input filter for Toll (book/Doxyfile, INPUT_FILTER).

Kernel comments are written for people: they say "#GP", "#address-cells",
"src/arch/<arch>/" and "%d". Doxygen would read those as a link request, an
HTML tag and a no-autolink marker, warn, and drop characters from the book.
This filter escapes them inside doc comments only (after /// or //!, or in a
/** */ block), line for line, so that line numbers in warnings stay right.
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


def escape_tag(match):
    if match.group(2).lower() in HTML_TAGS:
        return match.group(0)
    return "\\<" + match.group(1) + match.group(2) + "\\>"


def escape(text):
    # Leave `code spans` alone: Doxygen prints them verbatim already.
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        part = HASH.sub(r"\\#", parts[i])
        part = PERCENT.sub(r"\\%", part)
        parts[i] = TAG.sub(escape_tag, part)
    return "`".join(parts)


def filter_line(line, in_block):
    """Returns (filtered line, whether a /** block is still open after it)."""
    if in_block:
        end = line.find("*/")
        if end < 0:
            return escape(line), True
        return escape(line[:end]) + line[end:], False
    for marker in ("///", "//!"):
        at = line.find(marker)
        if at >= 0:
            return line[:at + 3] + escape(line[at + 3:]), False
    at = line.find("/**")
    if at >= 0 and not line.startswith("/**/", at):
        rest = line[at + 3:]
        end = rest.find("*/")
        if end >= 0:
            return line[:at + 3] + escape(rest[:end]) + rest[end:], False
        return line[:at + 3] + escape(rest), True
    return line, False


def main(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out = []
    in_block = False
    for line in lines:
        line, in_block = filter_line(line, in_block)
        out.append(line)
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
