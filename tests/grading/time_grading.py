#!/usr/bin/python3
"""Times the honest path of the demonstration lab: one warm grade, then a
batch of 20 at -j 2 (ten reference and ten starter submissions, each region
with a comment of its own, so that each compiles its student file), with
the machine's load before and after. Not a ctest: the numbers depend on the
machine. Usage: PYTHONPATH=tools tests/grading/time_grading.py [BUILD]
(default build/)."""
import os
import shutil
import subprocess
import sys
import time
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import hostile  # noqa: E402  (this folder; it imports lib through PYTHONPATH=tools)
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
work = BUILD + "/time-grading"
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
starter = os.path.join(work, "starter")
hostile.lab_regions.write_starter(ROOT, "demo", starter)
ref = open(os.path.join(ROOT, hostile.STUDENT)).read()
st = open(os.path.join(starter, hostile.STUDENT)).read()
sheet = open(os.path.join(ROOT, "labs/lab-demo/results.toml")).read()
batch = os.path.join(work, "batch")
for i in range(20):
    text = hostile.insert(ref if i % 2 == 0 else st, f"    // student {i}\n")
    hostile.write_file(os.path.join(batch, f"s{i:02d}", hostile.STUDENT), text)
    hostile.write_file(os.path.join(batch, f"s{i:02d}", "labs/lab-demo/results.toml"), sheet)
cache = BUILD + "/grading-ccache"


def grade(args):
    start = time.monotonic()
    r = subprocess.run([sys.executable, ROOT + "/tools/grade", "--lab", "demo", *args,
                        "--work", os.path.join(work, "grading"), "--cache", cache],
                       capture_output=True, text=True)
    return time.monotonic() - start, r


print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
# Warm: the reference and starter builds are cached by an earlier grade.
secs, r = grade([os.path.join(batch, "s00"), "--out", os.path.join(work, "one-warmup")])
print(f"first grade (may build the reference): {secs:.1f} s")
secs, r = grade([os.path.join(batch, "s02"), "--out", os.path.join(work, "one")])
last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-300:]
print(f"one warm grade: {secs:.1f} s; {last}")
print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
secs, r = grade(["--batch", batch, "-j", "2", "--out", os.path.join(work, "out")])
print(f"batch of 20 at -j 2: {secs:.1f} s; status {r.returncode}")
print(r.stdout[-600:])
print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
shutil.rmtree(work, ignore_errors=True)
