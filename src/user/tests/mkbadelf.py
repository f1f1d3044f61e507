#!/usr/bin/python3
"""mkbadelf.py ARCH OUTDIR: writes the crafted ELF programs ut_attack execs.
Each is a small static executable with one field made hostile, so that a
loader which adds sizes without checking for overflow would accept it (and
copy from outside the file, or map outside user space). One, ok, is sound and
exits with status 42: it proves the base the others spoil is a valid program.
"""

import os
import struct
import sys

# System V gABI, chapter 4: ELF header and program header layouts.
PT_LOAD, PF_R, PF_X = 1, 4, 1
ET_EXEC = 2


def code_for(arch):
    if arch == "i386":
        # mov $1, %eax; mov $42, %ebx; int $0x80  (exit(42))
        return bytes.fromhex("b801000000bb2a000000cd80")
    # mov x0, #42; mov x8, #93; svc #0  (exit(42))
    return struct.pack("<3I", 0xD2800540, 0xD2800BA8, 0xD4000001)


def build(arch, **bad):
    is64 = arch == "arm64"
    machine = 183 if is64 else 3  # EM_AARCH64, EM_386
    base = 0x400000 if is64 else 0x08048000
    ehsize = 64 if is64 else 52
    phentsize = 56 if is64 else 32
    code = code_for(arch)
    code_off = ehsize + phentsize
    size = code_off + len(code)
    ph = dict(offset=0, vaddr=base, filesz=size, memsz=size)
    ph.update({k: v for k, v in bad.items() if k in ph})
    entry = bad.get("entry", base + code_off)
    phoff = bad.get("phoff", ehsize)
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1, 1]) + b"\0" * 9
    if is64:
        header = ident + struct.pack("<HHIQQQIHHHHHH", ET_EXEC, machine, 1, entry, phoff, 0, 0,
                                     ehsize, phentsize, 1, 0, 0, 0)
        phdr = struct.pack("<IIQQQQQQ", PT_LOAD, PF_R | PF_X, ph["offset"], ph["vaddr"],
                           ph["vaddr"], ph["filesz"], ph["memsz"], 0x1000)
    else:
        header = ident + struct.pack("<HHIIIIIHHHHHH", ET_EXEC, machine, 1, entry, phoff, 0, 0,
                                     ehsize, phentsize, 1, 0, 0, 0)
        phdr = struct.pack("<IIIIIIII", PT_LOAD, ph["offset"], ph["vaddr"], ph["vaddr"],
                           ph["filesz"], ph["memsz"], PF_R | PF_X, 0x1000)
    data = header + phdr + code
    return data[: bad["truncate"]] if "truncate" in bad else data


def main(argv):
    if len(argv) != 2 or argv[0] not in ("i386", "arm64"):
        sys.exit(__doc__)
    arch, out = argv
    top = 1 << (64 if arch == "arm64" else 32)
    cases = {
        "ok": {},
        # offset + filesz wraps past the top of the type to a small value.
        "offset_wrap": dict(offset=top - 0x1000, filesz=0x2000, memsz=0x2000),
        # the program header table's end wraps (phoff + phnum * phentsize).
        "phoff_wrap": dict(phoff=top - 16),
        # vaddr + memsz wraps around the address space.
        "vaddr_wrap": dict(vaddr=top - 0x1000, memsz=0x2000),
        # vaddr + memsz ends exactly at the top: rounding up to a page wraps.
        "vaddr_round_wrap": dict(vaddr=top - 0x2000, memsz=0x2000 - 1),
        # filesz larger than the file (no wrap: a plain bound).
        "filesz_huge": dict(filesz=top - 1, memsz=top - 1),
        # filesz larger than memsz.
        "filesz_over_memsz": dict(memsz=16),
        # a segment on page 0, below mmap_min_addr.
        "page_zero": dict(vaddr=0, entry=0x100),
        # the file ends inside its own ELF header.
        "truncated": dict(truncate=20),
    }
    os.makedirs(out, exist_ok=True)
    for name, bad in cases.items():
        with open(os.path.join(out, "badelf_" + name), "wb") as f:
            f.write(build(arch, **bad))


if __name__ == "__main__":
    main(sys.argv[1:])
