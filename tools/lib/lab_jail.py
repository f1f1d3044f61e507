"""Where one submission's code runs (the Jail: its sandbox, uid and the
folders it may read and write), and the grader's read-only copies of what
boots, with the hashes that tell whether anything changed them.
"""

import hashlib
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import lab_safe, lab_sandbox

# What tools/run boots, by (arch, granule, boot): the files the grader copies
# out of the build right after the kernels are built, before any of the
# student's host code runs, and hands to every boot read-only.
BOOT_FILES = {
    ("i386", None, "multiboot"): "i386/arch/i386/toll-i386.elf",
    ("i386", None, "disk"): "i386/arch/i386/boot/bootsect/toll-disk.img",
    ("arm64", "4K", "multiboot"): "arm64/arch/arm64/toll-arm64.elf",
    ("arm64", "16K", "multiboot"): "arm64-16k/arch/arm64/toll-arm64.elf",
}

# The kernel builds of a tree: (folder under the build folder, architecture).
KERNEL_BUILDS = (("i386", "i386"), ("arm64", "arm64"), ("arm64-16k", "arm64"))


class Jail:
    """Where and how one submission's code runs: the sandbox, its dedicated
    uid, the scratch folder it may write (@p work), the grader's checkout
    @p root (of which only tools/ is visible, for tools/run) and the build
    tools. @p trusted marks the grader's own builds, the only ones allowed
    to write a compiler cache. @p private is a folder of the grader's that
    no step can write (the build's copies, read-only, go there)."""

    def __init__(self, sandbox: lab_sandbox.Sandbox, work: str, root: str, tools: Any = None,
                 uid: Optional[int] = None, trusted: bool = False,
                 private: Optional[str] = None, cache_dir: Optional[str] = None,
                 store: Optional[str] = None, store_writable: bool = False,
                 initrds: Optional[str] = None) -> None:
        self.sandbox, self.work, self.root, self.tools = sandbox, work, root, tools
        self.uid, self.trusted = uid, trusted
        self.private = private
        self.cache_dir = cache_dir if cache_dir is not None else (
            tools.cache_dir if tools else None)
        self.store, self.store_writable = store, store_writable
        # The grader's ramdisks the kernels pack (lab_build.BuildTools.lab_initrds).
        self.initrds = initrds
        self.frozen = False       # the build is over: the tree is read-only from now on
        # tree-relative path -> (grader's copy, sha256)
        self.boot_copies: Dict[str, Tuple[str, str]] = {}
        self.tree: Optional[str] = None

    @property
    def home(self) -> str:
        """HOME and TMPDIR of the steps: the private /tmp under bubblewrap,
        a folder of this grading's own without it."""
        private_tmp = self.sandbox.bwrap or getattr(self.sandbox, "hides", False)
        return "/tmp" if private_tmp else os.path.join(self.work, "home")

    def env(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        env = lab_sandbox.minimal_env(extra, home=self.home)
        if self.tools:
            env = self.tools.env(env, self.cache_dir, self.store, self.store_writable)
            if self.cache_dir and not self.trusted:
                # Student builds read the cache but never write it, so no
                # submission can plant objects for the next one.
                env.update(CCACHE_READONLY="1",
                           CCACHE_TEMPDIR=os.path.join(self.work, "ccache-tmp"))
        return env

    def readable(self) -> List[str]:
        paths = [os.path.join(self.root, "tools")]
        if self.cache_dir and not self.trusted:
            paths.append(self.cache_dir)
        if self.store and not self.store_writable:
            paths.append(self.store)
        if self.initrds:
            paths.append(self.initrds)
        return paths

    def writable(self) -> List[str]:
        paths = [self.work]
        if self.cache_dir and self.trusted:
            paths.append(self.cache_dir)
        if self.store and self.store_writable:
            paths.append(self.store)
        return paths

    def overlays(self, writable_inside: Sequence[str] = ()) -> List[Tuple[str, str, str]]:
        """Mounts laid over the scratch folder once the build is over: the
        tree read-only, the grader's copies of what boots, and @p
        writable_inside (folders of the scratch folder a step may still write)."""
        if not self.frozen or not (self.sandbox.bwrap or getattr(self.sandbox, "hides", False)):
            return []
        assert self.tree is not None
        mounts = [("ro", self.tree, self.tree)]
        for path in writable_inside:
            mounts.append(("rw", path, path))
        return mounts

    def run(self, cmd: Sequence[str], log: str, timeout: float, limits: lab_sandbox.Limits,
            cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
            writable_inside: Sequence[str] = (), result_limit: int = 0,
            stdin_data: bytes = b"") -> lab_sandbox.Outcome:
        readable = self.readable()
        if self.frozen and self.private and os.path.isdir(self.boot_dir):
            readable.append(self.boot_dir)
        return self.sandbox.run(cmd, log, timeout, limits, writable=self.writable(),
                                readable=readable, cwd=cwd or self.work,
                                env=env or self.env(), uid=self.uid,
                                overlays=self.overlays(writable_inside),
                                result_limit=result_limit, watch=self.work,
                                stdin_data=stdin_data)

    @property
    def boot_dir(self) -> str:
        """The grader's read-only copies of what boots (root's, readable by
        this grading's uid alone): beside the private folder."""
        assert self.private is not None
        return os.path.join(os.path.dirname(self.private), "boot")

    def freeze(self, tree: str) -> None:
        """Ends the build: from now on no step can change the tree (its files
        go back to the grader's user; under bubblewrap it is also mounted
        read-only)."""
        self.tree, self.frozen = tree, True
        if self.uid is None:
            return
        for base, dirs, files in os.walk(tree):
            for name in [base] + [os.path.join(base, n) for n in dirs + files]:
                try:
                    os.lchown(name, 0, 0)
                except OSError:
                    pass

    def writable_folder(self, name: str) -> str:
        """A fresh folder of the scratch folder that a step after the build
        may write (its own output: ctest's Testing, a run's temporary files)."""
        return lab_safe.fresh_folder(os.path.join(self.work, name), self.uid)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_boot_files(jail: "Jail", bdir: str) -> None:
    """Copies what the rubric's runs boot out of @p bdir into the grader's
    own folder, with their hashes: every boot uses these copies."""
    dest = jail.boot_dir
    os.makedirs(dest, exist_ok=True)
    if jail.uid is not None:
        os.chown(dest, 0, jail.uid)
    os.chmod(dest, 0o750)
    for rel in sorted(set(BOOT_FILES.values())):
        src = os.path.join(bdir, rel)
        if not os.path.lexists(src):
            continue
        data = lab_safe.read_regular(src, 256 << 20, top=bdir, what=rel)
        copy = os.path.join(dest, rel.replace("/", "_"))
        lab_safe.write_private(copy, data)
        os.chmod(copy, 0o444)
        jail.boot_copies[rel] = (copy, sha256_of(data))


def tampering(jail: "Jail", bdir: str) -> str:
    """'' when the build's boot files and the grader's copies still hash as
    they did right after the kernels were built, else what changed."""
    changed = []
    for rel, (copy, digest) in sorted(jail.boot_copies.items()):
        for what, path, top in (("the grader's copy of", copy, None), ("the build's", rel, bdir)):
            full = os.path.join(top, path) if top else path
            try:
                now = sha256_of(lab_safe.read_regular(full, 256 << 20, top=top))
            except (OSError, lab_safe.Unsafe):
                now = ""
            if now != digest:
                changed.append(f"{what} {rel}")
    return ", ".join(changed)


def boot_file_for(run_args: Optional[Sequence[str]]) -> Optional[str]:
    """The BOOT_FILES key of a tools/run argument list."""
    args = list(run_args or [])

    def value(flag: str, default: str) -> str:
        for i, a in enumerate(args):
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
        return default
    arch = value("--arch", "i386")
    emu = value("--emu", "qemu")
    boot = value("--boot", "disk" if emu == "bochs" else "multiboot")
    granule = value("--granule", "4K") if arch == "arm64" else None
    return BOOT_FILES.get((arch, granule, boot))


def limits_for(seconds: float, output: int, memory: int = 3 << 30) -> lab_sandbox.Limits:
    return lab_sandbox.Limits(cpu_seconds=int(seconds) + 30, output_bytes=output,
                              memory_bytes=memory)
