"""Planted submissions of the labs other than the demonstration one: kernels
whose records are right while the mechanism is not, which only the grader's
look from outside the machine (tools/lib/probes.py) catches.

Each is the reference with one region edited; make(root, lab, batch) writes
them beside the reference and the starter, and EXPECT says how each must fare
(check_batch.py's rules).
"""

import os
import shutil
from typing import Callable, Dict, List, Tuple

DISAGREE = "records disagree with the machine"

# Under 3/1-pti the exit to user mode skips the load of the user's CR3: user
# code runs on the kernel's page directory, where the kernel is mapped. Every
# program still works, so ut_forkexec's records pass; 4/4 keeps its switch
# (it could not run without it), so only the isolation of 3/1-pti is missing.
USER_CR3_LOAD = """    popl %esp                           # the exit frame
    movl %ss:EXIT_VAR(TV_USER_CR3)(%esp), %eax
    movl %eax, %cr3
    popl %eax"""
USER_CR3_SKIPPED = """    popl %esp                           # the exit frame
    cmpl $LAYOUT_3_1_PTI, %ss:trampoline_layout
    je 9f
    movl %ss:EXIT_VAR(TV_USER_CR3)(%esp), %eax
    movl %eax, %cr3
9:  popl %eax"""

# The E820 loop still calls the BIOS (so its costs are counted as before),
# but stores a fixed map of a 128 MB machine instead of what the BIOS said:
# at tools/run's default -m 128 every record matches.
E820_ADD = "            add(r, entry->base, entry->length, type);\n"
E820_END = "    // LAB vm86 STUB\n"
E820_FIXED = ("    add(r, 0, 0x9FC00, MemType::usable);\n"
              "    add(r, 0x100000, 0x7EE0000, MemType::usable);\n")


def edit(path: str, old: str, new: str) -> None:
    with open(path) as f:
        text = f.read()
    if old not in text:
        raise SystemExit(f"planted.py: {path} no longer holds the text to edit: {old!r}")
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


def no_user_cr3(folder: str) -> None:
    edit(os.path.join(folder, "src/arch/i386/trap_entry.S"), USER_CR3_LOAD, USER_CR3_SKIPPED)


def fixed_map(folder: str) -> None:
    path = os.path.join(folder, "src/arch/i386/vm86/getmemsize.cpp")
    edit(path, E820_ADD, "            (void)type;\n")
    edit(path, E820_END, E820_FIXED + E820_END)


# The #NM handler switches the kernel to eager switching once it has served
# the first use: every later switch restores the incoming registers at once,
# so fpu_iso (run under fpu.switch=lazy) still finds each program's registers
# where they belong, though no switch is lazy any more.
OWNER_SET = "    g_owner = &me;\n    // LAB fpu STUB"
OWNER_SET_EAGER = "    g_owner = &me;\n    g_config.mode = Switch::eager;\n    // LAB fpu STUB"


def lazy_is_eager(folder: str) -> None:
    edit(os.path.join(folder, "src/arch/i386/fpu/fpu_trap.cpp"), OWNER_SET, OWNER_SET_EAGER)


# promote_run makes each run without the Contiguous bit on its last entry
# where it runs in the kernel (not in the host tests over simulated memory,
# whose page tables lie far below the kernel's high half; the test reads the
# table pointer already in a register, so the lie costs the measured paths
# next to nothing and the worksheet's numbers still agree). QEMU ignores the hint,
# so memory works, and every counter agrees: the pmap takes a run by its
# first entry (a fork's copy) or by the page it splits at, and no check
# splits at a run's last page. On hardware such a run is a TLB conflict
# (Arm ARM D8.6.1); only the page tables show it.
RUN_MADE = "        store_entry(&first[i], (pa + i * k_page_size) | bits | k_contiguous);"
RUN_FAKED = ("        store_entry(&first[i], (pa + i * k_page_size) | bits |\n"
             "                    ((i + 1 < k_run_pages || "
             "(reinterpret_cast<uintptr_t>(first) >> 48) != 0xFFFF) ? k_contiguous : 0));")


def runs_not_made(folder: str) -> None:
    edit(os.path.join(folder, "src/arch/arm64/pmap_superpage.cpp"), RUN_MADE, RUN_FAKED)


PLANTED: Dict[str, List[Tuple[str, str, Callable[[str], None]]]] = {
    "superpages": [("runs_not_made", "promote_run leaves the Contiguous bit off each run's last "
                    "entry in the kernel", runs_not_made)],
    "fpu": [("lazy_is_eager", "the #NM handler turns lazy switching into eager switching",
             lazy_is_eager)],
    "4x4": [("no_user_cr3", "user code under 3/1-pti runs on the kernel's page directory",
             no_user_cr3)],
    "vm86": [("fixed_map", "the E820 loop stores a 128 MB machine's map, whatever the BIOS says",
              fixed_map)],
}

EXPECT = {
    "runs_not_made": {"all_pass_but": {"kernel.4k": DISAGREE, "kernel.16k": DISAGREE},
                      "disagree": ["kernel.4k", "kernel.16k"]},
    "lazy_is_eager": {"all_pass_but": {"fpu.isolation.lazy": DISAGREE},
                      "disagree": ["fpu.isolation.lazy"]},
    "no_user_cr3": {"all_pass_but": {"user.3_1_pti.forkexec": DISAGREE},
                    "disagree": ["user.3_1_pti.forkexec"]},
    "fixed_map": {"all_pass_but": {"vm86.e820_boot": DISAGREE},
                  "disagree": ["vm86.e820_boot"]},
}


def make(root: str, lab: str, batch: str, files: List[str]) -> Dict[str, str]:
    """Writes @p lab's planted submissions (the reference's @p files, one
    region edited) into @p batch; returns name -> what it plants."""
    made = {}
    for name, what, plant in PLANTED.get(lab, []):
        folder = os.path.join(batch, name)
        for rel in files:
            dest = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy(os.path.join(root, rel), dest)
        plant(folder)
        made[name] = what
    return made
