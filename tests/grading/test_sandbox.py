#!/usr/bin/python3
"""Tests of the grader's sandbox in each mode this machine offers (bubblewrap,
and the fallback without namespaces: a dedicated user), with small hostile
commands instead of whole gradings: a process that outlives its step, a
build-time hang, a fork bomb, a huge file, an output flood, reads of the
grading machine's files and writes outside the scratch folder."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# tools/lib, through PYTHONPATH=tools (ctest sets it).
from lib import lab_build, lab_grade, lab_safe, lab_sandbox  # noqa: E402

SH = "/bin/sh"


def modes():
    """The sandbox modes to test here: every one the machine can run."""
    found = []
    for mode in ("bwrap", "user"):
        try:
            lab_sandbox.Sandbox(mode)
            found.append(mode)
        except lab_sandbox.SandboxError as e:
            print(f"test_sandbox: mode {mode} unavailable here: {e}")
    return found


class Modes(unittest.TestCase):
    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="toll-sandbox-test-")
        os.chmod(self.top, 0o755)
        self.work = os.path.join(self.top, "work")      # what the sandbox may write
        self.private = os.path.join(self.top, "private")  # the grader's own folder
        os.makedirs(self.work)
        os.makedirs(self.private)
        with open(os.path.join(self.private, "secret"), "w") as f:
            f.write("the reference solution\n")

    def tearDown(self):
        shutil.rmtree(self.top, ignore_errors=True)

    def run_in(self, mode, script, timeout=20, env=None, readable=(), **limits):
        box = lab_sandbox.Sandbox(mode)
        uid = box.acquire_uid()
        try:
            box.hand_over(self.work, uid)
            log = os.path.join(self.private, "log")
            out = box.run([SH, "-c", script], log, timeout, lab_sandbox.Limits(**limits),
                          writable=[self.work], cwd=self.work, uid=uid, env=env,
                          readable=readable)
            with open(log, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            return box, uid, out, text
        finally:
            box.release_uid(uid)

    def test_a_process_that_outlives_its_step_is_killed(self):
        for mode in modes():
            with self.subTest(mode=mode):
                marker = os.path.join(self.work, f"alive-{mode}")
                script = (f"setsid sh -c 'while :; do touch {marker}; sleep 0.1; done' "
                          f"</dev/null >/dev/null 2>&1 & echo started")
                box, uid, out, text = self.run_in(mode, script)
                self.assertEqual(out.status, 0, text)
                time.sleep(0.5)
                if os.path.exists(marker):
                    os.unlink(marker)
                time.sleep(0.5)
                self.assertFalse(os.path.exists(marker), "the process outlived its step")
                if uid is not None:
                    self.assertEqual(lab_sandbox._processes_of(uid), [])

    def test_a_hang_is_stopped_at_the_time_limit_with_all_its_children(self):
        for mode in modes():
            with self.subTest(mode=mode):
                # As ninja does: the spinning child in a process group of its own.
                script = "setsid sh -c 'while :; do :; done' & while :; do sleep 1; done"
                start = time.monotonic()
                box, uid, out, _ = self.run_in(mode, script, timeout=2)
                self.assertTrue(out.timed_out)
                self.assertLess(time.monotonic() - start, 10)
                if uid is not None:
                    self.assertEqual(lab_sandbox._processes_of(uid), [])

    def test_limits(self):
        for mode in modes():
            with self.subTest(mode=mode):
                bomb = ("python3 -c 'import os, time\nn = 0\ntry:\n    for i in range(200):\n"
                        "        if os.fork() == 0:\n            time.sleep(3)\n"
                        "            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\n"
                        "print(\"forked\", n)'")
                _, _, out, text = self.run_in(mode, bomb, processes=64)
                forked = int(text.split("forked")[1].split()[0])
                self.assertLess(forked, 64, text)
                _, _, out, text = self.run_in(
                    mode, "head -c 50000000 /dev/zero > big; ls -l big", file_bytes=1 << 20)
                big = os.path.join(self.work, "big")
                self.assertLessEqual(os.path.getsize(big), 1 << 20)
                _, _, out, text = self.run_in(mode, "yes flood | head -c 5000000",
                                              output_bytes=100000)
                self.assertTrue(out.truncated)
                self.assertLess(len(text), 101000)
                self.assertIn("output cut by the grader after 100000 bytes", text)
                self.assertEqual(out.output_bytes, 5000000)

    def test_a_compiler_reading_dev_zero_stops_at_the_build_memory_limit(self):
        with open(os.path.join(self.work, "zero.cpp"), "w") as f:
            f.write('#include "/dev/zero"\n')
        for mode in modes():
            for compiler in ("g++", "clang++"):
                with self.subTest(mode=mode, compiler=compiler):
                    start = time.monotonic()
                    _, _, out, text = self.run_in(
                        mode, f"{compiler} -c zero.cpp -o zero.o", timeout=120,
                        memory_bytes=lab_grade.BUILD_MEMORY)
                    self.assertFalse(out.timed_out)
                    self.assertLess(time.monotonic() - start, 60)
                    if compiler == "g++":  # clang reads a device as an empty file
                        self.assertNotEqual(out.status, 0)
                        self.assertRegex(text.lower(), "out of memory|bad_alloc|cannot allocate")

    def test_only_the_scratch_folder_is_writable(self):
        for mode in modes():
            with self.subTest(mode=mode):
                target = os.path.join(self.private, "written")
                _, _, out, text = self.run_in(
                    mode, f"echo x > {target}; echo y > {self.work}/mine; cat {self.private}/secret")
                self.assertFalse(os.path.exists(target), "wrote outside the scratch folder")
                self.assertTrue(os.path.exists(os.path.join(self.work, "mine")))
                if mode == "bwrap":
                    self.assertNotIn("the reference solution", text)

    def test_the_fallback_hides_the_machine_and_gives_each_step_its_own_tmp(self):
        if "user" not in modes() or not lab_sandbox.Sandbox("user").hides:
            self.skipTest("no dedicated-user fallback with mount namespaces here")
        with open("/etc/passwd") as f:
            first = f.readline().strip()
        marker = f"toll-sandbox-step-{os.getpid()}"
        _, _, out, text = self.run_in(
            "user", f"cat /etc/passwd; ls {ROOT} {self.private}; echo one > /tmp/{marker}; "
                    f"cat /tmp/{marker}; cc --version >/dev/null && echo compiler-ok; "
                    f"echo mine > {self.work}/mine")
        self.assertNotIn(first, text)
        self.assertNotIn("tools", text)
        self.assertNotIn("secret", text)
        self.assertIn("one", text)       # its /tmp works ...
        self.assertIn("compiler-ok", text)  # ... and so do the tools
        self.assertFalse(os.path.exists(f"/tmp/{marker}"), "the step wrote the machine's /tmp")
        _, _, out, text = self.run_in("user", f"cat /tmp/{marker} {self.work}/mine")
        self.assertNotIn("one", text)    # the next step has a /tmp of its own
        self.assertIn("mine", text)      # the scratch folder is the same one

    def test_a_step_that_fills_its_scratch_folder_is_stopped(self):
        # The cap lowered to 64 MiB for the test (the grader's is 3 GiB):
        # files in the folder count, and so do files a process deleted but
        # holds open (on disk until it ends, in no folder).
        fill = {"files": "for i in $(seq 1 60); do head -c 8000000 /dev/zero > f$i; "
                         "sleep 0.1; done; echo never-stopped",
                "deleted": "python3 -c 'import os, time\nkept = []\nfor i in range(60):\n"
                           "    f = open(\"d%d\" % i, \"wb\")\n    os.unlink(\"d%d\" % i)\n"
                           "    f.write(bytes(8000000))\n    f.flush()\n    kept.append(f)\n"
                           "    time.sleep(0.1)\nprint(\"never-stopped\")'"}
        old = os.environ.get(lab_sandbox.SCRATCH_MB_VARIABLE)
        os.environ[lab_sandbox.SCRATCH_MB_VARIABLE] = "64"
        try:
            for mode in modes():
                for kind, script in fill.items():
                    with self.subTest(mode=mode, kind=kind):
                        box = lab_sandbox.Sandbox(mode)
                        uid = box.acquire_uid()
                        try:
                            box.hand_over(self.work, uid)
                            log = os.path.join(self.private, "log")
                            out = box.run([SH, "-c", script], log, 30,
                                          lab_sandbox.Limits(file_bytes=64 << 20),
                                          writable=[self.work], cwd=self.work, uid=uid,
                                          watch=self.work)
                        finally:
                            box.release_uid(uid)
                        with open(log, errors="replace") as f:
                            text = f.read()
                        self.assertTrue(out.disk_full, text)
                        self.assertNotIn("never-stopped", text)
                        self.assertIn("grew past 64 MiB, so the step was stopped", text)
                        for n in os.listdir(self.work):
                            os.unlink(os.path.join(self.work, n))
        finally:
            if old is None:
                del os.environ[lab_sandbox.SCRATCH_MB_VARIABLE]
            else:
                os.environ[lab_sandbox.SCRATCH_MB_VARIABLE] = old

    def test_dev_shm_is_the_steps_own_and_capped(self):
        # /dev/shm is a world-writable tmpfs like /tmp: a step that writes
        # there must neither reach the machine's (shared with classmates'
        # gradings, kept after the step) nor hold more RAM than its /tmp.
        for mode in modes():
            with self.subTest(mode=mode):
                name = f"toll-shm-probe-{os.getpid()}-{mode}"
                script = (f"for i in 1 2 3 4 5 6; do head -c 20000000 /dev/zero > "
                          f"/dev/shm/{name}-$i || break; done; du -sk /dev/shm")
                _, _, out, text = self.run_in(mode, script, file_bytes=64 << 20)
                left = [n for n in os.listdir("/dev/shm") if n.startswith(name)]
                for n in left:
                    os.unlink(os.path.join("/dev/shm", n))
                self.assertEqual(left, [], "the step wrote the machine's /dev/shm")
                used = re.search(r"^(\d+)\s+/dev/shm$", text, re.M)
                self.assertIsNotNone(used, text)
                assert used is not None
                self.assertLessEqual(int(used.group(1)) << 10, lab_sandbox.SHM_BYTES, text)

    def test_the_machine_is_invisible_under_bubblewrap(self):
        if "bwrap" not in modes():
            self.skipTest("bubblewrap cannot make namespaces here")
        with open("/etc/passwd") as f:
            first = f.readline().strip()
        _, _, out, text = self.run_in(
            "bwrap", f"cat /etc/passwd /etc/hostname; ls {ROOT}; hostname; "
                     "cat /proc/1/cmdline; echo; (exec 3<>/dev/tcp/127.0.0.1/22) 2>&1; "
                     "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), 2)'")
        self.assertNotIn(first, text)
        self.assertIn("toll-grade", text)  # its own host name
        self.assertNotIn("tools/grade", text)
        self.assertIn("Network is unreachable", text)

    def test_a_pth_file_planted_in_one_step_never_runs_in_the_next(self):
        # Python runs the lines of a .pth in the user's site-packages at every
        # start: a step that plants one there would run code in every later
        # Python of the grading (tools/run, the audit's scan).
        for mode in modes():
            with self.subTest(mode=mode):
                home = "/tmp" if mode == "bwrap" else os.path.join(self.work, "home")
                os.makedirs(home, exist_ok=True)
                env = lab_sandbox.minimal_env(home=home)
                ran = os.path.join(self.work, f"pth-ran-{mode}")
                pth_line = f"import os; open({ran!r}, 'w')\n"
                with open(os.path.join(self.work, "plant.py"), "w") as f:
                    f.write("import os, site\n"
                            "d = site.getusersitepackages()\n"
                            "os.makedirs(d, exist_ok=True)\n"
                            "with open(os.path.join(d, 'evil.pth'), 'w') as f:\n"
                            f"    f.write({pth_line!r})\n"
                            "print('planted', d)\n")
                _, _, out, text = self.run_in(mode, "python3 plant.py", env=env)
                self.assertIn("planted", text)
                # The same Python without the grader's environment runs the .pth:
                # the plant is real.
                if mode == "user":
                    bare = {k: v for k, v in env.items() if k != "PYTHONNOUSERSITE"}
                    self.run_in(mode, "python3 -c pass", env=bare)
                    self.assertTrue(os.path.exists(ran), "the planted .pth does not work")
                    os.unlink(ran)
                _, _, out, text = self.run_in(mode, "python3 -c pass; echo done", env=env)
                self.assertIn("done", text)
                self.assertFalse(os.path.exists(ran), "a .pth planted by a step ran in the next")

    def test_the_reference_cache_is_out_of_reach(self):
        # A student's step reads its lab's cache; the reference's own cache
        # and store beside it are the grading user's alone.
        tools = lab_build.BuildTools(self.top, os.path.join(self.top, "cache"))
        if not tools.cache_dir:
            self.skipTest("ccache is not installed")
        local, store = tools.reference_cache()
        lab = tools.lab_cache("demo")
        os.makedirs(lab, exist_ok=True)
        for d in (local, store, lab):
            with open(os.path.join(d, "object"), "w") as f:
                f.write("compiled code\n")
        for mode in modes():
            with self.subTest(mode=mode):
                _, _, out, text = self.run_in(
                    mode, f"cat {lab}/object && echo lab-ok; cat {local}/object {store}/object; "
                          f"ls {local} {store}", readable=[lab])
                self.assertIn("lab-ok", text)
                self.assertEqual(text.count("compiled code"), 1, text)

    def test_a_cache_or_work_folder_another_user_owns_or_may_write_is_refused(self):
        theirs = os.path.join(self.top, "theirs")
        shared = os.path.join(self.top, "shared")
        os.makedirs(theirs)
        os.makedirs(shared)
        os.chmod(shared, 0o777)
        if os.geteuid() == 0:
            os.chown(theirs, lab_sandbox.DEFAULT_UID_BASE + 7, lab_sandbox.DEFAULT_UID_BASE + 7)
            with self.assertRaisesRegex(lab_safe.SetupProblem, "belongs to uid"):
                lab_safe.check_private_folder(theirs, "the compiler cache")
        with self.assertRaisesRegex(lab_safe.SetupProblem, "writable by other users"):
            lab_safe.check_private_folder(shared, "the compiler cache")
        # tools/grade stops before building anything, with a message for the
        # instructor and exit status 2 (no grade, not a zero).
        sub = os.path.join(self.top, "sub")
        os.makedirs(sub)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "grade"), "--lab", "demo",
                            sub, "--out", os.path.join(self.top, "out"),
                            "--work", os.path.join(self.top, "gw"), "--cache", shared],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("a problem of the grader's setup", r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.top, "out", "results.json")))

    def test_the_fallback_is_forced_by_the_environment(self):
        if os.geteuid() != 0:
            self.skipTest("the dedicated-user fallback needs root")
        os.environ["TOLL_GRADE_SANDBOX"] = "user"
        try:
            box = lab_sandbox.Sandbox()
        finally:
            del os.environ["TOLL_GRADE_SANDBOX"]
        self.assertEqual(box.mode, "user")
        self.assertIn("dedicated unprivileged user", box.describe())
        if box.hides:
            self.assertIn("mount namespace of each step's own", box.describe())
        else:
            self.assertIn("readable by every user", box.describe())


class Words(unittest.TestCase):
    def test_a_build_timeout_names_the_last_step(self):
        text = "[1/3] Building CXX object a.o\n[2/3] Generating test list of toll-unit\n"
        self.assertEqual(lab_grade.last_build_step(text), "Generating test list of toll-unit")
        self.assertEqual(lab_grade.last_build_step("nothing"), "")

    def test_two_graders_never_share_a_uid(self):
        if os.geteuid() != 0:
            self.skipTest("dedicated users need root")
        a, b = lab_sandbox.Sandbox("user"), lab_sandbox.Sandbox("user")
        ua, ub = a.acquire_uid(), b.acquire_uid()
        try:
            self.assertNotEqual(ua, ub, "one grader would kill the other's processes")
        finally:
            a.release_uid(ua)
            b.release_uid(ub)

    def test_none_must_be_asked_for(self):
        box = lab_sandbox.Sandbox("none")
        self.assertIn("NONE", box.describe())
        with self.assertRaises(lab_sandbox.SandboxError):
            lab_sandbox.Sandbox("sideways")


if __name__ == "__main__":
    unittest.main()
