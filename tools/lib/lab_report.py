"""What tools/grade writes: report.txt, a Gradescope results.json, junit.xml,
and the summary CSV of a batch."""

import csv
import json
import os
import re
import xml.etree.ElementTree as ET

STATUS_WORD = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP", "error": "ERROR"}
# Characters XML 1.0 cannot hold.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _points(x):
    return int(x) if float(x).is_integer() else round(x, 2)


def item_output(r):
    text = r.reason
    if r.output:
        text += "\n\n" + r.output
    return text


def write_report(grade, out):
    rubric = grade.rubric
    lines = [f"Lab {rubric.lab}: {rubric.title}",
             f"Submission: {grade.submission} ({grade.form or 'unreadable'})",
             f"Score: {_points(grade.score)} / {_points(grade.max_score)}"]
    if grade.error:
        lines.append(f"GRADER ERROR (not the student's fault; grade again): {grade.error}")
    lines.append(f"Student files taken from the submission: {', '.join(grade.taken) or 'none'}")
    if grade.missing:
        lines.append(f"Student files missing (the starter's version was used): "
                     f"{', '.join(grade.missing)}")
    if grade.ignored:
        shown = ", ".join(grade.ignored[:12]) + (" ..." if len(grade.ignored) > 12 else "")
        lines.append(f"Changes outside the student files were ignored (the grader's own copies "
                     f"were used): {shown}")
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
        f.write("\n".join(lines) + "\n")


def write_results_json(grade, out):
    """Gradescope's autograder format: score, max_score, tests[], output."""
    tests = [{"name": "build", "score": 0, "max_score": 0,
              "status": "passed" if grade.build.status == "passed" else "failed",
              "output": item_output(grade.build)}]
    for r in grade.results:
        tests.append({"name": r.name, "score": _points(r.score), "max_score": _points(r.max_score),
                      "status": "passed" if r.status == "passed" else "failed",
                      "output": item_output(r)})
    summary = f"{_points(grade.score)} / {_points(grade.max_score)}"
    if grade.ignored:
        summary += (f". Changes outside your lab's files were ignored: "
                    f"{', '.join(grade.ignored[:12])}")
    if grade.error:
        summary += f". Grader error (please tell the staff): {grade.error}"
    data = {"score": _points(grade.score), "max_score": _points(grade.max_score),
            "output": summary, "execution_time": round(grade.seconds, 1), "tests": tests}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def write_junit(grade, out):
    suite = ET.Element("testsuite", name=f"lab.{grade.rubric.lab}",
                       tests=str(len(grade.results) + 1), time=f"{grade.seconds:.2f}")
    counts = {"failed": 0, "skipped": 0, "error": 0}
    for r in [grade.build] + grade.results:
        case = ET.SubElement(suite, "testcase", classname=f"lab.{grade.rubric.lab}", name=r.name,
                             time=f"{r.seconds:.2f}")
        text = NOT_XML.sub("?", item_output(r))
        message = NOT_XML.sub("?", r.reason)[:500]
        if r.status == "failed":
            ET.SubElement(case, "failure", message=message).text = text
        elif r.status == "skipped":
            ET.SubElement(case, "skipped", message=message)
        elif r.status == "error":
            ET.SubElement(case, "error", message=message).text = text
        if r.status in counts:
            counts[r.status] += 1
    suite.set("failures", str(counts["failed"]))
    suite.set("skipped", str(counts["skipped"]))
    suite.set("errors", str(counts["error"]))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(os.path.join(out, "junit.xml"), encoding="utf-8",
                               xml_declaration=True)


def write_all(grade, out):
    os.makedirs(out, exist_ok=True)
    write_report(grade, out)
    write_results_json(grade, out)
    write_junit(grade, out)


def write_summary(rows, rubric, path):
    """One line per submission: name, score, max_score, each item's score, reasons."""
    names = [i.name for i in rubric.items]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "score", "max_score", "build", "grader_error"] + names +
                   ["seconds", "first_problem"])
        for name, grade in rows:
            scores = {r.name: _points(r.score) for r in grade.results}
            problem = next((f"{r.name}: {r.reason}" for r in grade.results
                            if r.status in ("failed", "error")), "")
            if grade.build.status != "passed":
                problem = grade.build.reason
            w.writerow([name, _points(grade.score), _points(grade.max_score),
                        "ok" if grade.build.status == "passed" else "failed", grade.error or ""] +
                       [scores.get(n, 0) for n in names] + [f"{grade.seconds:.1f}", problem[:300]])
