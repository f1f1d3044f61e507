"""The grader's own checks of a lab's mechanism, made from outside what the
student's code can reach: inputs only the grader knows, drawn afresh for
every grading, with answers the grader computes itself.

A kernel's records pass through code a student writes (the demonstration
lab's put_number formats every number ktest prints), so a record alone can
be made to lie. An oracle runs the student's code on the grader's inputs and
compares the output with the grader's own answers; when the records say an
item passed and the oracle disagrees, the item fails and the report says
"records disagree with the machine".
"""

import os
import random
from typing import Any, Callable, Dict, List, Tuple

from . import lab_sandbox

# The harness the demonstration lab's oracle compiles with the graded
# format.cpp: one format and one argument per input line, one output per line.
FORMAT_HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "lib/format.h"
int main()
{
    char spec[64];
    long long value;
    while (scanf("%63s %lld", spec, &value) == 2) {
        char out[128];
        if (strchr(spec, 'd'))
            toll::lib::snformat(out, sizeof out, spec, static_cast<int>(value));
        else
            toll::lib::snformat(out, sizeof out, spec, static_cast<unsigned>(value));
        printf("[%s]\n", out);
    }
    return 0;
}
"""
CASES = 40


def format_cases(rng: random.Random) -> List[Tuple[str, int]]:
    """Random conversions and values, with the flags the lab asks for."""
    cases = []
    for _ in range(CASES):
        conv = rng.choice("dduxXo")
        flag = rng.choice(["", "0", "-"])
        width = rng.choice(["", str(rng.randint(1, 12))])
        if conv == "d":
            value = rng.randint(-(1 << 31), (1 << 31) - 1) >> rng.randint(0, 30)
        else:
            value = rng.randint(0, (1 << 32) - 1) >> rng.randint(0, 31)
        cases.append((f"%{flag}{width}{conv}", value))
    return cases


def expected(spec: str, value: int) -> str:
    """What C's printf prints for @p spec and @p value (Python's % agrees)."""
    return f"[{spec.replace('u', 'd') % value}]"


def format_oracle(grade: Any, tree: str, bdir: str, logs: str, jail: Any) -> Tuple[bool, str]:
    """(agrees, detail) for the demonstration lab's put_number."""
    from . import lab_grade
    rng = random.Random(os.urandom(16))
    cases = format_cases(rng)
    folder = jail.writable_folder("oracle")
    src = os.path.join(folder, "harness.cpp")
    with open(src, "w") as f:
        f.write(FORMAT_HARNESS)
    if jail.uid is not None:
        os.chown(src, jail.uid, jail.uid)
    exe = os.path.join(folder, "harness")
    script = (f"c++ -std=c++20 -O1 -DTOLL_HOST_TEST -I {tree}/src -o {exe} {src} "
              f"{tree}/src/lib/format.cpp && exec {exe}")
    data = "".join(f"{spec} {value}\n" for spec, value in cases).encode()
    log = os.path.join(logs, "oracle.log")
    out = jail.run(["/bin/sh", "-c", script], log, 120, lab_grade.limits_for(60, 1 << 20),
                   writable_inside=[folder], stdin_data=data)
    lines = lab_grade.read_text(log).splitlines()
    answers = [line for line in lines if line.startswith("[")]
    if out.status != 0 or len(answers) != len(cases):
        return False, (f"the grader's own check of put_number (on {len(cases)} inputs it chose) "
                       f"did not run to the end")
    wrong = [(c, a) for c, a in zip(cases, answers) if a != expected(*c)]
    if wrong:
        (spec, value), got = wrong[0]
        return False, (f"on inputs the grader chose, put_number got {len(wrong)} of "
                       f"{len(cases)} wrong (e.g. {spec} of {value}: {got}, not "
                       f"{expected(spec, value)})")
    return True, f"put_number got all {len(cases)} of the grader's own inputs right"


ORACLES: Dict[str, Callable[..., Tuple[bool, str]]] = {"format": format_oracle}


def check(grade: Any, tree: str, bdir: str, logs: str, jail: Any) -> None:
    """Runs the rubric's oracles; an item whose records passed but whose
    oracle disagrees fails, and the grade notes the disagreement."""
    by_item = {i.name: i for i in grade.rubric.items}
    done: Dict[str, Tuple[bool, str]] = {}
    for r in grade.results:
        name = getattr(by_item.get(r.name), "oracle", None)
        if not name or name not in ORACLES:
            continue
        if name not in done:
            done[name] = ORACLES[name](grade, tree, bdir, logs, jail)
        agrees, detail = done[name]
        if r.status == "passed" and not agrees:
            r.status, r.score = "failed", 0
            r.reason = f"{DISAGREE}: the kernel's records say it passed, but {detail}"
            grade.disagree.append(r.name)
        elif agrees and r.status == "passed":
            r.reason += f"; {detail}"


DISAGREE = "records disagree with the machine"
_ = lab_sandbox
