"""A small client of QEMU's gdb stub (the GDB remote serial protocol), for
checks made from outside the guest: breakpoints, registers, memory read
through the guest's page tables or physically, and QEMU monitor commands.

Protocol: GDB's manual, appendix "GDB Remote Serial Protocol" (packets
$data#checksum, acknowledged with +; qRcmd carries a monitor command whose
output comes back in O packets).
"""

import re
import socket
import struct
import time
from typing import Dict, List, Optional, Tuple


# 64-bit words one monitor command reads (physical_quads).
QUADS_AT_ONCE = 256


class StubError(Exception):
    """The stub went away or answered something this client cannot read."""


class SymbolError(StubError):
    """The kernel's ELF file is not one or lacks a symbol a probe reads: the
    probe does not fit this kernel, whatever the kernel does."""


class GdbStub:
    """One connection to a stopped (or stopping) QEMU."""

    def __init__(self, path: str, wait: float) -> None:
        deadline = time.monotonic() + wait
        self.sock = socket.socket(socket.AF_UNIX)
        while True:
            try:
                self.sock.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise StubError(f"QEMU's gdb stub did not open {path}")
                time.sleep(0.02)
        self.buf = b""
        self.breakpoints: set[int] = set()
        self.stopped_at: Optional[int] = None  # the breakpoint the machine stands on
        self.last: Dict[str, int] = {}  # registers() where cont() stopped
        self.last_text = ""  # the monitor's text of them

    def kill(self) -> None:
        """Ends QEMU now (the `k` packet: QEMU exits) and the connection."""
        try:
            self._send("k")
        except OSError:
            pass
        self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def _send(self, data: str) -> None:
        body = data.encode()
        self.sock.sendall(b"$" + body + b"#%02x" % (sum(body) & 0xFF))

    def _packet(self, timeout: Optional[float]) -> str:
        """The next packet's body (acknowledged)."""
        self.sock.settimeout(timeout)
        while True:
            start = self.buf.find(b"$")
            end = self.buf.find(b"#", start) if start >= 0 else -1
            if start >= 0 and end >= 0 and len(self.buf) >= end + 3:
                body = self.buf[start + 1:end]
                self.buf = self.buf[end + 3:]
                self.sock.sendall(b"+")
                return body.decode("latin-1")
            try:
                more = self.sock.recv(65536)
            except socket.timeout:
                raise StubError("QEMU's gdb stub stopped answering")
            except OSError as e:
                raise StubError(f"QEMU's gdb stub went away ({e})")
            if not more:
                raise StubError("QEMU's gdb stub closed the connection (the machine ended)")
            self.buf += more

    def ask(self, data: str, timeout: Optional[float] = 10) -> str:
        self._send(data)
        return self._packet(timeout)

    def monitor(self, command: str) -> str:
        """A QEMU monitor command's output."""
        self._send("qRcmd," + command.encode().hex())
        out = []
        while True:
            reply = self._packet(10)
            if reply.startswith("O") and reply != "OK":
                out.append(bytes.fromhex(reply[1:]).decode("latin-1"))
            else:
                return "".join(out)

    def registers(self) -> Dict[str, int]:
        """The monitor's `info registers`: every NAME=hex value it prints
        (EAX, EIP, CPL, CR0, CR3, CR4, FCW, ...)."""
        text = self.monitor("info registers")
        self.last_text = text
        pairs = re.findall(r"\b([A-Z][A-Z0-9]*)=([0-9a-fA-F]+)\b", text)
        regs = {k: int(v, 16) for k, v in pairs}
        cpl = re.search(r"CPL=(\d)", text) or re.search(r"\bEL(\d)[th]\b", text)
        regs["CPL"] = int(cpl.group(1)) if cpl else -1  # arm64: the exception level
        if "PC" in regs and "EIP" not in regs:
            regs["EIP"] = regs["PC"]  # one name for where the machine stands
        return regs

    def sysreg(self, name: str) -> int:
        """An arm64 system register (TTBR0_EL1, TCR_EL1, ...) by the number
        QEMU's target description gives it (system-registers.xml)."""
        if not hasattr(self, "_sysregs"):
            self.ask("qSupported:xmlRegisters=aarch64")
            xml, offset = "", 0
            while True:
                part = self.ask(f"qXfer:features:read:system-registers.xml:{offset:x},ffff")
                if not part or part[0] not in "lm":
                    raise StubError("QEMU's gdb stub describes no system registers")
                xml += part[1:]
                offset += len(part) - 1
                if part[0] == "l":
                    break
            self._sysregs = {m.group(1): int(m.group(2)) for m in re.finditer(
                r'<reg name="([A-Z0-9_]+)"[^>]*\bregnum="(\d+)"', xml)}
        if name not in self._sysregs:
            raise StubError(f"QEMU's gdb stub has no register {name}")
        reply = self.ask(f"p{self._sysregs[name]:x}")
        if not reply or reply.startswith("E") or len(reply) % 2:
            raise StubError(f"cannot read {name}")
        return int.from_bytes(bytes.fromhex(reply), "little")

    def physical_quads(self, address: int, count: int) -> List[int]:
        """@p count 64-bit words of physical memory at @p address (in pieces
        of QUADS_AT_ONCE: the monitor's answers stay small)."""
        words: List[int] = []
        for at in range(0, count, QUADS_AT_ONCE):
            n = min(QUADS_AT_ONCE, count - at)
            text = self.monitor(f"xp /{n}gx {address + 8 * at:#x}")
            got = [int(w, 16) for line in text.splitlines() if ":" in line
                   for w in re.findall(r"0x([0-9a-f]{16})\b", line.split(":", 1)[1])]
            if len(got) != n:
                raise StubError(f"cannot read physical memory at {address + 8 * at:#x}")
            words += got
        return words

    def read(self, address: int, length: int) -> bytes:
        """Virtual memory, through the page tables of the CR3 now loaded."""
        reply = self.ask(f"m{address:x},{length:x}")
        if reply.startswith("E") or len(reply) != 2 * length:
            raise StubError(f"cannot read {length} bytes at {address:#x}")
        return bytes.fromhex(reply)

    def word(self, address: int) -> int:
        return int(struct.unpack("<I", self.read(address, 4))[0])

    def quad(self, address: int) -> int:
        return int(struct.unpack("<Q", self.read(address, 8))[0])

    def physical_words(self, address: int, count: int = 1) -> List[int]:
        """@p count 32-bit words of physical memory at @p address."""
        text = self.monitor(f"xp /{count}wx {address:#x}")
        words = [int(w, 16) for w in re.findall(r"0x([0-9a-f]{8})\b", text.split(":", 1)[-1])]
        if len(words) != count:
            raise StubError(f"cannot read physical memory at {address:#x}")
        return words

    def set_breakpoint(self, address: int) -> None:
        if self.ask(f"Z0,{address:x},1") != "OK":
            raise StubError(f"cannot set a breakpoint at {address:#x}")
        self.breakpoints.add(address)

    def clear_breakpoint(self, address: int) -> None:
        self.ask(f"z0,{address:x},1")
        self.breakpoints.discard(address)

    def cont(self, timeout: float) -> int:
        """Runs the machine until it stops; returns the EIP it stopped at. A
        machine standing on a breakpoint first steps over it (as gdb does:
        the breakpoint out, one instruction, the breakpoint back)."""
        here = self.stopped_at
        if here is not None and here in self.breakpoints:
            self.ask(f"z0,{here:x},1")
            self.ask("s", timeout)
            self.ask(f"Z0,{here:x},1")
        self._send("c")
        self._packet(timeout)
        self.last = self.registers()
        eip = self.last.get("EIP", -1)
        self.stopped_at = eip
        return eip

    def detach(self) -> None:
        """Lets the machine run on with no breakpoint left."""
        try:
            self._send("D")
            self._packet(2)
        except (StubError, OSError):
            pass


def elf32_symbols(path: str) -> Dict[str, int]:
    """name -> value of every symbol in a little-endian ELF file's symbol
    tables, 32- or 64-bit (ELF specification, "Symbol Table"; the 64-bit
    layouts from the ELF-64 object file format)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2):
        raise SymbolError(f"{path} is not an ELF file")
    wide = data[4] == 2
    if wide:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    else:
        shoff, = struct.unpack_from("<I", data, 0x20)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    sections: List[Tuple[int, int, int, int, int]] = []
    for i in range(shnum):
        if wide:
            _, kind, _, _, offset, size, link, _, _, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", data, shoff + i * shentsize)
        else:
            _, kind, _, _, offset, size, link, _, _, entsize = struct.unpack_from(
                "<10I", data, shoff + i * shentsize)
        sections.append((kind, offset, size, link, entsize))
    symbols: Dict[str, int] = {}
    SHT_SYMTAB = 2
    for kind, offset, size, link, entsize in sections:
        if kind != SHT_SYMTAB or entsize < 16:
            continue
        strtab = sections[link][1]
        for at in range(offset, offset + size, entsize):
            if wide:
                name_at, = struct.unpack_from("<I", data, at)
                value, = struct.unpack_from("<Q", data, at + 8)
            else:
                name_at, value = struct.unpack_from("<II", data, at)
            end = data.index(b"\0", strtab + name_at)
            symbols[data[strtab + name_at:end].decode("latin-1")] = value
    return symbols


def find_symbol(symbols: Dict[str, int], pattern: str) -> int:
    """The value of the one symbol whose (mangled) name matches @p pattern."""
    found = sorted(v for k, v in symbols.items() if re.search(pattern, k))
    if len(set(found)) != 1:
        raise SymbolError(f"the kernel has {len(set(found))} symbols matching {pattern!r}")
    return found[0]
