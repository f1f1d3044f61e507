#!/usr/bin/python3
"""The Gradescope package of the demonstration lab, run as Gradescope would:
tools/grade --package writes the zip, which is unpacked into a simulated
autograder root (source/, submission/, results/), and run_autograder grades
a flat upload of the reference there (as root, under the sandbox's
fallback, a dedicated user, as in Gradescope's containers). Its
results.json must follow Gradescope's specification, say that the files
were found at the top, and carry no score at all when the grader fails."""

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# tools/lib, through PYTHONPATH=tools (ctest sets it).
from lib import lab_package  # noqa: E402
import hostile  # noqa: E402  (this folder)

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def unpack(zip_path, dest):
    with zipfile.ZipFile(zip_path) as z:
        for info in z.infolist():
            path = z.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)


def check_results(results, failures, expect_score):
    def expect(cond, what):
        if not cond:
            failures.append(what)
    if expect_score is None:
        expect("score" not in results, "a failed grading must carry no score")
        expect(all("score" not in t for t in results.get("tests", [])),
               "a failed grading's tests must carry no score")
        expect("Grader error" in results.get("output", ""), "the output must say grader error")
        return
    expect(results.get("score") == expect_score, f"score {results.get('score')}")
    expect(isinstance(results.get("execution_time"), (int, float)), "no execution_time")
    expect(results.get("visibility") in VISIBILITIES, "no top-level visibility")
    for t in results["tests"]:
        expect(t.get("status") in ("passed", "failed"), f"{t['name']}: status {t.get('status')}")
        expect(t.get("visibility") in VISIBILITIES, f"{t['name']}: no visibility")
        expect(isinstance(t.get("score"), (int, float)) and "max_score" in t,
               f"{t['name']}: no score")
        expect(isinstance(t.get("output"), str), f"{t['name']}: no output")
    expect("uploaded without its folders" in results.get("output", ""),
           "the student is not told the files were found at the top of the upload")


FORGED = '{"score": 11, "max_score": 11, "output": "forged by the submission", "tests": []}'
FORGE = r"""#ifdef TOLL_HOST_TEST
    {
        extern void* x_fopen(const char*, const char*) asm("fopen");
        extern int x_fputs(const char*, void*) asm("fputs");
        extern int x_fclose(void*) asm("fclose");
        extern void* x_stderr asm("stderr");
        x_fputs("forge: tried\n", x_stderr);
        if (void* f = x_fopen("@TOP@/results/results.json", "w")) {
            x_fputs(@FORGED@, f);
            x_fclose(f);
        }
        if (void* f = x_fopen("@TOP@/source/run_autograder", "w")) {
            x_fputs("#!/bin/sh\nexit 0\n", f);
            x_fclose(f);
        }
    }
#endif
"""


def forge_upload(top):
    """Writes the forging upload into @p top's submission folder; returns
    the marker file its own scripts would make if anything ran them."""
    sub = os.path.join(top, "submission")
    shutil.rmtree(sub)
    os.makedirs(os.path.join(sub, "tools"))
    starter = os.path.join(os.path.dirname(top), "starter")
    hostile.lab_regions.write_starter(ROOT, "demo", starter)
    with open(os.path.join(starter, hostile.STUDENT)) as f:
        starter_text = f.read()
    attack = FORGE.replace("@TOP@", top).replace("@FORGED@", json.dumps(FORGED))
    with open(os.path.join(sub, os.path.basename(hostile.STUDENT)), "w") as f:
        f.write(hostile.insert(starter_text, attack))
    marker = os.path.join(os.path.dirname(top), "submission-code-ran")
    for rel in ("run_autograder", "setup.sh", "tools/grade"):
        path = os.path.join(sub, rel)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\ntouch {marker}\n")
        os.chmod(path, 0o755)
    return marker


def check_forged(top, failures, marker, status):
    if status:
        failures.append(f"run_autograder exited {status} on the forging upload")
    try:
        with open(os.path.join(top, "results", "results.json")) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        failures.append(f"the forging upload left no readable results.json: {e}")
        return
    if results.get("score") == 11 or "forged by the submission" in json.dumps(results):
        failures.append(f"the submission forged its results.json: {results.get('score')}")
    if not results.get("tests") or "Score:" not in results.get("output", ""):
        failures.append("the forging upload's results.json is not the grader's")
    if os.path.exists(marker):
        failures.append("a file of the submission was executed")
    # The host tests fail on the stub and show their output: the attack ran.
    if not any("forge: tried" in t.get("output", "") for t in results.get("tests", [])):
        failures.append("the forging attack never ran, so proves nothing")
    with open(os.path.join(top, "source", "run_autograder")) as f:
        if "tools/grade" not in f.read():
            failures.append("the submission rewrote the package's run_autograder")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", required=True)
    p.add_argument("--cache", required=True)
    args = p.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    top = os.path.join(args.work, "autograder")
    os.makedirs(os.path.join(top, "submission"))
    os.chmod(args.work, 0o755)
    failures = []

    zip_path = os.path.join(args.work, "autograder.zip")
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "grade"), "--package",
                    "gradescope", "--lab", "demo", "--out", zip_path], check=True)
    unpack(zip_path, os.path.join(top, "source"))
    # The hostile upload gets an autograder root of its own, so that both
    # grade at once.
    forge_top = os.path.join(args.work, "forging", "autograder")
    for sub in ("submission", "results"):
        os.makedirs(os.path.join(forge_top, sub))
    os.chmod(os.path.dirname(forge_top), 0o755)
    unpack(zip_path, os.path.join(forge_top, "source"))
    source = os.path.join(top, "source")
    for name in ("setup.sh", "run_autograder"):
        mode = os.stat(os.path.join(source, name)).st_mode
        if not mode & stat.S_IXUSR:
            failures.append(f"{name} is not executable")
        if subprocess.run(["bash", "-n", os.path.join(source, name)]).returncode:
            failures.append(f"{name} is not valid bash")
    with open(os.path.join(source, "setup.sh")) as f:
        setup = f.read()
    for package in lab_package.grading_packages(ROOT):
        if package not in setup:
            failures.append(f"setup.sh does not install {package}")
    if "--prepare" not in setup:
        failures.append("setup.sh does not build the reference into the image")
    if not os.path.isfile(os.path.join(source, "toll", "tools", "grade")):
        failures.append("the package lacks the grader")

    # A flat upload (no folders), as students often make.
    for rel in (hostile.STUDENT, "labs/lab-demo/results.toml"):
        shutil.copy(os.path.join(ROOT, rel), os.path.join(top, "submission"))
    env = dict(os.environ, TOLL_AUTOGRADER_ROOT=top, TOLL_GRADE_CACHE=args.cache,
               TOLL_GRADE_WORK=os.path.join(args.work, "scratch"))
    # Gradescope's containers run as root, often without user namespaces:
    # grade there with the fallback, a dedicated user, whole.
    fallback = os.geteuid() == 0
    if fallback:
        env["TOLL_GRADE_SANDBOX"] = "user"
    # A hostile upload: its region (on the starter's stub, so it earns less
    # than full marks) rewrites results.json to full marks and the package's
    # run_autograder from the host tests, and it carries run_autograder,
    # setup.sh and tools/grade of its own, which must never run. Graded
    # beside the honest upload (the reference is built once, under a lock).
    marker = forge_upload(forge_top)
    forge_env = dict(env, TOLL_AUTOGRADER_ROOT=forge_top,
                     TOLL_GRADE_WORK=os.path.join(args.work, "forging", "scratch"))
    forging = subprocess.Popen([os.path.join(forge_top, "source", "run_autograder")],
                               env=forge_env)
    status = subprocess.run([os.path.join(source, "run_autograder")], env=env).returncode
    forged_status = forging.wait()
    if status:
        failures.append(f"run_autograder exited {status}")
    with open(os.path.join(top, "results", "results.json")) as f:
        results = json.load(f)
    check_results(results, failures, 11)
    protection = results.get("extra_data", {}).get("protection", "")
    if fallback and "dedicated unprivileged user" not in protection:
        failures.append(f"the fallback sandbox was not in force: {protection!r}")

    check_forged(forge_top, failures, marker, forged_status)

    # A grader that cannot start writes a result with no score.
    os.unlink(os.path.join(top, "results", "results.json"))
    env["TOLL_GRADE_SANDBOX"] = "sideways"
    status = subprocess.run([os.path.join(source, "run_autograder")], env=env,
                            capture_output=True).returncode
    if status == 0:
        failures.append("run_autograder succeeded although the grader could not run")
    with open(os.path.join(top, "results", "results.json")) as f:
        check_results(json.load(f), failures, None)

    for f in failures:
        print(f"test_gradescope: FAIL {f}")
    if failures:
        return 1
    print("test_gradescope: the package installs, grades and reports as Gradescope expects")
    shutil.rmtree(args.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
