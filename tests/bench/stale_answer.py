#!/usr/bin/python3
"""tools/bench --reference can fail: plants a number the kernel never measured
into a copy of a lab's reference answers and requires the worksheet check to
name it.

Usage: stale_answer.py BENCH_ARGS... -- CHECKS RESULTS"""

import os
import subprocess
import sys
import tempfile
import tomllib

PLANTED = "123457"


def main(argv):
    split = argv.index("--")
    bench, (checks, results) = argv[:split], argv[split + 1:]
    with open(results, "rb") as f:
        answers = tomllib.load(f).get("answers", {})
    if not answers:
        sys.exit(f"stale_answer: {results} has no [answers] to plant a number in")
    with open(results) as f:
        text = f.read()
    first = next(iter(answers))
    # The first line of the first answer's text gets the planted number.
    marker = f'{first} = """\n'
    if marker not in text:
        sys.exit(f"stale_answer: cannot find {marker.strip()!r} in {results}")
    text = text.replace(marker, f"{marker}It took {PLANTED} instructions. ", 1)
    with tempfile.TemporaryDirectory() as tmp:
        planted = os.path.join(tmp, "results.toml")
        with open(planted, "w") as f:
            f.write(text)
        run = subprocess.run(bench + ["--reference", "--worksheet", checks, planted],
                             capture_output=True, text=True)
    out = run.stdout + run.stderr
    if run.returncode == 0 or f"answers.{first}: {PLANTED} is not a measured value" not in out:
        print(out)
        sys.exit(f"stale_answer: FAILED: --reference accepted the planted {PLANTED}")
    print(f"stale_answer: --reference named the planted {PLANTED} in answers.{first}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
