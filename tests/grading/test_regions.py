#!/usr/bin/python3
"""Unit tests of lab regions, stubs and rubric checking (tools/lib/lab_*.py)."""

import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# tools/lib, through PYTHONPATH=tools (ctest sets it).
from lib import lab_audit, lab_regions, lab_rubric

CPP = """int f(int x)
{
    // LAB a BEGIN: return twice x
    int y = x * 2;
    return y;
    // LAB a STUB
    // return 0;
    // LAB a END
}
void g()
{
    // LAB b BEGIN: nothing to do
    secret();
    // LAB b END
}
"""

ASM = """entry:
    # LAB a BEGIN: load the stack
    movl $stack, %esp
    # LAB a END
    ret
"""


class Regions(unittest.TestCase):
    def test_finds_regions_with_hints_and_stubs(self):
        a, b = lab_regions.parse_regions("x.cpp", CPP)
        self.assertEqual((a.lab, a.hint, a.begin, a.stub, a.end), ("a", "return twice x", 3, 6, 8))
        self.assertEqual((b.lab, b.stub), ("b", None))

    def test_stub_replaces_only_the_chosen_lab(self):
        regions = [r for r in lab_regions.parse_regions("x.cpp", CPP) if r.lab == "a"]
        out = lab_regions.stub_text(CPP, regions)
        self.assertNotIn("x * 2", out)
        self.assertIn("    // LAB a BEGIN: return twice x\n    // TODO(lab a): write this part, "
                      "as the hint above says\n    return 0;\n    // LAB a END", out)
        self.assertIn("secret();", out)  # lab b stays solved
        self.assertIn("// LAB a BEGIN", out)

    def test_hash_markers_in_assembly(self):
        (r,) = lab_regions.parse_regions("x.S", ASM)
        out = lab_regions.stub_text(ASM, [r])
        self.assertNotIn("movl", out)
        self.assertIn("# LAB a BEGIN: load the stack\n    # TODO(lab a):", out)

    def test_a_hint_continued_on_hint_lines_reaches_the_starter_whole_and_once(self):
        text = ("    // LAB a BEGIN: a hint too long\n"
                "    // LAB a HINT: for one line, which names\n"
                "    // LAB a HINT: add() at its end\n"
                "    solution();\n"
                "    // LAB a END\n")
        (r,) = lab_regions.parse_regions("x.cpp", text)
        self.assertEqual(r.hint, "a hint too long for one line, which names add() at its end")
        out = lab_regions.stub_text(text, [r])
        self.assertNotIn("solution", out)
        self.assertIn("// LAB a HINT: add() at its end\n    // TODO(lab a)", out)
        self.assertEqual(out.count("add()"), 1)

    def test_no_starter_hint_is_cut_or_doubled(self):
        # Every region of every lab: the starter keeps the hint's lines (BEGIN
        # and HINT) whole, and shows the hint no more often than the reference.
        with tempfile.TemporaryDirectory() as out:
            labs = sorted({r.lab for r in lab_regions.find_regions(ROOT)})
            for lab in labs:
                for r in lab_regions.write_starter(ROOT, lab, os.path.join(out, lab)):
                    with open(os.path.join(ROOT, r.path)) as f:
                        reference = f.read()
                    with open(os.path.join(out, lab, r.path)) as f:
                        starter = f.read()
                    hint_lines = "".join(reference.splitlines(keepends=True)[r.begin - 1:r.hint_end])
                    with self.subTest(lab=lab, region=repr(r)):
                        self.assertIn(hint_lines, starter)
                        self.assertEqual(starter.count(r.hint[:40]), reference.count(r.hint[:40]))

    def test_bad_markers_are_errors(self):
        bad = {
            "unclosed": "// LAB a BEGIN: h\nx;\n",
            "nested": "// LAB a BEGIN: h\n// LAB b BEGIN: h\n// LAB b END\n// LAB a END\n",
            "stray end": "x;\n// LAB a END\n",
            "no hint": "// LAB a BEGIN\n// LAB a END\n",
            "wrong end": "// LAB a BEGIN: h\n// LAB b END\n",
            "two stubs": "// LAB a BEGIN: h\n// LAB a STUB\n// LAB a STUB\n// LAB a END\n",
            "stray hint": "// LAB a BEGIN: h\nx;\n// LAB a HINT: late\n// LAB a END\n",
            "empty hint": "// LAB a BEGIN: h\n// LAB a HINT:\n// LAB a END\n",
        }
        for what, text in bad.items():
            with self.subTest(what), self.assertRaises(lab_regions.RegionError):
                lab_regions.parse_regions("x.cpp", text)
        with self.assertRaises(lab_regions.RegionError):
            lab_regions.parse_regions("x.S", "// LAB a BEGIN: h\n// LAB a END\n")

    def test_no_lab_region_lies_on_the_record_path(self):
        self.assertEqual(lab_regions.on_record_path(lab_regions.find_regions(ROOT)), [])
        planted = lab_regions.parse_regions(
            "src/lib/format.cpp", "// LAB x BEGIN: h\nint y;\n// LAB x END\n")
        self.assertEqual(lab_regions.on_record_path(planted), planted)
        for rel in lab_regions.RECORD_PATH:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, rel)), rel)

    def test_starter_of_the_demo_lab_drops_the_solution(self):
        with tempfile.TemporaryDirectory() as out:
            regions = lab_regions.write_starter(ROOT, "demo", out)
            self.assertTrue(regions)
            with open(os.path.join(out, "src/lib/cmdline.cpp")) as f:
                text = f.read()
            self.assertIn("TODO(lab demo)", text)
            self.assertNotIn("bool more = *in", text)
            with open(os.path.join(out, "src/lib/format.cpp")) as f:
                self.assertIn("% base", f.read())  # the record path is never a lab's
            with self.assertRaises(lab_regions.RegionError):
                lab_regions.write_starter(ROOT, "no-such-lab", os.path.join(out, "x"))


class Rubrics(unittest.TestCase):
    GOOD = {"lab": "x", "student_files": ["a.cpp"],
            "tests": [{"name": "t1", "ctest": "^unit", "points": 1},
                      {"name": "t2", "run": ["--cmdline", "test=*"], "pass": ["a"],
                       "depends_on": ["t1"]}]}

    def bad(self, **changes):
        data = {**self.GOOD, **changes}
        with self.assertRaises(lab_rubric.RubricError):
            lab_rubric.check(data, "rubric")

    def test_a_good_rubric_passes(self):
        lab_rubric.check(self.GOOD, "rubric")

    def test_mistakes_are_refused(self):
        self.bad(typo=1)
        self.bad(student_files=[])
        self.bad(student_files=["../etc/passwd"])
        self.bad(tests=[{"name": "t", "ctest": "x", "run": "y"}])
        self.bad(tests=[{"name": "t", "run": ["--nonce", "1"]}])
        self.bad(tests=[{"name": "t", "run": "x", "depends_on": ["later"]}, {"name": "later", "run": "x"}])
        self.bad(tests=[{"name": "t", "ctest": "x", "points": -1}])
        self.bad(tests=[{"name": "t", "ctest": "x", "pointz": 1}])
        self.bad(measurements=[{"name": "m", "metric": "x", "run": "y"}])  # no worksheet

    def test_every_lab_rubric_in_the_tree_loads(self):
        rubrics = lab_rubric.all_rubrics(ROOT)
        self.assertIn("demo", [r.lab for r in rubrics])


def held(rel, lab, edit):
    """The hold reasons for the reference's @p rel of @p lab with @p edit
    (old, new) applied: what hold_reasons says of such a submission."""
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        text = f.read()
    old, new = edit
    assert old in text, f"{rel} no longer holds {old!r}"

    class Grade:
        rubric = type("R", (), {"lab": lab, "student_files": [rel], "worksheet": ""})()
        texts = {rel: text.replace(old, new, 1)}
        audit = None
    return lab_audit.hold_reasons(Grade(), ROOT)


MACRO_END = '    "fildl %[dummy]\\n\\t"   /* FOP, FIP, FDP now name this kernel instruction and datum */'
BODY = "    g_owner = &me;\n"
ASM_LINE = "    pushl %ss:\\depth - 20(%eax)         # eip\n"


class RegionKinds(unittest.TestCase):
    """A region may hold only what its kind permits (lab_audit.region_kinds):
    every way out of a file-scope macro, a function body or an assembly
    routine is held, and the references are not."""

    def test_every_reference_and_starter_region_is_of_a_known_kind_and_keeps_to_it(self):
        for r in lab_regions.find_regions(ROOT):
            with open(os.path.join(ROOT, r.path), encoding="utf-8") as f:
                text = f.read()
            kinds = lab_audit.region_kinds(r.path, text, r.lab)
            self.assertTrue(all(k[0] != "unknown" for k in kinds), (r, kinds))
            self.assertEqual(lab_audit.kind_violations(r.path, text, r.lab, kinds), [], r)
            mine = [x for x in lab_regions.find_regions(ROOT, [r.path]) if x.lab == r.lab]
            starter = lab_regions.stub_text(text, mine)
            self.assertEqual(lab_audit.kind_violations(r.path, starter, r.lab, kinds), [], r)

    def test_a_file_scope_macro_region_holds_one_definition_of_strings(self):
        rel = "src/arch/i386/fpu/fpu_restore.cpp"
        hostile = {
            "a function after the macro":
                MACRO_END + "\n__attribute__((constructor)) static void evil() { g_x = 1; }",
            "a static initializer after the macro": MACRO_END + "\nstatic int g_y = evil();",
            "a second macro": MACRO_END + "\n#define TOLL_FPU_COUNT_CLEAN \"\"",
            "an #undef": MACRO_END + "\n#undef TOLL_FPU_COUNT_CLEAN",
            "an #include": MACRO_END + "\n#include \"/etc/passwd\"",
            "a pragma": MACRO_END + "\n#pragma GCC optimize(\"O0\")",
            "code in the macro that closes the asm and the function":
                MACRO_END + ' \\\n    : : : ); } void evil() { asm volatile(""',
        }
        for what, new in hostile.items():
            with self.subTest(what):
                reasons = held(rel, "fpu", (MACRO_END, new))
                self.assertTrue(any(lab_audit.KIND_VIOLATION in r and "TOLL_FPU_CLEAN_SEQUENCE"
                                    in r for r in reasons), reasons)
        self.assertEqual(held(rel, "fpu", (MACRO_END, MACRO_END + " \\\n    \"nop\\n\\t\"")),
                         [])

    def test_a_function_body_region_holds_no_preprocessor_line(self):
        rel = "src/arch/i386/fpu/fpu_trap.cpp"
        for line in ("#define restore(x) restore_plain(x)", "#undef panic",
                     "#include \"kernel/kern/ktest.h\"", "#pragma GCC diagnostic ignored \"-Wall\"",
                     "  #  if 1"):
            with self.subTest(line):
                reasons = held(rel, "fpu", (BODY, BODY + line + "\n"))
                self.assertTrue(any("a function body" in r for r in reasons), reasons)
        self.assertEqual(held(rel, "fpu", (BODY, BODY + "    (void)0; // #define in a comment\n")),
                         [])

    def test_an_assembly_region_holds_instructions_only(self):
        rel = "src/arch/i386/trap_entry.S"
        for line in ("    .section .init_array, \"aw\"", "    .long hostile", "    .globl evil",
                     "evil:", "    evil = 1", "#include \"/etc/passwd\"", "#define movl jmp",
                     "    nop; .text"):
            with self.subTest(line):
                reasons = held(rel, "4x4", (ASM_LINE, ASM_LINE + line + "\n"))
                self.assertTrue(any("assembly: instructions" in r for r in reasons), reasons)
        self.assertEqual(held(rel, "4x4", (ASM_LINE, ASM_LINE + "1:  nop; jmp 1f\n1:\n")), [])


if __name__ == "__main__":
    unittest.main()
