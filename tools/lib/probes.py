"""Checks of a lab's mechanism made from outside the guest, through QEMU's
gdb stub, while tools/run streams the console (tools/run --probe NAME).

Each probe stops the machine at breakpoints on the grader's own kernel
functions (outside every lab region), reads registers, page tables and
memory there, and lets the machine run on. A kernel can print whatever
records it likes; what these probes read is the machine's state. The
verdict goes into tools/run's JSON summary as "probe": {"name", "ok",
"detail"}.
"""

import os
import re
import shutil
import tempfile
import threading
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .gdbstub import GdbStub, StubError, SymbolError, elf32_symbols, find_symbol

# i386 paging without PAE (Intel SDM Vol. 3, 4.3): a PDE or PTE is present
# with bit 0; a PDE maps a 4 MB page with bit 7 (PS) when CR4.PSE is set.
PTE_PRESENT = 0x1
PDE_PS = 0x80
CR4_PSE = 0x10
CR4_PAE = 0x20
CR0_PG = 0x80000000
# src/arch/i386/asm_offsets.h: where a TrapFrame keeps eip and cs.
TF_EIP = 56
TF_CS = 60
# src/arch/i386/layout.h: each CPU's trampoline block (TrampolineCpu), its
# variables at these offsets and its exit frame at TC_EXIT_SP.
TRAMPOLINE_CPU_SIZE = 8192
TRAMPOLINE_CPUS = 8
TV_KERNEL_CR3, TV_USER_CR3 = 0, 4
TC_EXIT_SP = 4096 - 24
# src/arch/i386/asm_offsets.h: Cpu::port_word, this CPU's exit frame, read
# through %fs (whose base is the CPU's toll::Cpu in the kernel).
CPU_PORT_WORD = 8
LAYOUT_NAMES = {0: "3/1", 1: "3/1-pti", 2: "4/4"}

# System-call returns to user mode the isolation probe checks.
ISOLATION_ROUNDS = 3
# Stops the isolation probe lets pass before it gives up looking for a
# return to user mode.
MAX_STOPS = 400

# SeaBIOS keeps for itself the top of RAM it reports in E820 (its tables)
# and the BIOS areas below 1 MB: the usable memory a correct probe finds is
# at most -m and at least -m minus this (QEMU 7.2 with SeaBIOS 1.16 leaves
# about 1.4 MB out).
BIOS_RESERVED_MAX = 2 << 20


def translate(stub: GdbStub, cr3: int, cr4: int, virt: int) -> Optional[int]:
    """The physical address @p virt maps to under the page directory @p cr3,
    or None where it is not mapped."""
    pde = stub.physical_words((cr3 & ~0xFFF) + (virt >> 22) * 4)[0]
    if not pde & PTE_PRESENT:
        return None
    if pde & PDE_PS and cr4 & CR4_PSE:
        return (pde & 0xFFC00000) | (virt & 0x3FFFFF)
    pte = stub.physical_words((pde & ~0xFFF) + ((virt >> 12) & 0x3FF) * 4)[0]
    if not pte & PTE_PRESENT:
        return None
    return (pte & ~0xFFF) | (virt & 0xFFF)


class Failed(Exception):
    """What the machine showed that contradicts the mechanism."""


def fs_base(stub: GdbStub) -> int:
    """The base of %fs in the registers stub.registers() last read (QEMU
    prints a segment as `FS =selector base limit flags`)."""
    found = re.search(r"^FS =[0-9a-fA-F]+ ([0-9a-fA-F]+) ", stub.last_text, re.M)
    if not found:
        raise StubError("QEMU's `info registers` shows no base of %fs")
    return int(found.group(1), 16)


def trampoline_block(stub: GdbStub, cpus: int) -> int:
    """The trampoline block of the CPU stopped in the kernel: its toll::Cpu
    (the base of %fs) names its exit frame, TC_EXIT_SP into its block of the
    array at @p cpus."""
    block = stub.word(fs_base(stub) + CPU_PORT_WORD) - TC_EXIT_SP
    index, rest = divmod(block - cpus, TRAMPOLINE_CPU_SIZE)
    if rest or not 0 <= index < TRAMPOLINE_CPUS:
        raise Failed(f"the CPU's exit frame is not in a trampoline block (block {block:#x}, "
                     f"blocks from {cpus:#x})")
    return block


def isolation(stub: GdbStub, symbols: Dict[str, int], options: Any) -> str:
    """Under vm.split=3/1-pti or 4/4: every system call the probe stops in
    runs on the kernel's page directory, and the user code it returns to runs
    on another one, where the kernel's code is not mapped (only the
    trampoline is)."""
    dispatch = find_symbol(symbols, r"16syscall_dispatchERNS_4arch9TrapFrameE$")
    cpus = find_symbol(symbols, r"^trampoline_cpus$")
    layout_at = find_symbol(symbols, r"^trampoline_layout$")
    stub.set_breakpoint(dispatch)
    user_stops: Dict[int, int] = {}  # a return address: the block of the CPU that saw it
    kernel_seen = rounds = 0
    layout = ""
    for _ in range(MAX_STOPS):
        stub.cont(options.timeout)
        regs = stub.registers()
        eip, cr3, cr4 = regs.get("EIP", -1), regs.get("CR3", 0), regs.get("CR4", 0)
        if cr4 & CR4_PAE or not regs.get("CR0", 0) & CR0_PG:
            raise Failed("paging was not the 32-bit kind the layouts use (CR0.PG, CR4.PAE)")
        if eip == dispatch and regs["CPL"] == 0:
            layout_value = stub.word(layout_at)
            layout = LAYOUT_NAMES.get(layout_value, str(layout_value))
            if layout_value == 0:
                raise Failed("the trampoline says the layout is 3/1, not the isolated one asked")
            tv = trampoline_block(stub, cpus)
            kcr3, ucr3 = stub.word(tv + TV_KERNEL_CR3), stub.word(tv + TV_USER_CR3)
            if cr3 != kcr3 or kcr3 == ucr3:
                raise Failed(f"a system call ran on CR3 {cr3:#x}; the kernel's page directory "
                             f"is {kcr3:#x} and the user's {ucr3:#x}")
            kernel_seen += 1
            frame = stub.word(regs["ESP"] + 4)
            if stub.word(frame + TF_CS) & 3 == 3:
                back = stub.word(frame + TF_EIP)
                if back not in user_stops and back != dispatch:
                    stub.set_breakpoint(back)
                    user_stops[back] = tv
            continue
        if eip in user_stops and regs["CPL"] == 3:
            stub.clear_breakpoint(eip)
            tv = user_stops.pop(eip)
            kcr3 = stub.word(tv + TV_KERNEL_CR3) if translate(stub, cr3, cr4, tv) else 0
            if cr3 == kcr3:
                raise Failed(f"user code at {eip:#x} ran with the kernel's page directory "
                             f"{cr3:#x} loaded")
            kernel_frame = translate(stub, kcr3, cr4, dispatch) if kcr3 else None
            user_frame = translate(stub, cr3, cr4, dispatch)
            if user_frame is not None and (kernel_frame is None or user_frame == kernel_frame):
                raise Failed(f"while user code ran (CR3 {cr3:#x}) the kernel's code at "
                             f"{dispatch:#x} was mapped (at physical {user_frame:#x})")
            rounds += 1
            if rounds >= ISOLATION_ROUNDS:
                break
    for address in list(user_stops) + [dispatch]:
        stub.clear_breakpoint(address)
    if rounds == 0:
        raise Failed(f"in {MAX_STOPS} stops the machine never returned from a system call to "
                     f"user mode ({kernel_seen} system call(s) seen)")
    return (f"{kernel_seen} system call(s) ran on the kernel's page directory and {rounds} "
            f"return(s) to user mode ran on the user's, without the kernel mapped ({layout})")


def memory_map(stub: GdbStub, symbols: Dict[str, int], options: Any) -> str:
    """On a loaderless boot: the usable memory the kernel stored from its
    BIOS probe matches the memory QEMU was given (-m, which the grader
    draws for each run)."""
    verify = find_symbol(symbols, r"17getmemsize_verifyERKNS_8BootInfoE$")
    usable_at = find_symbol(symbols, r"13g_boot_usableE$")
    stub.set_breakpoint(verify)
    for _ in range(4):
        if stub.cont(options.timeout) == verify:
            break
    else:
        raise Failed("the kernel never reached the check of its memory map")
    stub.clear_breakpoint(verify)
    low, high = stub.word(usable_at), stub.word(usable_at + 4)
    usable = (high << 32) | low
    given = options.mem << 20
    if not given - BIOS_RESERVED_MAX <= usable <= given:
        raise Failed(f"the kernel stored {usable >> 10} KB of usable memory, but QEMU was "
                     f"given {options.mem} MB (-m), of which the BIOS keeps at most "
                     f"{BIOS_RESERVED_MAX >> 10} KB")
    return (f"the kernel stored {usable >> 10} KB of usable memory for the {options.mem} MB "
            f"QEMU was given")


# CR0.TS (Intel SDM Vol. 3, 2.5): set, the next x87/MMX/SSE instruction
# raises #NM (device not available).
CR0_TS = 0x8
# #NM traps the FPU probe lets pass before it gives up waiting for the
# switch back to the first program.
FPU_MAX_TRAPS = 40


def fpu_pattern(seed: int) -> Dict[str, int]:
    """The registers src/user/fpu/fpu_user.h's fpu_pattern(@p seed) loads, as
    QEMU's `info registers` prints them: FCW, MXCSR, the abridged tags (FTW),
    ST0-ST7 (mantissa and sign+exponent) and XMM0-XMM7 (high and low half)."""
    regs = {"FCW": 0x0C7F, "MXCSR": 0x7F80, "FTW": 0xFF}
    for r in range(8):
        st = [(seed + 16 * r + b + 1) & 0xFF for b in range(8)]
        st[7] |= 0x80
        regs[f"ST{r}"] = int.from_bytes(bytes(st), "little")
        regs[f"ST{r}X"] = 0x40 << 8 | (0x3F + r)
        xmm = bytes((seed ^ (0xA5 + 16 * r + b)) & 0xFF for b in range(16))
        regs[f"XMM{r}L"] = int.from_bytes(xmm[:8], "little")
        regs[f"XMM{r}H"] = int.from_bytes(xmm[8:], "little")
    return regs


def fpu_initial() -> Dict[str, int]:
    """fpu_user.h's fpu_initial(): FNINIT's control word, the reset MXCSR,
    every register empty and zero."""
    regs = {"FCW": 0x037F, "MXCSR": 0x1F80, "FTW": 0}
    for r in range(8):
        regs.update({f"ST{r}": 0, f"ST{r}X": 0, f"XMM{r}L": 0, f"XMM{r}H": 0})
    return regs


def fpu_registers(stub: GdbStub) -> Dict[str, int]:
    """The machine's x87 and SSE registers where it stands, from the text of
    `info registers` that cont() read: ST(i) is FPR[(TOP + i) mod 8]."""
    text, regs = stub.last_text, stub.last
    top = re.search(r"\[ST=(\d)\]", text)
    fpr = dict((int(n), (int(m, 16), int(e, 16)))
               for n, m, e in re.findall(r"FPR(\d)=([0-9a-f]{16}) ([0-9a-f]{4})", text))
    xmm = dict((int(n), (int(h, 16), int(lo, 16)))
               for n, h, lo in re.findall(r"XMM(\d\d)=([0-9a-f]{16}) ([0-9a-f]{16})", text))
    if not top or len(fpr) != 8 or len(xmm) < 8 or "FCW" not in regs:
        raise Failed("QEMU's register dump has no x87 and SSE registers to compare")
    out = {"FCW": regs["FCW"], "MXCSR": regs.get("MXCSR", -1), "FTW": regs.get("FTW", -1)}
    for r in range(8):
        out[f"ST{r}"], out[f"ST{r}X"] = fpr[(int(top.group(1)) + r) % 8]
        out[f"XMM{r}H"], out[f"XMM{r}L"] = xmm[r]
    return out


def fpu_lazy(stub: GdbStub, symbols: Dict[str, int], options: Any) -> str:
    """Under fpu.switch=lazy, with fpu_iso A B on the command line (seeds the
    grader drew): the machine itself shows the lazy switch. The probe stops
    at each #NM from user mode, then at the instruction that trapped, once
    the handler has returned (CR0.TS clear), and compares the x87 and SSE
    registers there with the images the seeds make. Each must be the
    initial state or the trapping program's own pattern; and the switch
    back to program A after B ran must go through an #NM that puts A's
    pattern back (a kernel that restores eagerly, or copies registers into
    A's memory, never shows one)."""
    seeds = re.search(r"fpu_iso (\d+) (\d+)", getattr(options, "cmdline", "") or "")
    if not seeds:
        raise Failed("the command line runs no fpu_iso with two seeds")
    seed_a, seed_b = int(seeds.group(1)), int(seeds.group(2))
    images = {"the initial state": fpu_initial(), f"A's pattern (seed {seed_a})":
              fpu_pattern(seed_a), f"B's pattern (seed {seed_b})": fpu_pattern(seed_b)}
    handlers = {find_symbol(symbols, r"8dna_trapERNS_4arch9TrapFrameE$")}
    try:
        handlers.add(find_symbol(symbols, r"25dna_trap_without_cleaningERNS_4arch9TrapFrameE$"))
    except StubError:
        pass
    for h in handlers:
        stub.set_breakpoint(h)
    # The user EIPs of #NM traps whose handler has not yet returned (the
    # kernel may run on a page directory of its own: the EIP is the key).
    pending: Dict[int, int] = {}
    user_stops: Set[int] = set()
    seen: List[str] = []
    traps = 0
    try:
        while traps < FPU_MAX_TRAPS:
            eip = stub.cont(options.timeout)
            regs = stub.last
            if eip in handlers and regs["CPL"] == 0:
                frame = stub.word(regs["ESP"] + 4)
                if stub.word(frame + TF_CS) & 3 != 3:
                    continue
                traps += 1
                back = stub.word(frame + TF_EIP)
                pending[back] = pending.get(back, 0) + 1
                if back not in user_stops:
                    stub.set_breakpoint(back)
                    user_stops.add(back)
                continue
            if eip not in user_stops or regs["CPL"] != 3:
                continue
            if regs["CR0"] & CR0_TS or not pending.get(eip):
                continue  # about to trap (another program at the same place)
            pending[eip] -= 1
            have = fpu_registers(stub)
            name = next((n for n, want in images.items() if want == have), "")
            if not name:
                diff = sorted(k for k in have if have[k] != images["the initial state"][k])
                raise Failed(f"after an #NM at {eip:#x} the program's x87/SSE registers are "
                             f"neither the initial state nor a pattern of fpu_iso's seeds "
                             f"(differ from the initial state in {', '.join(diff[:6])})")
            seen.append(name)
            if name.startswith("A's"):
                break
    except (StubError, OSError):
        pass  # the machine ended: what it showed until then is the verdict
    for address in list(user_stops) + list(handlers):
        try:
            stub.clear_breakpoint(address)
        except (StubError, OSError):
            break
    if not any(n.startswith("A's") for n in seen):
        raise Failed(f"no #NM gave program A its registers back after B ran ({traps} #NM "
                     f"trap(s) from user mode; the registers they restored: "
                     f"{', '.join(seen) or 'none'}): the FPU was not switched lazily")
    return (f"{traps} #NM trap(s) from user mode restored {', '.join(seen)}: the switch back "
            f"to A went through #NM with CR0.TS set")


# VMSAv8-64 translation (Arm ARM D8.3 and D8.6): descriptor bits [1:0] are
# 0b11 for a table (levels 0-2) or a page (level 3) and 0b01 for a block;
# bit 52 is the Contiguous hint; the output address is bits [47:page].
DESC_VALID, DESC_TYPE_MASK, DESC_TABLE, DESC_BLOCK = 0x1, 0x3, 0x3, 0x1
DESC_CONTIGUOUS = 1 << 52
# The descriptor bits the hardware may set by itself on an access (AF, bit
# 10; DBM-managed dirty state is not used): not compared across a run.
DESC_AF = 1 << 10
ADDRESS_BITS = 48
# TCR_EL1 (Arm ARM D17.2.131): T0SZ [5:0], TG0 [15:14] (0b00 4 KB, 0b10 16 KB,
# 0b01 64 KB). TTBR0_EL1: the table's base in [47:1], the ASID above.
TCR_T0SZ_MASK, TCR_TG0_SHIFT = 0x3F, 14
TG0_PAGE_BITS = {0: 12, 2: 14, 1: 16}
TTBR_BADDR_MASK = ((1 << ADDRESS_BITS) - 1) & ~1
# Entries of a level-3 contiguous run by granule (Arm ARM D8.6.1).
L3_RUN_ENTRIES = {12: 16, 14: 128, 16: 32}
# Stops at the counter read the superpages probe lets pass.
SUPERPAGE_MAX_STOPS = 600


def user_mappings(stub: GdbStub) -> Tuple[int, int, List[str]]:
    """Walks the user page tables of the machine now (TTBR0_EL1, with the
    granule and size TCR_EL1 gives): (well-formed level-3 contiguous runs,
    blocks, problems). A run is well formed when every entry of its aligned
    group is a valid page with the Contiguous bit, the frames are
    consecutive from an address aligned to the run's size, and the
    attributes are the same."""
    tcr, ttbr0 = stub.sysreg("TCR_EL1"), stub.sysreg("TTBR0_EL1")
    granule = TG0_PAGE_BITS.get((tcr >> TCR_TG0_SHIFT) & 3)
    if granule is None:
        raise Failed(f"TCR_EL1 {tcr:#x} names no translation granule")
    page_bits: int = granule
    per_level = page_bits - 3
    va_bits = 64 - (tcr & TCR_T0SZ_MASK)
    levels = -(-(va_bits - page_bits) // per_level)
    address = ((1 << ADDRESS_BITS) - 1) & ~((1 << page_bits) - 1)
    run_entries = L3_RUN_ENTRIES[page_bits]
    runs, blocks, problems = 0, 0, []

    def walk(level: int, table: int, entries: int, va: int) -> None:
        nonlocal runs, blocks
        descs = stub.physical_quads(table, entries)
        shift = page_bits + per_level * (3 - level)
        if level == 3:
            for first in range(0, entries, run_entries):
                group = descs[first:first + run_entries]
                flagged = [d for d in group if d & DESC_VALID and d & DESC_CONTIGUOUS]
                if not flagged:
                    continue
                base = group[0] & address
                where = va + (first << shift)
                ok = (len(flagged) == run_entries and base % (run_entries << page_bits) == 0
                      and all((d & DESC_TYPE_MASK) == DESC_TABLE and (d & address) ==
                              base + (i << page_bits) and (d & ~address & ~DESC_AF) ==
                              (group[0] & ~address & ~DESC_AF) for i, d in enumerate(group)))
                if ok:
                    runs += 1
                else:
                    problems.append(f"the run at {where:#x} is not well formed ("
                                    f"{len(flagged)} of {run_entries} entries carry the "
                                    f"Contiguous bit, frames from {base:#x})")
            return
        for i, d in enumerate(descs):
            if not d & DESC_VALID:
                continue
            if (d & DESC_TYPE_MASK) == DESC_TABLE:
                walk(level + 1, d & address, 1 << per_level, va + (i << shift))
            elif level > 0:
                blocks += 1
    top_entries = 1 << (va_bits - page_bits - per_level * (levels - 1))
    walk(4 - levels, ttbr0 & TTBR_BADDR_MASK, top_entries, 0)
    return runs, blocks, problems


def superpage_looks(stub: GdbStub, symbols: Dict[str, int], options: Any,
                    enough: Callable[[int, int], bool]) -> Tuple[int, int, int, List[str]]:
    """Each time the running program reads vm.pmap.l3c.promotions (the
    counter its checks judge promotions by), walks its page tables: until
    enough(runs, blocks) says so, the machine ends or a walk finds a run
    that is not well formed. Returns (looks, most runs, most blocks seen at
    one look, the problems of the first bad walk)."""
    at = find_symbol(symbols, r"15sys_counter_getERKNS0_11SyscallArgsE$")
    stub.set_breakpoint(at)
    walks = most_runs = most_blocks = 0
    problems: List[str] = []
    try:
        for _ in range(SUPERPAGE_MAX_STOPS):
            if stub.cont(options.timeout) != at:
                continue
            try:
                name = stub.read(stub.quad(stub.last["X00"]), 24).split(b"\0")[0]
            except StubError:
                continue
            if name != b"vm.pmap.l3c.promotions":
                continue
            try:
                runs, blocks, problems = user_mappings(stub)
            except StubError as e:
                raise Failed(f"the probe could not walk the page tables: {e}")
            walks += 1
            most_runs, most_blocks = max(most_runs, runs), max(most_blocks, blocks)
            if problems or enough(most_runs, most_blocks):
                break
    except (StubError, OSError):
        pass  # the machine ended: what it showed until then is the verdict
    try:
        stub.clear_breakpoint(at)
    except (StubError, OSError):
        pass
    if not walks:
        raise Failed("the program never read vm.pmap.l3c.promotions, so the probe never looked")
    return walks, most_runs, most_blocks, problems


def superpages(stub: GdbStub, symbols: Dict[str, int], options: Any) -> str:
    """With ut_superpages running on arm64: every contiguous run its page
    tables hold when it reads its promotion counters must be well formed,
    and before the program ends they must have shown a level-3 contiguous
    run and a block, which its checks say it made (a kernel can count a
    promotion it never made)."""
    walks, most_runs, most_blocks, problems = superpage_looks(
        stub, symbols, options, lambda runs, blocks: bool(runs and blocks))
    if problems:
        raise Failed("; ".join(problems[:3]))
    if not most_runs or not most_blocks:
        raise Failed(f"in {walks} look(s) at the page tables while the program read its "
                     f"promotion counters, they held {most_runs} contiguous run(s) and "
                     f"{most_blocks} block(s): the promotions counted were not made")
    return (f"the page tables held {most_runs} well-formed contiguous run(s) and {most_blocks} "
            f"block(s) ({walks} look(s))")


def superpages_off(stub: GdbStub, symbols: Dict[str, int], options: Any) -> str:
    """With ut_superpages off running on an arm64 kernel booted with
    vm.superpages=0: at every look the program's page tables must hold no
    contiguous run and no block at all (a kernel can promote while its
    counters say it did not)."""
    walks, most_runs, most_blocks, problems = superpage_looks(
        stub, symbols, options, lambda runs, blocks: bool(runs or blocks))
    if problems or most_runs or most_blocks:
        raise Failed(f"superpages are off, yet the page tables held {most_runs} contiguous "
                     f"run(s) and {most_blocks} block(s)"
                     + (f" ({'; '.join(problems[:2])})" if problems else ""))
    return f"the page tables held no contiguous run and no block ({walks} look(s))"


PROBES: Dict[str, Callable[[GdbStub, Dict[str, int], Any], str]] = {
    "isolation": isolation, "memory_map": memory_map, "fpu_lazy": fpu_lazy,
    "superpages": superpages, "superpages_off": superpages_off}
# The architecture each probe reads (tools/run refuses it on the other).
PROBE_ARCH = {"isolation": "i386", "memory_map": "i386", "fpu_lazy": "i386",
              "superpages": "arm64", "superpages_off": "arm64"}


# The longest path a Unix socket may have (sun_path is 108 bytes on Linux,
# unix(7)), with room to spare.
SOCKET_PATH_MAX = 100


def qemu_arguments(socket_path: str) -> List[str]:
    """QEMU's gdb stub on a Unix socket of the run's own folder; the CPU
    waits for the probe before its first instruction."""
    return ["-gdb", f"unix:{socket_path},server=on,wait=off", "-S"]


class Probe:
    """Runs one probe beside the console stream; result() is its verdict."""

    def __init__(self, name: str, kernel: str, folder: str, options: Any) -> None:
        if name not in PROBES:
            raise StubError(f"no probe named {name!r} (known: {', '.join(sorted(PROBES))})")
        self.name, self.kernel, self.options = name, kernel, options
        self.socket = os.path.join(folder, "gdb.sock")
        self.own_folder = ""
        if len(self.socket) > SOCKET_PATH_MAX:
            self.own_folder = tempfile.mkdtemp(prefix="toll-gdb-", dir="/tmp")
            self.socket = os.path.join(self.own_folder, "gdb.sock")
        self.verdict: Tuple[Optional[bool], str] = (None, "the probe did not finish")
        self.connected = False  # False at the end: the grader's fault, not the kernel's
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        stub = None
        try:
            stub = GdbStub(self.socket, 20)
            symbols = elf32_symbols(self.kernel)
            self.connected = True
            detail = PROBES[self.name](stub, symbols, self.options)
            stub.detach()
            self.verdict = (True, detail)
        except Failed as e:
            self.verdict = (False, str(e))
            if stub:
                stub.detach()
        except (SymbolError, ValueError, OSError) as e:
            if self.connected and not isinstance(e, SymbolError):
                self.verdict = (False, f"the machine ended before the probe could look: {e}")
            else:
                # The probe does not fit this kernel's ELF file: end the
                # machine (stopped at its first instruction, waiting for the
                # probe) at once, and let tools/run call it the grader's
                # error, not the kernel's.
                self.verdict = (False, f"the probe cannot read {self.kernel}: {e}")
                self.connected = False
                if stub:
                    stub.kill()
        except (StubError, OSError, ValueError, KeyError, IndexError) as e:
            self.verdict = (False, f"the machine ended before the probe could look: {e}")
            if stub:
                stub.detach()  # a machine still stopped runs on
        except Exception as e:  # a fault of the probe's own: end the machine now
            self.verdict = (False, f"the probe {self.name} failed: {type(e).__name__}: {e}")
            self.connected = False
            if stub:
                stub.kill()
        finally:
            if stub:
                stub.close()

    def result(self) -> Dict[str, Any]:
        self.thread.join(5)
        ok, detail = self.verdict
        if self.own_folder:
            shutil.rmtree(self.own_folder, ignore_errors=True)
        return {"name": self.name, "ok": bool(ok), "detail": detail}
