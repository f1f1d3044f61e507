#!/usr/bin/python3
"""The grader's looks from outside the machine (tools/run --probe) on this
build's kernel: each says yes where the mechanism is there, and each can say
no: the isolation probe on the 3/1 layout, which has no isolation, and the
memory-map probe when QEMU is given other memory than the probe was told.
Usage: test_probes.py BUILD"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lib import probes  # noqa: E402  (PYTHONPATH=tools: tools/lib is not installed)
BUILD = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build")


def probe(*args: str) -> dict:
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "run"), "--build", BUILD,
                          "--quiet", "--timeout", "30", "--json", "-", *args],
                         capture_output=True, text=True, timeout=90)
    summary = json.loads(out.stdout)
    return summary


class Probes(unittest.TestCase):
    def test_isolation_holds_under_both_isolated_layouts(self):
        for split in ("3/1-pti", "4/4"):
            with self.subTest(split=split):
                s = probe("--probe", "isolation", "--cmdline",
                          f"vm.split={split} run='/bin/ut_forkexec'")
                self.assertEqual(s["outcome"], "done")
                self.assertTrue(s["probe"]["ok"], s["probe"])
                self.assertIn(f"({split})", s["probe"]["detail"])

    def test_isolation_fails_on_the_3_1_layout(self):
        s = probe("--probe", "isolation", "--cmdline", "vm.split=3/1 run='/bin/ut_forkexec'")
        self.assertEqual(s["outcome"], "done")  # the records pass ...
        self.assertFalse(s["probe"]["ok"])       # ... and the machine says otherwise
        self.assertIn("3/1", s["probe"]["detail"])

    def test_a_missing_symbol_ends_the_machine_at_once(self):
        # The kernel's ELF file without the trampoline blocks' symbol: the
        # probe says which, and QEMU, held at its first instruction for the
        # probe, ends now instead of at the time limit.
        kernel = os.path.join(BUILD, "i386", "arch", "i386", "toll-i386.elf")
        with tempfile.TemporaryDirectory() as folder:
            other = os.path.join(folder, "stripped.elf")
            subprocess.run([shutil.which("llvm-objcopy") or "objcopy",
                            "--strip-symbol=trampoline_cpus", kernel, other], check=True)
            s = probe("--probe", "isolation", "--symbols", other, "--cmdline",
                      "vm.split=4/4 run='/bin/ut_forkexec'")
        self.assertEqual(s["outcome"], "error")
        self.assertFalse(s["probe"]["ok"])
        self.assertIn("trampoline_cpus", s["probe"]["detail"])
        self.assertLess(s["seconds"], 15)

    def test_offsets_match_the_kernels_headers(self):
        # The probe's copies of the layout the kernel's headers define.
        raw = {}
        for header in ("layout.h", "asm_offsets.h"):
            with open(os.path.join(ROOT, "src", "arch", "i386", header)) as f:
                raw.update(re.findall(r"^#define (\w+) ([^/\n]+?)\s*(?:/\*.*)?$", f.read(),
                                      re.M))

        def value(name: str) -> int:
            expr = re.sub(r"\b[A-Z_][A-Z0-9_]*\b", lambda m: str(value(m.group(0))), raw[name])
            self.assertRegex(expr, r"^[0-9a-fx()+\-* ]+$")
            return eval(expr, {})

        for name in ("TRAMPOLINE_CPU_SIZE", "TRAMPOLINE_CPUS", "TV_KERNEL_CR3", "TV_USER_CR3",
                     "TC_EXIT_SP", "CPU_PORT_WORD", "TF_EIP", "TF_CS"):
            with self.subTest(name=name):
                self.assertEqual(getattr(probes, name), value(name))

    def test_memory_map_matches_the_memory_given(self):
        s = probe("--probe", "memory_map", "--boot", "disk", "--mem", "96", "--cmdline",
                  "test=vm86.probe_matches_boot_map")
        self.assertTrue(s["probe"]["ok"], s["probe"])
        self.assertIn("96 MB", s["probe"]["detail"])

    def test_memory_map_fails_when_the_machine_has_other_memory(self):
        # QEMU takes the last -m: the machine has 160 MB, the probe expects 96.
        s = probe("--probe", "memory_map", "--boot", "disk", "--mem", "96", "--extra=-m",
                  "--extra", "160", "--cmdline", "test=vm86.probe_matches_boot_map")
        self.assertEqual(s["outcome"], "done")
        self.assertFalse(s["probe"]["ok"])
        self.assertIn("QEMU was given 96 MB", s["probe"]["detail"])

    def test_fpu_lazy_sees_the_switch_back_through_nm(self):
        s = probe("--probe", "fpu_lazy", "--cmdline", "fpu.switch=lazy run='fpu_iso 77 201'")
        self.assertEqual(s["outcome"], "done")
        self.assertTrue(s["probe"]["ok"], s["probe"])
        self.assertIn("A's pattern (seed 77)", s["probe"]["detail"])

    def test_fpu_lazy_fails_on_an_eager_switch(self):
        # fpu_iso passes under eager switching too; the machine shows that
        # no #NM gave A its registers back.
        s = probe("--probe", "fpu_lazy", "--cmdline", "fpu.switch=eager run='fpu_iso 77 201'")
        self.assertEqual(s["outcome"], "done")
        self.assertFalse(s["probe"]["ok"])
        self.assertIn("not switched lazily", s["probe"]["detail"])

    def test_superpages_finds_the_runs_and_blocks_in_the_page_tables(self):
        s = probe("--arch", "arm64", "--probe", "superpages", "--cmdline", "run='ut_superpages'")
        self.assertEqual(s["outcome"], "done")
        self.assertTrue(s["probe"]["ok"], s["probe"])
        self.assertIn("well-formed contiguous run", s["probe"]["detail"])

    def test_superpages_fails_where_the_tables_hold_none(self):
        # vm.superpages=0: the program's own checks pass (it expects none),
        # and the probe, which expects the runs, sees none.
        s = probe("--arch", "arm64", "--probe", "superpages", "--cmdline",
                  "vm.superpages=0 run='ut_superpages off'")
        self.assertEqual(s["outcome"], "done")
        self.assertFalse(s["probe"]["ok"])
        self.assertIn("0 contiguous run(s) and 0 block(s)", s["probe"]["detail"])

    def test_superpages_off_sees_no_run_and_no_block(self):
        s = probe("--arch", "arm64", "--probe", "superpages_off", "--cmdline",
                  "vm.superpages=0 run='ut_superpages off'")
        self.assertEqual(s["outcome"], "done")
        self.assertTrue(s["probe"]["ok"], s["probe"])
        self.assertIn("no contiguous run and no block", s["probe"]["detail"])

    def test_superpages_off_fails_where_the_kernel_promotes(self):
        # The kernel promotes (superpages on) while the probe was told they
        # are off: the first look that finds a run or a block says so.
        s = probe("--arch", "arm64", "--probe", "superpages_off", "--cmdline", "run='ut_superpages'")
        self.assertEqual(s["outcome"], "done")
        self.assertFalse(s["probe"]["ok"])
        self.assertIn("superpages are off, yet", s["probe"]["detail"])


if __name__ == "__main__":
    unittest.main()
