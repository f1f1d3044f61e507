"""The serial protocol (book/appendix/interfaces.rst), parsed: TEST, METRIC, COUNTER, PANIC,
DONE.

Used by tools/run (live, line by line), tools/bench and tools/grade. A record
may carry a nonce prefix ("@<nonce> TEST x PASS"); when a nonce is expected,
records without it (or with another) are not trusted and only counted.
"""

import re
from typing import Any

RECORD = re.compile(
    r"^(?:@(?P<nonce>[0-9A-Za-z_-]+) )?"
    r"(?P<kind>TEST|METRIC|COUNTER|PANIC|DONE)(?: (?P<rest>.*))?$")
TEST = re.compile(r"^(?P<name>\S+) (?P<status>PASS|FAIL|SKIP)(?: (?P<reason>.*))?$")
METRIC = re.compile(r"^(?P<name>\S+) (?P<value>-?\d+) (?P<unit>\S+)$")
COUNTER = re.compile(r"^(?P<name>\S+) (?P<value>\d+)$")
DONE = re.compile(
    r"^(?P<passed>\d+) passed, (?P<failed>\d+) failed(?:, (?P<skipped>\d+) skipped)?$")


class Records:
    """Everything a run reported, built up one line at a time."""

    def __init__(self, nonce: str | None = None) -> None:
        self.nonce = nonce
        self.tests: dict[str, dict[str, str]] = {}  # name -> {"status", "reason"}
        self.test_order: list[str] = []
        self.metrics: dict[str, dict[str, Any]] = {}  # name -> {"value": int, "unit": str}
        self.counters: dict[str, int] = {}  # name -> value
        self.panic: str | None = None
        self.done: dict[str, int] | None = None  # {"passed", "failed", "skipped"}
        self.malformed: list[str] = []  # record-like lines that did not parse
        self.untrusted = 0  # records without the expected nonce
        self.garbage_lines = 0  # lines that were not text at all
        self.lines = 0

    def feed(self, raw: bytes | str) -> None:
        """Takes one line of console output (bytes or str, without newline)."""
        self.lines += 1
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.garbage_lines += 1
                return
        else:
            line = raw
        line = line.rstrip("\r\n")
        if any(ord(c) < 32 and c not in "\t\r" for c in line):
            self.garbage_lines += 1
            return
        m = RECORD.match(line)
        if not m:
            return
        if self.nonce is not None and m.group("nonce") != self.nonce:
            self.untrusted += 1
            return
        kind, rest = m.group("kind"), m.group("rest") or ""
        if kind == "TEST":
            t = TEST.match(rest)
            if not t:
                self.malformed.append(line)
                return
            name = t.group("name")
            if name not in self.tests:
                self.test_order.append(name)
            elif self.tests[name]["status"] == "FAIL":
                return  # a later PASS cannot wash out a FAIL of the same test
            self.tests[name] = {"status": t.group("status"), "reason": t.group("reason") or ""}
        elif kind == "METRIC":
            t = METRIC.match(rest)
            if not t:
                self.malformed.append(line)
                return
            self.metrics[t.group("name")] = {"value": int(t.group("value")),
                                             "unit": t.group("unit")}
        elif kind == "COUNTER":
            t = COUNTER.match(rest)
            if not t:
                self.malformed.append(line)
                return
            self.counters[t.group("name")] = int(t.group("value"))
        elif kind == "PANIC":
            if self.panic is None:
                self.panic = rest
        elif kind == "DONE":
            t = DONE.match(rest)
            if not t:
                self.malformed.append(line)
                return
            self.done = {k: int(v or 0) for k, v in t.groupdict().items()}

    def failed_tests(self) -> list[str]:
        return [n for n in self.test_order if self.tests[n]["status"] == "FAIL"]

    def outcome(self) -> str:
        """The verdict for a run whose output has ended ("done" is success)."""
        if self.panic is not None:
            return "panic"
        if self.done is None:
            return "incomplete"
        if self.malformed:
            return "malformed"
        if self.done["failed"] or self.failed_tests():
            return "failed"
        counted = self.done["passed"] + self.done["failed"] + self.done["skipped"]
        if self.tests and counted != len(self.tests):
            return "malformed"
        return "done"

    def summary(self) -> dict[str, Any]:
        return {
            "tests": {n: self.tests[n] for n in self.test_order},
            "metrics": self.metrics,
            "counters": self.counters,
            "panic": self.panic,
            "done": self.done,
            "malformed": self.malformed,
            "untrusted_records": self.untrusted,
            "garbage_lines": self.garbage_lines,
            "lines": self.lines,
        }


def parse_text(data: bytes, nonce: str | None = None) -> Records:
    """Parses a whole recorded console output (bytes)."""
    records = Records(nonce)
    for raw in data.split(b"\n"):
        records.feed(raw)
    return records
