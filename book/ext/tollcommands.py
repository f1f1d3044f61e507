"""Commands in the book that are checked, not just printed (a Sphinx extension).

    .. command::
       :run:
       :expect: METRIC lat_syscall.getppid

       tools/run --deterministic --cmdline 'vm.split=3/1 run=lat_syscall -n 20000'

shows each line of the content as a shell command. While the book builds,
every command is checked: its program must exist (tools/<x> in the
repository, a `make` target of the Makefile, or a program on PATH), each
--option it gives a tools/ script must appear in that script's --help, and a
`run=<program>` on a kernel command line must name a program of src/user/.
A failed check is a build error. All commands go to
<build>/book/commands.json; those marked :run: are also executed, from the
top of the repository, by the ctest test book.commands (tools/book
--run-commands), which fails when one exits non-zero or its output does not
match :expect: (a regular expression).
"""

import json
import os
import re
import shlex
import shutil
import subprocess

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

BOOK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BOOK)
log = logging.getLogger("tollcommands")
_help_cache = {}
_programs = None


def user_programs():
    global _programs
    if _programs is None:
        _programs = set()
        for folder, _, files in os.walk(os.path.join(ROOT, "src", "user")):
            for name in files:
                base, ext = os.path.splitext(name)
                if ext in (".c", ".cpp", ".S"):
                    _programs.add(base)
    return _programs


def make_targets():
    with open(os.path.join(ROOT, "Makefile")) as f:
        text = f.read()
    return set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:", text, re.M))


def tool_help(tool):
    if tool not in _help_cache:
        proc = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, tool), "--help"],
                              capture_output=True, text=True, cwd=ROOT)
        _help_cache[tool] = proc.stdout + proc.stderr
    return _help_cache[tool]


def check(command):
    """The problems with one command line, in words (empty: it is fine)."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        return [f"cannot be split into words: {e}"]
    if not words:
        return ["is empty"]
    problems = []
    first = words[0]
    if first.startswith("tools/"):
        path = os.path.join(ROOT, first)
        if not os.access(path, os.X_OK):
            return [f"{first} does not exist in the repository"]
        text = tool_help(first)
        for w in words[1:]:
            if w.startswith("--"):
                option = w.split("=", 1)[0]
                if not re.search(re.escape(option) + r"\b", text):
                    problems.append(f"{first} has no option {option} (see {first} --help)")
        for i, w in enumerate(words):
            if i > 0 and words[i - 1] == "--cmdline":
                for program in re.findall(r"\brun=(?:/bin/)?([\w.-]+)", w):
                    if program not in user_programs():
                        problems.append(f"run={program}: no such program in src/user/")
    elif first == "make":
        targets = make_targets()
        for w in words[1:]:
            if "=" not in w and not w.startswith("-") and w not in targets:
                problems.append(f"make has no target '{w}' (see the Makefile)")
    elif not shutil.which(first) and first not in ("cd", "export"):
        problems.append(f"{first} is neither a tool of the repository nor on PATH")
    return problems


class Command(SphinxDirective):
    has_content = True
    option_spec = {"run": directives.flag, "expect": directives.unchanged,
                   "timeout": directives.positive_int}

    def run(self):
        commands = [line.strip() for line in self.content if line.strip()]
        if not commands:
            return [self.state.document.reporter.error("command: no command given",
                                                       line=self.lineno)]
        out = []
        line = self.get_source_info()[1]
        for offset, command in enumerate(commands):
            for problem in check(command):
                out.append(self.state.document.reporter.error(
                    f"command `{command}`: {problem}", line=self.lineno))
            self.env.toll_commands.setdefault(self.env.docname, []).append({
                "doc": self.env.docname, "line": line, "command": command,
                "run": "run" in self.options, "expect": self.options.get("expect"),
                "timeout": self.options.get("timeout", 120)})
        text = "\n".join("$ " + c for c in commands)
        block = nodes.literal_block(text, text, language="console")
        self.set_source_info(block)
        return out + [block]


def _init(app):
    if not hasattr(app.env, "toll_commands"):
        app.env.toll_commands = {}


def _purge(app, env, docname):
    getattr(env, "toll_commands", {}).pop(docname, None)


def _write(app, exception):
    if exception:
        return
    listing = [c for doc in sorted(app.env.toll_commands) for c in app.env.toll_commands[doc]]
    with open(os.path.join(app.outdir, "..", "commands.json"), "w") as f:
        json.dump(listing, f, indent=1)


def setup(app):
    app.add_directive("command", Command)
    app.connect("builder-inited", _init)
    app.connect("env-purge-doc", _purge)
    app.connect("build-finished", _write)
    return {"version": "1", "parallel_read_safe": False, "env_version": 1}
