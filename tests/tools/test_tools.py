#!/usr/bin/python3
"""Tests of the tools' library and command lines that need no emulator: the
Machine streaming loop over a stand-in emulator (verdicts, timeouts, the
process group killed with everything it started, input typed at the prompt,
a flood, a console file), emulators.prepare()'s choice of Machine, the
package's list of its modules, and the --help of tools/mkinitrd and
tools/boottime.

Run by ctest as tools.library (PYTHONPATH=tools), or by hand:
    PYTHONPATH=tools python3 tests/tools/test_tools.py
"""

import os
import struct
import subprocess
import sys
import tempfile
import time
import unittest

from lib import emulators, images, machine, process, qemu
from lib.records import Records

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class StandIn(machine.Machine):
    """A Machine whose emulator is a Python one-liner."""

    def __init__(self, args, script):
        self.script = script
        super().__init__(args)

    def setup(self, args):
        return [sys.executable, "-c", self.script]


def options(**kw):
    return machine.RunOptions(build=os.path.join(ROOT, "build"), **kw)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead but not yet reaped by its parent (init, here).
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


class Streaming(unittest.TestCase):
    def test_done_record_ends_the_run_cleanly(self):
        with StandIn(options(), "print('TEST a PASS'); print('DONE 1 passed, 0 failed')") as m:
            records = Records()
            self.assertEqual(m.stream(records, m.args), ("done", ""))
            self.assertIn(b"TEST a PASS", m.console_bytes)

    def test_silence_times_out_and_the_whole_group_dies(self):
        with tempfile.TemporaryDirectory() as tmp:
            pidfile = os.path.join(tmp, "pid")
            # The stand-in starts a grandchild, reports its pid, then hangs.
            script = ("import subprocess, time; "
                      "p = subprocess.Popen(['sleep', '100']); "
                      f"open({pidfile!r}, 'w').write(str(p.pid)); time.sleep(100)")
            with StandIn(options(timeout=1.0), script) as m:
                start = time.monotonic()
                outcome, detail = m.stream(Records(), m.args)
                self.assertEqual(outcome, "timeout")
                self.assertLess(time.monotonic() - start, 10)
            with open(pidfile) as f:
                grandchild = int(f.read())
            for _ in range(50):
                if not alive(grandchild):
                    break
                time.sleep(0.05)
            self.assertFalse(alive(grandchild), "the emulator's child outlived the run")

    def test_stop_at_ends_the_run_at_the_prompt(self):
        script = "import sys, time; sys.stdout.write('boot\\n$ '); sys.stdout.flush(); time.sleep(100)"
        with StandIn(options(timeout=20, stop_at=b"$ "), script) as m:
            outcome, _ = m.stream(Records(), m.args)
        self.assertEqual(outcome, "stopped")

    def test_an_exit_without_done_is_incomplete(self):
        with StandIn(options(), "print('TEST a PASS')") as m:
            outcome, _ = m.stream(Records(), m.args)
        self.assertEqual(outcome, "incomplete")

    def test_input_is_typed_at_the_first_prompt(self):
        # The stand-in prompts, reads one line and reports it in a record.
        script = ("import sys; sys.stdout.write('$ '); sys.stdout.flush(); "
                  "line = sys.stdin.readline().strip(); "
                  "print(f'\\nTEST got_{line} PASS'); print('DONE 1 passed, 0 failed')")
        with StandIn(options(timeout=20, input="hello\n"), script) as m:
            records = Records()
            self.assertEqual(m.stream(records, m.args), ("done", ""))
        self.assertEqual(records.test_order, ["got_hello"])

    def test_a_flood_of_output_ends_the_run(self):
        script = "import sys\nwhile True: sys.stdout.write('x' * 4096 + '\\n')"
        with StandIn(options(timeout=20, max_output=100000), script) as m:
            outcome, detail = m.stream(Records(), m.args)
        self.assertEqual((outcome, detail), ("flood", "more than 100000 bytes"))
        self.assertLessEqual(len(m.console_bytes), 100000 + 65536)

    def test_a_console_file_is_read_to_its_end_after_the_exit(self):
        # As under Bochs: the console is a file, and the last line has no newline.
        class FileConsole(StandIn):
            def setup(self, args):
                self.console_path = os.path.join(self.scratch, "console")
                return super().setup(args)
        script = ("import sys; f = open(sys.argv[1], 'w'); "
                  "f.write('TEST a PASS\\nDONE 1 passed, 0 failed'); f.close()")
        with FileConsole(options(timeout=20), script) as m:
            m.command.append(m.console_path)
            records = Records()
            self.assertEqual(m.stream(records, m.args), ("done", ""))
        self.assertEqual(records.done, {"passed": 1, "failed": 0, "skipped": 0})

    def test_group_wait_reports_a_timeout_as_none(self):
        with process.Group(["sleep", "5"]) as child:
            self.assertIsNone(child.wait(timeout=0.1))
        self.assertIsNotNone(child.proc.returncode)


    def test_stop_kills_what_the_command_left_and_leaves_the_pipe_readable(self):
        # The command prints, starts a grandchild that keeps its stdout, and exits.
        script = "import subprocess; print('bye', flush=True); subprocess.Popen(['sleep', '100'])"
        with process.Group([sys.executable, "-c", script], umask=0o077) as child:
            self.assertEqual(child.wait(10), 0)
            self.assertEqual(child.stop(), 0)
            # The grandchild held the pipe open: end of file proves it died.
            self.assertEqual(child.proc.stdout.read(), b"bye\n")
            self.assertEqual(child.stop(), 0)  # a second stop signals nothing

    def test_limited_copy_keeps_the_limit_and_counts_the_rest(self):
        with tempfile.TemporaryFile() as log:
            with process.Group(["head", "-c", "300000", "/dev/zero"]) as child:
                copy = process.LimitedCopy(child.proc.stdout, log, 1000)
                self.assertEqual(child.wait(10), 0)
                self.assertTrue(copy.join(10))
            self.assertEqual((copy.total, copy.kept, copy.truncated), (300000, 1000, True))
            self.assertEqual(log.tell(), 1000)
            with process.Group(["printf", "12345"]) as child:
                copy = process.LimitedCopy(child.proc.stdout, log, 5)
                self.assertTrue(copy.join(10))
            self.assertEqual((copy.total, copy.truncated), (5, False))


class Library(unittest.TestCase):
    def test_the_package_docstring_names_every_module(self):
        import lib
        modules = sorted(n[:-3] for n in os.listdir(os.path.join(ROOT, "tools", "lib"))
                         if n.endswith(".py") and n != "__init__.py" and not n.startswith("lab_"))
        listed = lib.__doc__ or ""
        self.assertIn("lab_*", listed)
        for name in modules:
            self.assertRegex(listed, rf"(^|\s){name}(\s|,)", f"lib/__init__.py omits {name}")


class Prepare(unittest.TestCase):
    def test_each_architecture_and_emulator_gets_its_own_machine(self):
        self.assertIs(emulators.MACHINES[("i386", "qemu")], qemu.QemuI386)
        self.assertIs(emulators.MACHINES[("arm64", "qemu")], qemu.QemuArm64)
        with self.assertRaisesRegex(emulators.SetupError, "does not run under"):
            emulators.prepare(options(arch="arm64", emu="bochs"))

    def test_a_missing_build_is_a_setup_error_that_says_build_first(self):
        args = machine.RunOptions(build="/nonexistent-build")
        with self.assertRaisesRegex(emulators.SetupError, "build first"):
            emulators.prepare(args)


class CpuCount(unittest.TestCase):
    def test_the_cpu_count_reaches_every_emulator(self):
        with tempfile.TemporaryDirectory() as tmp:
            kernel = os.path.join(tmp, "kernel.elf")
            open(kernel, "wb").close()
            # qemu_command() reads only its options, so no Machine is built.
            for arch, cls in (("i386", qemu.QemuI386), ("arm64", qemu.QemuArm64)):
                cmd = cls.qemu_command(None, options(arch=arch, kernel=kernel, cpus=4))
                self.assertEqual(cmd[cmd.index("-smp") + 1], "4")
                one = cls.qemu_command(None, options(arch=arch, kernel=kernel))
                self.assertEqual(one[one.index("-smp") + 1], "1")


class DiskImage(unittest.TestCase):
    """images.append_ramdisk: the --add archive of a loaderless boot."""

    def boot_sector(self, sectors, pages):
        boot = bytearray(images.SECTOR)
        boot[images.HEADER_OFFSET:images.HEADER_OFFSET + 4] = images.HEADER_MAGIC
        struct.pack_into("<IIH", boot, images.HEADER_OFFSET + 4, sectors, 0x100000, pages)
        boot[-2:] = images.BOOT_SIGNATURE
        return bytes(boot)

    def test_the_archive_goes_past_the_kernels_memory_and_is_loaded(self):
        with tempfile.TemporaryDirectory() as tmp:
            disk, archive = os.path.join(tmp, "disk.img"), os.path.join(tmp, "extra.cpio")
            boot = self.boot_sector(sectors=10, pages=3)  # 5 KB of file, 12 KB of memory
            with open(disk, "wb") as f:
                f.write(boot + bytes(images.SECTOR * 11))
            with open(archive, "wb") as f:
                f.write(b"A" * 1000)
            base, size = images.append_ramdisk(disk, boot, archive)
            self.assertEqual((base, size), (0x100000 + 3 * 4096, 1000))
            with open(disk, "rb") as f:
                image = f.read()
            start = images.KERNEL_OFFSET + 3 * 4096
            self.assertEqual(image[start:start + 1000], b"A" * 1000)
            (sectors,) = struct.unpack_from("<I", image, images.HEADER_OFFSET + 4)
            self.assertEqual(sectors, -(-(3 * 4096 + 1000) // images.SECTOR))
            self.assertEqual(len(image) % images.CYLINDER_BYTES, 0)

    def test_an_image_without_the_kernels_pages_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            disk, archive = os.path.join(tmp, "disk.img"), os.path.join(tmp, "extra.cpio")
            boot = self.boot_sector(sectors=10, pages=0)
            with open(disk, "wb") as f:
                f.write(boot)
            with open(archive, "wb") as f:
                f.write(b"A")
            with self.assertRaisesRegex(machine.SetupError, "predates --add"):
                images.append_ramdisk(disk, boot, archive)


class CommandLines(unittest.TestCase):
    def run_tool(self, *argv, cwd=None):
        return subprocess.run([sys.executable, os.path.join(ROOT, "tools", argv[0])] +
                              list(argv[1:]), capture_output=True, text=True, cwd=cwd)

    def test_run_refuses_a_cpu_count_out_of_range_and_says_why(self):
        for bad, why in (("0", "1 to 8"), ("9", "1 to 8"), ("two", "not a number")):
            r = self.run_tool("run", "--cpus", bad, "--build", "/nonexistent-build")
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn(why, r.stderr)

    def test_mkinitrd_help_prints_usage_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = self.run_tool("mkinitrd", "--help", cwd=tmp)
            self.assertEqual(r.returncode, 0)
            self.assertIn("usage: tools/mkinitrd", r.stdout)
            self.assertEqual(os.listdir(tmp), [])

    def test_mkinitrd_refuses_a_missing_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = self.run_tool("mkinitrd", os.path.join(tmp, "out.cpio"), "/no/such/file")
            self.assertEqual(r.returncode, 2)
            self.assertIn("/no/such/file: no such file", r.stderr)
            self.assertEqual(os.listdir(tmp), [])

    def test_mkinitrd_stores_files_under_their_names(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "prog")
            with open(src, "wb") as f:
                f.write(b"\x7fELF-ish")
            out = os.path.join(tmp, "out.cpio")
            r = self.run_tool("mkinitrd", out, src, f"{src}=etc/motd")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                data = f.read()
            self.assertTrue(data.startswith(b"070701"))
            self.assertIn(b"bin/prog\0", data)
            self.assertIn(b"etc/motd\0", data)
            self.assertIn(b"TRAILER!!!", data)

    def test_boottime_offers_both_emulators_its_usage_names(self):
        r = self.run_tool("boottime", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: tools/boottime", r.stdout)
        self.assertIn("{qemu,bochs}", r.stdout)


if __name__ == "__main__":
    unittest.main()
