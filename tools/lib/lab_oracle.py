"""The grader's own checks of a lab's mechanism, made from outside what the
student's code can reach: inputs only the grader knows, drawn afresh for
every grading, with answers the grader computes itself.

A kernel's records can be made to lie by kernel code that finds the run's
nonce (the audit holds such a grade, but cannot prove every lie). An oracle
runs the student's code on the grader's inputs and compares the output with
the grader's own answers; when the records say an
item passed and the oracle disagrees, the item fails and the report says
"records disagree with the machine".
"""

import os
import random
import secrets
from typing import Any, Callable, Dict, List, Tuple

from . import lab_sandbox

CASES = 40

# The harness of the demonstration lab's oracle, compiled with the graded
# cmdline.cpp: one "max text" per input line; prints the count and each word.
SPLIT_HARNESS = r"""
#include <stdio.h>
#include <string.h>
#include "lib/cmdline.h"
int main()
{
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char* space = strchr(line, ' ');
        if (!space)
            continue;
        *space = 0;
        unsigned max = 0;
        sscanf(line, "%u", &max);
        const char* argv[16] = {};
        size_t n = toll::lib::split_arguments(space + 1, argv, max);
        printf("[%zu", n);
        for (size_t i = 0; i < n && i < max; ++i)
            printf("|%s", argv[i] ? argv[i] : "(null)");
        printf("]\n");
    }
    return 0;
}
"""
# Characters of the grader's lines: words, runs of spaces and both quotes.
SPLIT_ALPHABET = "ab1-/.=" + "  " + "'\""


def split_cases(rng: random.Random) -> List[Tuple[int, str]]:
    """Random lines, each with the most words it may split into (1 to 12)."""
    cases = []
    for _ in range(CASES):
        text = "".join(rng.choice(SPLIT_ALPHABET) for _ in range(rng.randint(0, 60)))
        cases.append((rng.randint(1, 12), text))
    return cases


def split_expected(max_words: int, text: str) -> str:
    """What split_arguments must give for @p text: the contract of
    src/lib/cmdline.h, written again here (spaces separate; ' or " quote a
    stretch holding spaces and are removed; an unclosed quote runs to the
    end; max + 1 when there are more words than fit)."""
    words: List[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            break
        if len(words) == max_words:
            return "[" + "|".join([str(max_words + 1)] + words) + "]"
        out, quote = [], ""
        while i < n and (quote or text[i] != " "):
            c = text[i]
            if quote and c == quote:
                quote = ""
            elif not quote and c in "'\"":
                quote = c
            else:
                out.append(c)
            i += 1
        words.append("".join(out))
        if i < n and text[i] == " ":
            i += 1
        else:
            break
    return "[" + "|".join([str(len(words))] + words) + "]"


def split_oracle(grade: Any, item: Any, tree: str, bdir: str, logs: str,
                 jail: Any) -> Tuple[bool, str]:
    """(agrees, detail) for the demonstration lab's split_arguments."""
    from . import lab_grade
    rng = random.Random(os.urandom(16))
    cases = split_cases(rng)
    folder = jail.writable_folder("oracle")
    src = os.path.join(folder, "harness.cpp")
    with open(src, "w") as f:
        f.write(SPLIT_HARNESS)
    if jail.uid is not None:
        os.chown(src, jail.uid, jail.uid)
    exe = os.path.join(folder, "harness")
    script = (f"c++ -std=c++20 -O1 -DTOLL_HOST_TEST -I {tree}/src -o {exe} {src} "
              f"{tree}/src/lib/cmdline.cpp && exec {exe}")
    data = "".join(f"{m} {text}\n" for m, text in cases).encode()
    log = os.path.join(logs, "oracle.log")
    out = jail.run(["/bin/sh", "-c", script], log, 120, lab_grade.limits_for(60, 1 << 20),
                   writable_inside=[folder], stdin_data=data)
    answers = [line for line in lab_grade.read_text(log).splitlines() if line.startswith("[")]
    if out.status != 0 or len(answers) != len(cases):
        return False, (f"the grader's own check of split_arguments (on {len(cases)} lines it "
                       f"chose) did not run to the end")
    wrong = [(c, a) for c, a in zip(cases, answers) if a != split_expected(*c)]
    if wrong:
        (m, text), got = wrong[0]
        return False, (f"on lines the grader chose, split_arguments got {len(wrong)} of "
                       f"{len(cases)} wrong (e.g. {text!r} with room for {m}: {got}, not "
                       f"{split_expected(m, text)})")
    return True, f"split_arguments got all {len(cases)} of the grader's own lines right"


# The seed randomised host tests use when the grader gives none (the tests'
# own fixed seed): the grader never draws it.
FIXED_SEED = 12345


def seed_oracle(grade: Any, item: Any, tree: str, bdir: str, logs: str,
                jail: Any) -> Tuple[bool, str]:
    """(agrees, detail) for a host-test item whose tests draw random
    operations: they run again on a seed the grader draws now
    (TOLL_TEST_SEED), which no submission can have tuned itself to."""
    from . import lab_grade
    seed = FIXED_SEED
    while seed == FIXED_SEED:
        seed = secrets.randbelow(1 << 31) + 1
    ok, reason, _, _ = lab_grade.run_ctest(item, bdir, logs, jail,
                                           {"TOLL_TEST_SEED": str(seed)}, tag=".oracle")
    if ok:
        return True, f"its tests pass on the grader's own random seed {seed} too"
    return False, f"on the grader's own random seed {seed} the same tests say: {reason}"


def probe_verdict(result: Any) -> Tuple[bool, str]:
    """(agrees, detail) from the probe that watched the item's own boot
    through QEMU's gdb stub (tools/lib/probes.py)."""
    found = result.probe if isinstance(result.probe, dict) else None
    if found is None:
        return False, "the grader's look at the machine from outside made no report"
    detail = str(found.get("detail", ""))
    if found.get("ok") is True:
        return True, f"seen from outside the machine, {detail}"
    return False, f"seen from outside the machine, {detail}"


ORACLES: Dict[str, Callable[..., Tuple[bool, str]]] = {
    "split": split_oracle, "seed": seed_oracle}


def check(grade: Any, tree: str, bdir: str, logs: str, jail: Any) -> None:
    """Runs the rubric's oracles; an item whose records passed but whose
    oracle disagrees fails, and the grade notes the disagreement."""
    by_item = {i.name: i for i in grade.rubric.items}
    done: Dict[Tuple[str, str], Tuple[bool, str]] = {}
    for r in grade.results:
        item = by_item.get(r.name)
        if getattr(item, "probe", None) and r.status == "passed":
            agrees, detail = probe_verdict(r)
            if agrees:
                r.reason += f"; {detail}"
            else:
                r.status, r.score = "failed", 0
                r.reason = f"{DISAGREE}: the kernel's records say it passed, but {detail}"
                grade.disagree.append(r.name)
        name = getattr(item, "oracle", None)
        if not name or name not in ORACLES or r.status != "passed":
            continue  # an item that failed already needs no second opinion
        # The seeded tests are each item's own; the other oracles serve a lab.
        key = (name, r.name if name == "seed" else "")
        if key not in done:
            done[key] = ORACLES[name](grade, item, tree, bdir, logs, jail)
        agrees, detail = done[key]
        if r.status == "passed" and not agrees:
            r.status, r.score = "failed", 0
            r.reason = f"{DISAGREE}: the kernel's records say it passed, but {detail}"
            grade.disagree.append(r.name)
        elif agrees and r.status == "passed":
            r.reason += f"; {detail}"


DISAGREE = "records disagree with the machine"
_ = lab_sandbox
