"""What tools/grade writes: report.txt, a Gradescope results.json, junit.xml,
and the summary CSV of a batch."""

import csv
import json
import os
import re
import xml.etree.ElementTree as ET
from typing import Any, Dict, List, Sequence, Tuple

from .lab_safe import printable

STATUS_WORD = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP", "error": "ERROR"}
# Characters XML 1.0 cannot hold.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _points(x: float) -> float:
    return int(x) if float(x).is_integer() else round(x, 2)


def item_output(r: Any) -> str:
    text = r.reason
    if r.output:
        text += "\n\n" + r.output
    return text


HOLD = "ON HOLD"


def score_line(grade: Any) -> str:
    if grade.error:
        return f"Score: none (max {_points(grade.max_score)}): the grader failed, see below"
    if getattr(grade, "hold", None):
        return (f"Score: {HOLD} for a person to decide (the tests gave "
                f"{_points(grade.score)} / {_points(grade.max_score)}); see the audit below")
    return f"Score: {_points(grade.score)} / {_points(grade.max_score)}"


def special_lines(grade: Any) -> List[str]:
    """Tampering, disagreement with the machine, and why the grade is held."""
    lines = []
    if getattr(grade, "tampered", ""):
        lines.append(f"TAMPERING: {grade.tampered} changed after the grader hashed it; every "
                     f"item fails")
    if getattr(grade, "disagree", None):
        lines.append(f"The records disagree with the machine (items: "
                     f"{', '.join(grade.disagree)}): what the kernel reported is not what the "
                     f"grader's own check saw")
    for why in getattr(grade, "hold", []):
        lines.append(f"Hold: {why}")
    return lines


def write_report(grade: Any, out: str) -> None:
    rubric = grade.rubric
    lines = [f"Lab {rubric.lab}: {rubric.title}",
             f"Submission: {grade.submission} ({grade.form or 'unreadable'})",
             score_line(grade)]
    if grade.error:
        lines.append(f"GRADER ERROR (not the student's fault; grade again): {grade.error}")
    lines.append(f"Student files taken from the submission: {', '.join(grade.taken) or 'none'}")
    for note in grade.notices:
        lines.append(f"Note: {note}")
    if grade.ignored:
        shown = ", ".join(grade.ignored[:12]) + (" ..." if len(grade.ignored) > 12 else "")
        lines.append(f"Changes outside the student files were ignored (the grader's own copies "
                     f"were used): {shown}")
    if grade.protection:
        lines.append(f"Sandbox: {grade.protection}")
    if grade.leftovers:
        lines.append(f"Sandbox: killed {grade.leftovers} process(es) the student's code left "
                     f"running after a step had ended")
    if grade.audit is not None:
        lines.append(grade.audit.line())
    lines += special_lines(grade)
    b = grade.build
    lines.append(f"Build: {b.reason} ({b.seconds:.1f} s)")
    lines.append("")
    width = max([len(r.name) for r in grade.results] + [8])
    for r in grade.results:
        lines.append(f"{STATUS_WORD[r.status]:5} {r.name:{width}} {_points(r.score):>3}/"
                     f"{_points(r.max_score):<3} {r.seconds:5.1f} s  {r.reason}")
    lines.append(f"\nGraded in {grade.seconds:.1f} s.")
    if b.status != "passed" and b.output:
        lines += ["", "--- build output ---", b.output]
    for r in grade.results:
        if r.status in ("failed", "error") and r.output:
            lines += ["", f"--- {r.name}: last lines of output ---", r.output]
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(printable("\n".join(lines)) + "\n")


VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def write_results_json(grade: Any, out: str) -> None:
    """Gradescope's autograder format (score, execution_time, output,
    visibility, tests[] with name, score, max_score, status, output,
    visibility). A grader error gives no score at all, so that nobody's
    grade comes from a run that did not work."""
    items = {i.name: i for i in grade.rubric.items}
    error = bool(grade.error)

    def entry(r: Any, name: str, visibility: str) -> Dict[str, Any]:
        t: Dict[str, Any] = {"name": name, "output": printable(item_output(r)),
                             "visibility": visibility}
        if not error:
            t["score"] = _points(r.score)
            t["max_score"] = _points(r.max_score)
            t["status"] = "passed" if r.status == "passed" else "failed"
        if r.status in ("skipped", "error"):
            t["output"] = f"{r.status.upper()}: " + t["output"]
            t["tags"] = [r.status]
        t["extra_data"] = {"status": r.status}
        return t
    tests = [entry(grade.build, "build", "visible")]
    tests += [entry(r, r.name, getattr(items.get(r.name), "visibility", "visible"))
              for r in grade.results]
    lines = [score_line(grade)]
    lines += special_lines(grade)
    lines += grade.notices
    if grade.ignored:
        lines.append(f"Changes outside your lab's files were ignored: "
                     f"{', '.join(grade.ignored[:12])}")
    if grade.error:
        lines.append(f"Grader error (please tell the staff; this is not a grade): {grade.error}")
    data = {"output": printable("\n".join(lines)), "execution_time": round(grade.seconds, 1),
            "visibility": grade.rubric.visibility, "stdout_visibility": "hidden",
            "tests": tests,
            "extra_data": {"grader_error": grade.error or "", "protection": grade.protection,
                           "audit": grade.audit.line() if grade.audit else "",
                           "hold": list(getattr(grade, "hold", [])),
                           "tampered": getattr(grade, "tampered", ""),
                           "records_disagree": list(getattr(grade, "disagree", []))}}
    if not error:
        # A held grade counts for nothing until a person has looked.
        data["score"] = 0 if getattr(grade, "hold", None) else _points(grade.score)
        data["max_score"] = _points(grade.max_score)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def _testcase(parent: ET.Element, classname: str, name: str, r: Any) -> str:
    case = ET.SubElement(parent, "testcase", classname=classname, name=name,
                         time=f"{r.seconds:.2f}")
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name="points", value=str(_points(r.score)))
    ET.SubElement(props, "property", name="max_points", value=str(_points(r.max_score)))
    text = NOT_XML.sub("?", item_output(r))
    message = NOT_XML.sub("?", r.reason)[:500]
    if r.status == "failed":
        ET.SubElement(case, "failure", message=message).text = text
    elif r.status == "skipped":
        ET.SubElement(case, "skipped", message=message)
    elif r.status == "error":
        ET.SubElement(case, "error", message=message).text = text
    return r.status


def junit_suite(record: Dict[str, Any], prefix: str = "") -> ET.Element:
    """One <testsuite> for a graded submission (a record from grade_record());
    @p prefix (the student's name) makes every test name unique in a batch."""
    lab = record["lab"]
    classname = f"lab.{lab}" + (f".{prefix}" if prefix else "")
    suite = ET.Element("testsuite", name=classname, time=f"{record['seconds']:.2f}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="score",
                  value="" if record["error"] else str(record["score"]))
    ET.SubElement(props, "property", name="max_score", value=str(record["max_score"]))
    counts = {"failed": 0, "skipped": 0, "error": 0}
    rows = [record["build"]] + record["items"]
    for row in rows:
        r = _Row(row)
        status = _testcase(suite, classname, f"{prefix}.{r.name}" if prefix else r.name, r)
        if status in counts:
            counts[status] += 1
    if record["error"]:
        r = _Row({"name": "grader", "status": "error", "score": 0, "max_score": 0,
                  "seconds": 0, "reason": f"grader error: {record['error']}", "output": ""})
        _testcase(suite, classname, f"{prefix}.grader" if prefix else "grader", r)
        counts["error"] += 1
        rows = rows + [None]
    suite.set("tests", str(len(rows)))
    suite.set("failures", str(counts["failed"]))
    suite.set("skipped", str(counts["skipped"]))
    suite.set("errors", str(counts["error"]))
    return suite


class _Row:
    def __init__(self, row: Dict[str, Any]) -> None:
        self.name, self.status = row["name"], row["status"]
        self.score, self.max_score = row["score"], row["max_score"]
        self.seconds, self.reason, self.output = row["seconds"], row["reason"], row["output"]


def write_junit_file(suites: Sequence[ET.Element], path: str) -> None:
    root = ET.Element("testsuites")
    for s in suites:
        root.append(s)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _result_row(r: Any) -> Dict[str, Any]:
    return {"name": r.name, "status": r.status, "score": _points(r.score),
            "max_score": _points(r.max_score), "seconds": round(r.seconds, 2),
            "reason": r.reason, "output": r.output}


def grade_record(grade: Any, digest: str = "") -> Dict[str, Any]:
    """Everything the batch tools need about a grade, as plain data (grade.json)."""
    return {"lab": grade.rubric.lab, "submission": str(grade.submission), "digest": digest,
            "score": _points(grade.score), "max_score": _points(grade.max_score),
            "error": grade.error or "", "seconds": round(grade.seconds, 1),
            "build": _result_row(grade.build), "items": [_result_row(r) for r in grade.results],
            "notices": grade.notices, "audit": grade.audit.line() if grade.audit else "",
            "flagged": bool(grade.audit and grade.audit.flagged),
            "hold": list(getattr(grade, "hold", [])),
            "tampered": getattr(grade, "tampered", ""),
            "disagree": list(getattr(grade, "disagree", [])),
            "protection": grade.protection}


def write_all(grade: Any, out: str, digest: str = "") -> Dict[str, Any]:
    os.makedirs(out, exist_ok=True)
    write_report(grade, out)
    write_results_json(grade, out)
    record = grade_record(grade, digest)
    write_junit_file([junit_suite(record)], os.path.join(out, "junit.xml"))
    from . import lab_batch
    lab_batch.save_fingerprint(out, grade.fingerprint)
    # Written last: its presence means the grading of this submission finished.
    with open(os.path.join(out, "grade.json.tmp"), "w") as f:
        json.dump(record, f, indent=1)
    os.replace(os.path.join(out, "grade.json.tmp"), os.path.join(out, "grade.json"))
    return record


def write_summary(rows: Sequence[Tuple[str, Dict[str, Any]]], rubric: Any, path: str) -> None:
    """One line per submission (@p rows: (name, grade record)): name, score,
    max_score, each item's score, the audit, reasons. A grader error leaves
    the score empty."""
    names = [i.name for i in rubric.items]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "score", "max_score", "build", "grader_error"] + names +
                   ["seconds", "audit_flagged", "first_problem"])
        for name, rec in rows:
            scores = {r["name"]: r["score"] for r in rec["items"]}
            problem = next((f"{r['name']}: {r['reason']}" for r in rec["items"]
                            if r["status"] in ("failed", "error")), "")
            if rec["build"]["status"] != "passed":
                problem = rec["build"]["reason"]
            error = rec["error"]
            if rec.get("hold"):
                problem = "ON HOLD: " + rec["hold"][0]
            w.writerow([printable(name), "" if error else rec["score"], rec["max_score"],
                        "ok" if rec["build"]["status"] == "passed" else "failed", error] +
                       ["" if error else scores.get(n, 0) for n in names] +
                       [f"{rec['seconds']:.1f}", "yes" if rec.get("flagged") else "",
                        printable(problem)[:300]])
