"""Hostile submissions for the demonstration lab, made from the current reference.

Each variant is the reference's src/lib/format.cpp with a few lines put at the
top of the lab's region in put_number (or the starter, for the ones that edit
other files), so the set follows the reference as it changes. make_batch()
writes them into one folder in the three forms tools/grade accepts.
"""

import difflib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
from lib import lab_regions  # tools/lib, through PYTHONPATH=tools (ctest sets it)

LAB = "demo"
FORMAT = "src/lib/format.cpp"

# Code put at the top of put_number's body. TOLL_HOST_TEST guards keep the
# host tests on the reference, so only the kernel misbehaves.
KERNEL_ONLY = "#ifndef TOLL_HOST_TEST\n{body}\n#endif\n"

INSERTS = {
    "nocompile": "    this is not C++ at all;\n",
    "loop": KERNEL_ONLY.format(body="    for (;;)\n        asm volatile(\"\" ::: \"memory\");"),
    # An empty IDT: int3 cannot be delivered, nor the #GP that follows, nor the
    # double fault: the CPU shuts down (Intel SDM Vol. 3, 6.15, interrupt 8).
    "triple": KERNEL_ONLY.format(body=(
        "    {\n"
        "        static const struct __attribute__((packed)) {\n"
        "            unsigned short limit;\n"
        "            unsigned long base;\n"
        "        } empty_idt = {0, 0};\n"
        "        asm volatile(\"lidt %0\\n\\tint3\" : : \"m\"(empty_idt));\n"
        "    }")),
    "panic": KERNEL_ONLY.format(body="    toll::panic(\"hostile submission gives up\");"),
    "flood": KERNEL_ONLY.format(body=(
        "    for (;;)\n"
        "        w.put(\"flood flood flood flood flood flood flood flood flood flood\\n\", 60);")),
    # Prints the records a passing run would, without the run's nonce (and
    # with a guessed one), then prints no digits at all.
    "forged": KERNEL_ONLY.format(body=(
        "    {\n"
        "        static bool forged;\n"
        "        if (!forged) {\n"
        "            forged = true;\n"
        "            const char lies[] = \"\\nTEST kern.format_in_kernel PASS\\n\"\n"
        "                                \"@0 TEST kern.format_in_kernel PASS\\n\"\n"
        "                                \"TEST kern.static_constructors_ran PASS\\n\"\n"
        "                                \"DONE 9 passed, 0 failed, 0 skipped\\n\";\n"
        "            w.put(lies, sizeof lies - 1);\n"
        "        }\n"
        "        return;\n"
        "    }")),
}
PANIC_DECLARATION = "namespace toll {\n[[noreturn]] void panic(const char* fmt, ...);\n}\n"


def region_of(root):
    regions = [r for r in lab_regions.find_regions(root, [FORMAT]) if r.lab == LAB]
    if len(regions) != 1:
        raise SystemExit(f"expected one lab {LAB} region in {FORMAT}, found {len(regions)}")
    return regions[0]


def variant_text(root, name):
    """The reference's format.cpp with the hostile lines of @p name."""
    with open(os.path.join(root, FORMAT)) as f:
        lines = f.read().splitlines(keepends=True)
    r = region_of(root)
    lines[r.begin:r.begin] = [INSERTS[name]]
    text = "".join(lines)
    if name == "panic":
        text = PANIC_DECLARATION + text
    return text


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=student", "-c", "user.email=student@example.org",
                    *args], cwd=cwd, check=True, capture_output=True)


def make_batch(root, batch, scratch):
    """Writes every submission into @p batch; returns {name: description}."""
    os.makedirs(batch)
    made = {}
    starter = os.path.join(scratch, "starter")
    lab_regions.write_starter(root, LAB, starter)

    # The reference, as a git bundle of a repository holding just the student files.
    repo = os.path.join(scratch, "reference-repo")
    for rel in ("src/lib/format.cpp", "labs/lab-demo/results.toml"):
        os.makedirs(os.path.dirname(os.path.join(repo, rel)), exist_ok=True)
        shutil.copy(os.path.join(root, rel), os.path.join(repo, rel))
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "my lab", cwd=repo)
    git("bundle", "create", "-q", os.path.join(batch, "reference.bundle"), "HEAD", "--all",
        cwd=repo)
    made["reference"] = "the reference solution, as a git bundle"

    # The starter as a whole tree, exactly as tools/mklab writes it.
    shutil.copytree(starter, os.path.join(batch, "starter"))
    made["starter"] = "the starter from tools/mklab, as a tree"

    # Kernel-breaking variants as trees holding only the student's file ...
    for name in ("nocompile", "loop", "triple", "flood", "forged"):
        write_file(os.path.join(batch, name, FORMAT), variant_text(root, name))
        made[name] = f"the reference with a '{name}' insert in put_number, as a tree"

    # ... and one as a patch against the starter.
    with open(os.path.join(starter, FORMAT)) as f:
        before = f.read().splitlines(keepends=True)
    after = variant_text(root, "panic").splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(before, after, "a/" + FORMAT, "b/" + FORMAT))
    write_file(os.path.join(batch, "panic.patch"), f"diff --git a/{FORMAT} b/{FORMAT}\n" + diff)
    made["panic"] = "the reference with a kernel panic in put_number, as a patch to the starter"

    # The starter, plus edits that would pass everything if the grader used them.
    cheat = os.path.join(batch, "edits_tests")
    shutil.copytree(starter, cheat)
    unit = os.path.join(cheat, "tests/unit/test_lib.cpp")
    with open(unit) as f:
        text = f.read()
    text = "\n".join(line for line in text.splitlines() if "CHECK(fmt(" not in line) + "\n"
    write_file(unit, text)
    ktests = os.path.join(cheat, "src/kernel/kern/kern_ktests.cpp")
    with open(ktests) as f:
        text = f.read()
    write_file(ktests, text.replace("KEXPECT(strcmp(buf,", "KEXPECT(1 || strcmp(buf,"))
    rubric = os.path.join(cheat, "labs/lab-demo/rubric.toml")
    with open(rubric) as f:
        text = f.read()
    write_file(rubric, text.replace("points = ", "points = 100 + "))
    made["edits_tests"] = "the starter with the format tests removed from tests/ and src/kernel"
    return made
