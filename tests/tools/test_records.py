#!/usr/bin/python3
"""Tests of tools/run's record parser (tools/lib/records.py): recorded console
outputs, clean, failing, panicking, truncated, garbage and forged, parsed with
`tools/run --parse`, must give the right verdict and exit status.

Run by ctest as tools.records (PYTHONPATH=tools), or by hand:
    PYTHONPATH=tools python3 tests/tools/test_records.py
"""

import json
import os
import subprocess
import sys
import unittest

from lib.records import parse_text

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def parse(log, nonce=None):
    """Runs `tools/run --parse <log> --json -`; returns (summary, exit status)."""
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run"), "--parse",
           os.path.join(HERE, "records", log), "--json", "-"]
    if nonce:
        cmd += ["--nonce", nonce]
    result = subprocess.run(cmd, capture_output=True, text=True)
    return json.loads(result.stdout), result.returncode


class RecordParser(unittest.TestCase):
    def test_clean_run_is_done_and_exits_0(self):
        summary, status = parse("clean.log")
        self.assertEqual(status, 0)
        self.assertEqual(summary["outcome"], "done")
        self.assertEqual(summary["metrics"]["kern.loop_100k"], {"value": 400012, "unit": "cycles"})
        self.assertEqual(summary["counters"]["cpu.syscalls"], 12)
        self.assertEqual(summary["done"], {"passed": 2, "failed": 0, "skipped": 0})

    def test_failed_test_fails_the_run_and_a_later_pass_cannot_hide_it(self):
        summary, status = parse("failed.log")
        self.assertNotEqual(status, 0)
        self.assertEqual(summary["outcome"], "failed")
        self.assertIn("expected x == y", summary["tests"]["kern.b"]["reason"])
        summary, status = parse("fail_then_pass.log")
        self.assertNotEqual(status, 0)
        self.assertIn("FAIL", [t["status"] for t in summary["tests"].values()])

    def test_panic_truncation_garbage_and_malformed_records_are_not_successes(self):
        for log, outcome in (("panic.log", "panic"), ("truncated.log", "incomplete"),
                             ("garbage.log", "garbage"), ("malformed.log", "malformed")):
            with self.subTest(log=log):
                summary, status = parse(log)
                self.assertNotEqual(status, 0)
                self.assertEqual(summary["outcome"], outcome)
        summary, _ = parse("panic.log")
        self.assertIn("kernel page fault", summary["panic"])

    def test_with_a_nonce_untagged_records_earn_nothing(self):
        summary, status = parse("forged_pass.log", "c0ffee")
        self.assertEqual(status, 0)  # the real, tagged run passed
        self.assertEqual(summary["untrusted_records"], 2)
        self.assertNotIn("kern.evil", summary["tests"])  # the forged PASS is not a test
        summary, status = parse("forged_fail.log", "c0ffee")
        self.assertNotEqual(status, 0)  # forged PASS lines cannot hide a FAIL
        self.assertEqual(summary["untrusted_records"], 2)
        self.assertNotIn("kern.fake", summary["tests"])
        summary, status = parse("clean.log", "c0ffee")
        self.assertNotEqual(status, 0)  # nothing tagged: nothing trusted
        self.assertEqual(summary["outcome"], "incomplete")

    def test_parse_text_reads_the_same_records_as_the_command(self):
        with open(os.path.join(HERE, "records", "clean.log"), "rb") as f:
            records = parse_text(f.read())
        self.assertEqual(records.outcome(), "done")
        self.assertEqual(records.metrics["kern.loop_100k"]["value"], 400012)


if __name__ == "__main__":
    unittest.main()
