#!/usr/bin/python3
"""Tests of how the grader builds: scratch slots, the ccache settings and their
absence, path tidying, kernel-only builds, and the launcher reaching the
kernel's own CMake build through the top-level CMakeLists.txt."""

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# tools/lib, through PYTHONPATH=tools (ctest sets it).
from lib import lab_build, lab_grade, lab_rubric


class Slots(unittest.TestCase):
    def test_two_gradings_never_share_a_slot_and_a_slot_starts_empty(self):
        with tempfile.TemporaryDirectory() as root:
            a = lab_build.ScratchSlot(root)
            b = lab_build.ScratchSlot(root)
            self.assertNotEqual(a.path, b.path)
            with open(os.path.join(a.path, "left-over"), "w") as f:
                f.write("from the previous submission")
            a.release()
            c = lab_build.ScratchSlot(root)
            self.assertEqual(c.path, a.path, "a released slot is reused")
            self.assertEqual(os.listdir(c.path), [], "a reused slot starts empty")
            b.release()
            c.release()
            self.assertFalse(os.path.exists(c.path))


class Prune(unittest.TestCase):
    def make_version(self, folder: str, version: str, age: int) -> None:
        scans = os.path.join(folder, f"toll-grade-reference-{version}.json")
        for path in (scans, scans + ".lock"):
            with open(path, "w") as f:
                f.write("{}")
        os.makedirs(os.path.join(folder, f"lab-net-initrd-{version}", "deep"))
        os.utime(scans, (1_000_000 + age, 1_000_000 + age))

    def test_old_versions_go_and_the_current_and_newest_stay(self):
        with tempfile.TemporaryDirectory() as folder:
            for age, version in enumerate("abcde"):
                self.make_version(folder, version * 16, age)  # e is the newest
            os.makedirs(os.path.join(folder, "lab-net"))  # the lab's cache: never touched
            removed = lab_build.prune_versions(folder, "a" * 16, keep=3)
            self.assertEqual(sorted(removed), ["b" * 16, "c" * 16])
            left = sorted(os.listdir(folder))
            for version in ("a", "d", "e"):
                self.assertIn(f"toll-grade-reference-{version * 16}.json", left)
                self.assertIn(f"lab-net-initrd-{version * 16}", left)
            for version in ("b", "c"):
                self.assertFalse([n for n in left if version * 16 in n], left)
            self.assertIn("lab-net", left)

    def test_a_version_being_graded_is_kept(self):
        with tempfile.TemporaryDirectory() as folder:
            for age, version in enumerate("abc"):
                self.make_version(folder, version * 16, age)
            lock = os.path.join(folder, f"toll-grade-reference-{'a' * 16}.json.lock")
            with open(lock) as held:
                fcntl.flock(held, fcntl.LOCK_EX)
                removed = lab_build.prune_versions(folder, "c" * 16, keep=1)
            self.assertEqual(removed, ["b" * 16])
            self.assertTrue(os.path.exists(os.path.join(folder, f"lab-net-initrd-{'a' * 16}")))

    def test_a_link_is_removed_never_followed(self):
        with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as elsewhere:
            victim = os.path.join(elsewhere, "precious")
            with open(victim, "w") as f:
                f.write("not the grader's")
            for age, version in enumerate("ab"):
                self.make_version(folder, version * 16, age)
            os.symlink(elsewhere, os.path.join(folder, f"lab-fpu-initrd-{'a' * 16}"))
            lab_build.prune_versions(folder, "b" * 16, keep=1)
            self.assertTrue(os.path.exists(victim))
            self.assertFalse(os.path.lexists(os.path.join(folder, f"lab-fpu-initrd-{'a' * 16}")))


class Tools(unittest.TestCase):
    def test_ccache_settings(self):
        with tempfile.TemporaryDirectory() as root:
            with mock.patch.object(lab_build.shutil, "which",
                                   lambda name: f"/usr/bin/{name}"):
                tools = lab_build.BuildTools(root)
            self.assertEqual(tools.note, "")
            self.assertIn("-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/ccache", tools.cmake_args())
            env = tools.env({"CCACHE_DIR": "/root/.ccache", "CCACHE_RECACHE": "1", "PATH": "x"})
            self.assertEqual(env["CCACHE_DIR"], os.path.join(root, lab_build.CACHE_FOLDER))
            self.assertEqual(env["CCACHE_BASEDIR"], root)
            self.assertEqual(env["CCACHE_NOHASHDIR"], "1")
            self.assertNotIn("CCACHE_RECACHE", env, "the user's ccache settings are dropped")
            self.assertEqual(env["PATH"], "x")

    def test_without_ccache_the_build_is_plain_and_says_so(self):
        with tempfile.TemporaryDirectory() as root:
            with mock.patch.object(lab_build.shutil, "which", lambda name: None):
                tools = lab_build.BuildTools(root)
            self.assertIn("not installed", tools.note)
            self.assertEqual(tools.cmake_args(), [])
            self.assertFalse([k for k in tools.env({"CCACHE_DIR": "/x"}) if k.startswith("CCACHE")])
            self.assertEqual(tools.counts(), {})
            off = lab_build.BuildTools(root, use_cache=False)
            self.assertEqual(off.note, "")
            self.assertFalse([a for a in off.cmake_args() if "LAUNCHER" in a])


class Paths(unittest.TestCase):
    def test_ccache_relative_paths_read_like_absolute_ones(self):
        with tempfile.TemporaryDirectory() as tree:
            os.makedirs(os.path.join(tree, "src", "kernel"))
            open(os.path.join(tree, "src", "kernel", "k.cpp"), "w").close()
            via_cache = "FAIL ../../src/kernel/k.cpp:12: expected x"
            plain = f"FAIL {tree}/src/kernel/k.cpp:12: expected x"
            self.assertEqual(lab_grade.tree_relative(via_cache, tree),
                             "FAIL src/kernel/k.cpp:12: expected x")
            self.assertEqual(lab_grade.tree_relative(plain, tree),
                             lab_grade.tree_relative(via_cache, tree))
            self.assertEqual(lab_grade.tree_relative("see ../elsewhere/x.c", tree),
                             "see ../elsewhere/x.c", "paths outside the tree stay")


class KernelOnly(unittest.TestCase):
    def test_only_a_disk_boot_needs_the_disk_images(self):
        rubric = lab_rubric.find(ROOT, "demo")
        self.assertFalse(lab_grade.needs_disk_image(rubric))
        for run in (["--emu", "bochs"], ["--boot", "disk"], ["--boot=disk"]):
            item = mock.Mock(run=run)
            with mock.patch.object(rubric, "items", rubric.items + [item]):
                self.assertTrue(lab_grade.needs_disk_image(rubric), run)

    def test_the_launcher_and_kernel_only_reach_the_kernel_build(self):
        with tempfile.TemporaryDirectory() as bdir:
            launcher = os.path.join(bdir, "launch")
            with open(launcher, "w") as f:
                f.write('#!/bin/sh\nexec "$@"\n')
            os.chmod(launcher, 0o755)
            self.assertTrue(shutil.which("ninja"), "ninja is missing: run tools/deps")
            env = dict(os.environ)
            env.pop("CMAKE_BUILD_PARALLEL_LEVEL", None)
            run = lambda *cmd: subprocess.run(cmd, env=env, capture_output=True, text=True)
            r = run("cmake", "-G", "Ninja", "-S", ROOT, "-B", bdir, "-DTOLL_ARCHES=i386",
                    f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}", "-DTOLL_KERNEL_ONLY=ON")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            r = run("cmake", "--build", bdir, "--target",
                    "kernel-i386-prefix/src/kernel-i386-stamp/kernel-i386-configure")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(bdir, "i386", "CMakeCache.txt")) as f:
                cache = f.read()
            for lang in ("C", "CXX"):
                self.assertIn(f"CMAKE_{lang}_COMPILER_LAUNCHER:UNINITIALIZED={launcher}", cache)
            with open(os.path.join(bdir, "build.ninja")) as f:
                self.assertIn("--target toll-i386.elf", f.read())


if __name__ == "__main__":
    unittest.main()
