#!/usr/bin/python3
"""Tests of what the grader tells and writes, without building anything:
where a student's files were found (or why not), submission forms, batch
names and shards, the worksheet's errors, results.json and JUnit on a grader
error, console items and the rubric's promise about them, the audit's one
line, the similarity of renamed copies, and the GitHub Classroom workflow
that tools/mklab puts in a starter."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# tools/lib, through PYTHONPATH=tools (ctest sets it).
from lib import (lab_audit, lab_batch, lab_grade, lab_package, lab_report,  # noqa: E402
                 lab_rubric, lab_submission)

FILES = ["src/lib/cmdline.cpp", "labs/lab-demo/results.toml"]


def write(path, text="x\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Locate(unittest.TestCase):
    def setUp(self):
        self.sub = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.sub)

    def test_at_its_place(self):
        write(os.path.join(self.sub, FILES[0]))
        path, note = lab_submission.locate(FILES[0], self.sub, FILES)
        self.assertEqual(path, os.path.join(self.sub, FILES[0]))
        self.assertEqual(note, "")

    def test_flat_and_nested_uploads_are_used_and_said(self):
        write(os.path.join(self.sub, "cmdline.cpp"))
        path, note = lab_submission.locate(FILES[0], self.sub, FILES)
        self.assertTrue(path and "without its folders" in note)
        shutil.rmtree(self.sub)
        write(os.path.join(self.sub, "my-repo", FILES[0]))
        path, note = lab_submission.locate(FILES[0], self.sub, FILES)
        self.assertTrue(path and "nested one folder deep" in note, note)

    def test_a_symlink_or_an_oversized_file_is_refused_and_said(self):
        os.makedirs(os.path.join(self.sub, "src", "lib"))
        os.symlink("/etc/passwd", os.path.join(self.sub, FILES[0]))
        path, _ = lab_submission.locate(FILES[0], self.sub, FILES)
        text, why = lab_submission.read_student(path, self.sub)
        self.assertIsNone(text)
        self.assertIn("symbolic link", why)
        os.unlink(os.path.join(self.sub, FILES[0]))
        os.link(__file__, os.path.join(self.sub, FILES[0]))
        text, why = lab_submission.read_student(path, self.sub)
        self.assertIsNone(text)
        self.assertIn("hard link", why)
        os.unlink(os.path.join(self.sub, FILES[0]))
        with open(os.path.join(self.sub, FILES[0]), "wb") as f:
            f.truncate(lab_submission.MAX_STUDENT_FILE + 1)
        text, why = lab_submission.read_student(path, self.sub)
        self.assertIsNone(text)
        self.assertIn("over the", why)

    def test_a_missing_file_is_said_by_assemble(self):
        rubric = lab_rubric.find(ROOT, "demo")
        grade = lab_grade.Grade(rubric, self.sub)
        tree = os.path.join(self.sub, "..", os.path.basename(self.sub) + "-tree")
        try:
            lab_submission.assemble(grade, ROOT, FILES + ["src/lib/cmdline.h"], self.sub, tree)
            self.assertEqual(grade.missing, FILES)
            self.assertTrue(all("starter's version was graded" in n for n in grade.notices))
        finally:
            shutil.rmtree(tree, ignore_errors=True)


class Forms(unittest.TestCase):
    def test_zip_patch_bundle_and_unknown(self):
        with tempfile.TemporaryDirectory() as d:
            z = os.path.join(d, "a.zip")
            with zipfile.ZipFile(z, "w") as f:
                f.writestr("format.cpp", "int x;\n")
                f.writestr("../../escape.txt", "no\n")
                info = zipfile.ZipInfo("link.cpp")
                info.external_attr = 0o120777 << 16
                f.writestr(info, "/etc/passwd")
            self.assertEqual(lab_submission.submission_form(z), "zip")
            refused = []
            lab_submission.unzip(z, os.path.join(d, "out"), refused)
            self.assertEqual(sorted(os.listdir(os.path.join(d, "out"))), ["format.cpp"])
            self.assertTrue(any("link.cpp" in r and "symbolic link" in r for r in refused),
                            refused)
            self.assertTrue(any("leaves its folder" in r for r in refused), refused)
            self.assertFalse(os.path.exists(os.path.join(d, "escape.txt")))
            p = os.path.join(d, "a.patch")
            write(p, "diff --git a/x b/x\n")
            self.assertEqual(lab_submission.submission_form(p), "patch")
            u = os.path.join(d, "notes.txt")
            write(u, "hello\n")
            self.assertEqual(lab_submission.submission_form(u), "unknown")


class Batches(unittest.TestCase):
    def test_the_same_student_twice_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "alice"))
            write(os.path.join(d, "alice.patch"))
            write(os.path.join(d, "bob.zip"))
            with self.assertRaises(lab_batch.BatchError) as e:
                lab_batch.entries(d)
            self.assertIn("alice and alice.patch", str(e.exception))

    def test_control_and_bidi_characters_never_reach_the_gradebook(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "mallory\u202egnp.zip"))
            write(os.path.join(d, "eve\x1b[2J.patch"))
            names = [n for _, n in lab_batch.entries(d)]
            self.assertEqual(sorted(names), ["eve_[2J", "mallory_gnp"])

    def test_a_bundle_cut_short_is_refused_not_graded_as_the_starter(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            repo = os.path.join(d, "repo")
            os.makedirs(repo)
            subprocess.run(["git", "init", "-q", repo], check=True)
            write(os.path.join(repo, "f.txt"), "x\n" * 1000)
            subprocess.run(["git", "-C", repo, "add", "f.txt"], check=True)
            subprocess.run(["git", "-C", repo, "-c", "user.name=s", "-c", "user.email=s@x",
                            "commit", "-qm", "m"], check=True)
            bundle = os.path.join(d, "work.bundle")
            subprocess.run(["git", "-C", repo, "bundle", "create", bundle, "--all"],
                           check=True, capture_output=True)
            with open(bundle, "rb") as f:
                data = f.read()
            with open(bundle, "wb") as f:
                f.write(data[:data.index(b"\n") + 1] + b"\n")  # cut after its first line
            grade = lab_grade.Grade(lab_rubric.find(ROOT, "demo"), bundle)
            scratch = os.path.join(d, "scratch")
            os.makedirs(scratch)
            with self.assertRaises(lab_submission.Rejected) as e:
                lab_submission.unpack(grade, ROOT, scratch)
            self.assertIn("cut short", str(e.exception))

    def test_shards_split_every_submission_once(self):
        items = [f"s{i}" for i in range(7)]
        parts = [lab_batch.shard_of(items, (i, 3)) for i in (1, 2, 3)]
        self.assertEqual(sorted(sum(parts, [])), sorted(items))
        for bad in ("0/2", "3/2", "x", "1/0"):
            with self.assertRaises(lab_batch.BatchError):
                lab_batch.parse_shard(bad)

    def test_renamed_and_reformatted_copies_are_the_same(self):
        a = "int total = 0;\nfor (int i = 0; i < n; i++) total += v[i]; // sum\nreturn total;\n"
        b = "int  s=0;   /* mine */\nfor (int k=0;k<n;k++)\n    s += v[k];\nreturn s;\n"
        c = "while (n--) { out[n] = table[value % base]; value /= base; }\nreturn n;\n"
        prints = {n: lab_batch.fingerprint({"x.cpp": t}, "none") for n, t in
                  (("a", a), ("b", b), ("c", c))}
        pairs = lab_batch.similarity(prints)
        self.assertEqual(pairs[0][1:3], ("a", "b"))
        self.assertEqual(pairs[0][0], 1.0)
        self.assertLess(pairs[1][0], 0.3)


class Worksheet(unittest.TestCase):
    def test_malformed_worksheets_are_the_students_problem(self):
        rubric = lab_rubric.find(ROOT, "demo")
        with tempfile.TemporaryDirectory() as tree:
            path = os.path.join(tree, rubric.worksheet)
            os.makedirs(os.path.dirname(path))
            for data, words in ((b'measurements = "x"\n', "must be a table"),
                                (b"[measurements]\nloop_100k = \xff\n", "not UTF-8"),
                                (b"[measurements\n", "not valid TOML"),
                                (b"[measurements]\nloop_100k = true\n", "reports no number")):
                with open(path, "wb") as f:
                    f.write(data)
                grade = lab_grade.Grade(rubric, "alice")
                grade.texts[rubric.worksheet] = data.decode("utf-8", "replace")
                value, why = lab_grade.reported_value(grade, rubric, "loop_100k")
                self.assertIsNone(value)
                self.assertIn(words, why)


class Reports(unittest.TestCase):
    def grade(self, error=None):
        rubric = lab_rubric.find(ROOT, "demo")
        g = lab_grade.Grade(rubric, "alice")
        g.build.status, g.build.reason = "passed", "the submission builds"
        for i, item in enumerate(rubric.items):
            r = lab_grade.Result(item.name, item.points, item.kind)
            r.status = ("passed", "failed", "skipped")[i % 3]
            r.score = item.points if r.status == "passed" else 0
            r.reason = r.status
            g.results.append(r)
        g.error = error
        return g

    def test_a_grader_error_gives_no_score_anywhere(self):
        with tempfile.TemporaryDirectory() as out:
            rec = lab_report.write_all(self.grade("QEMU did not start"), out)
            with open(os.path.join(out, "results.json")) as f:
                results = json.load(f)
            self.assertNotIn("score", results)
            self.assertFalse([t for t in results["tests"] if "score" in t])
            with open(os.path.join(out, "report.txt")) as f:
                self.assertIn("Score: none", f.read())
            cases = list(ET.parse(os.path.join(out, "junit.xml")).iter("testcase"))
            self.assertEqual(cases[-1].get("name"), "grader")
            self.assertIsNotNone(cases[-1].find("error"))
            summary = os.path.join(out, "summary.csv")
            lab_report.write_summary([("alice", rec)], self.grade().rubric, summary)
            with open(summary) as f:
                row = f.read().splitlines()[1].split(",")
            self.assertEqual(row[1], "", "a grader error has no score in the gradebook")

    def test_statuses_points_and_visibility(self):
        with tempfile.TemporaryDirectory() as out:
            lab_report.write_all(self.grade(), out)
            with open(os.path.join(out, "results.json")) as f:
                results = json.load(f)
            tests = {t["name"]: t for t in results["tests"]}
            skipped = [t for t in tests.values() if t["extra_data"]["status"] == "skipped"]
            self.assertTrue(skipped and all(t["output"].startswith("SKIPPED") and
                                            t["tags"] == ["skipped"] for t in skipped))
            self.assertTrue(all(t["visibility"] == "visible" for t in tests.values()))
            self.assertIn("execution_time", results)
            suite = ET.parse(os.path.join(out, "junit.xml")).getroot()
            points = [p.get("value") for p in suite.iter("property") if p.get("name") == "points"]
            self.assertEqual(len(points), len(tests))
            with open(os.path.join(out, "grade.json")) as f:
                rec = json.load(f)
            merged = lab_report.junit_suite(rec, "alice")
            self.assertTrue(all(c.get("name").startswith("alice.")
                                for c in merged.iter("testcase")))


class Console(unittest.TestCase):
    def test_console_items_trust_only_nonce_lines_unless_the_rubric_says_any(self):
        item = lab_rubric.Item({"name": "x", "run": [], "console": ["^usable$"]}, "run")
        console = "usable\n@abc usable\n@zzz other\n"
        self.assertEqual(lab_grade.console_lines(console, item, "abc"), ["usable"])
        self.assertEqual(lab_grade.console_lines("usable\n", item, "abc"), [])
        item.console_from = "any"
        self.assertEqual(len(lab_grade.console_lines(console, item, "abc")), 3)
        data = {"lab": "t", "student_files": ["a.cpp"],
                "tests": [{"name": "x", "run": [], "console": ["y"]}]}
        with self.assertRaises(lab_rubric.RubricError) as e:
            lab_rubric.check(data, "t")
        self.assertIn("console_from", str(e.exception))

    def test_a_passing_item_makes_no_note_about_the_nonce(self):
        item = lab_rubric.Item({"name": "x", "run": [], "pass": ["t"]}, "run")
        summary = {"outcome": "done", "tests": {"t": {"status": "PASS"}},
                   "untrusted_records": 3, "nonce": "n"}
        ok, reason = lab_grade.judge_run(item, summary, "", 1000)
        self.assertTrue(ok)
        self.assertEqual(reason, "passed")


class Audit(unittest.TestCase):
    def test_one_line_names_what_the_reference_does_not_use(self):
        ref = {"undefined": ["memcpy"], "io": 0, "strings": []}
        same = lab_audit.Audit(ref, ref)
        self.assertFalse(same.flagged)
        self.assertIn("nothing beyond the reference", same.line())
        forger = lab_audit.Audit({"undefined": ["memcpy", "toll::param_get(char const*)",
                                                "toll::arch::poweroff(bool)"],
                                  "io": 2, "strings": ["DONE 2 passed"]}, ref)
        line = forger.line()
        self.assertTrue(forger.flagged)
        self.assertEqual(len(line.splitlines()), 1)
        for words in ("param_get", "[command line]", "[power-off]", "2 port I/O",
                      "'DONE 2 passed'"):
            self.assertIn(words, line)
        self.assertNotIn("memcpy", line)


class Classroom(unittest.TestCase):
    def test_mklab_puts_a_workflow_that_grades_on_push(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "starter")
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "mklab"), "demo",
                            "--out", out], check=True, capture_output=True)
            path = os.path.join(out, lab_package.WORKFLOW_PATH)
            with open(path) as f:
                text = f.read()
            try:
                import yaml
                flow = yaml.safe_load(text)
                self.assertIn("push", flow[True] if True in flow else flow["on"])
                steps = flow["jobs"]["grade"]["steps"]
                runs = " ".join(s.get("run", "") for s in steps)
            except ImportError:
                runs = text
            # The instructor's grader, fetched at a pinned commit, grades the
            # student's checkout; the student's own tools/ never runs.
            self.assertIn("/opt/toll-grader/tools/grade --lab demo submission", runs)
            self.assertIn('rev-parse HEAD)" = "$GRADER_COMMIT"', runs)
            self.assertNotIn("python3 tools/grade", runs)
            self.assertNotIn("python3 submission/tools", runs)
            for tool in ("tools/grade", "tools/deps"):
                self.assertTrue(os.access(os.path.join(out, tool), os.X_OK), tool)


if __name__ == "__main__":
    unittest.main()
