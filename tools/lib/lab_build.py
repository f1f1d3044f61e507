"""How the grader builds its scratch trees quickly: Ninja and a private ccache.

Every scratch tree is the same checkout with one or two student files
changed, in one of a few scratch folders (ScratchSlot). ccache, told that paths under the grading
folder are relative (base_dir) and that the working folder does not matter
(hash_dir off), serves every unchanged file from its cache; a student file
whose content differs is compiled afresh. Both tools only change how fast a
tree builds, never what it builds: without them the grader builds as before.
"""

import fcntl
import os
import shutil
import subprocess
from typing import Dict, Optional, Set, Tuple

from . import lab_safe

# A private cache holds about 30 MB per version of the checkout; this bounds
# it when one cache serves many labs and versions.
CACHE_MAX_SIZE = "2G"
CACHE_FOLDER = "toll-grade-ccache"
SLOT_PREFIX = "toll-grade-slot"
# Inside the cache folder: the reference's own cache (local, and the file
# store the lab caches are filled from), which no submission ever reads, and
# one cache per lab, filled from the lab's starter, which students read.
REFERENCE_LOCAL = "reference"
REFERENCE_STORE = "reference-store"
# The versions of the checkout whose reference scans and starter ramdisks a
# cache folder keeps: every commit makes a new version, and each holds a few
# MB that no later grading reads.
KEEP_VERSIONS = 3
REFERENCE_SCANS = "toll-grade-reference-"


def prune_versions(folder: str, current: str, keep: int = KEEP_VERSIONS) -> list:
    """Removes from @p folder the reference scans and lab ramdisks of all but
    the @p keep most recently used versions of the checkout (@p current is
    always kept). A version another grader holds the lock of is left alone,
    and nothing is followed through a link. Returns the versions removed."""
    versions: Dict[str, float] = {}
    for name in os.listdir(folder):
        if name.startswith(REFERENCE_SCANS) and name.endswith(".json"):
            st = os.lstat(os.path.join(folder, name))
            versions[name[len(REFERENCE_SCANS):-len(".json")]] = st.st_mtime
    newest = sorted(versions, key=lambda v: versions[v], reverse=True)
    old = [v for v in newest if v != current][max(keep - 1, 0):]
    removed = []
    for version in old:
        scans = os.path.join(folder, f"{REFERENCE_SCANS}{version}.json")
        try:
            fd = os.open(scans + ".lock", os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            fd = -1  # no lock file (or a link): nobody can be holding it
        try:
            if fd >= 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # a grading of that version is running
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if name.startswith("lab-") and name.endswith(f"-initrd-{version}"):
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path)
                    else:
                        os.unlink(path)
            for path in (scans, scans + ".lock"):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
            removed.append(version)
        finally:
            if fd >= 0:
                os.close(fd)
    return removed


class BuildTools:
    """The generator and compiler cache the grader's builds use.

    @p work_root is the folder holding every scratch tree (ccache's base_dir);
    @p cache_dir the private cache (default: a folder in @p work_root);
    @p use_cache False builds without ccache even when it is installed.
    """

    def __init__(self, work_root: str, cache_dir: Optional[str] = None,
                 use_cache: bool = True) -> None:
        self.work_root = os.path.abspath(work_root)
        self.ninja = shutil.which("ninja")
        self.ccache = shutil.which("ccache") if use_cache else None
        self.cache_dir: Optional[str] = None
        self.note = ""  # what to tell the user once, if anything
        if use_cache and not self.ccache:
            self.note = ("ccache is not installed (tools/deps installs it): building every "
                         "scratch tree without a compiler cache, which is slower")
        if self.ccache:
            self.cache_dir = os.path.abspath(cache_dir or os.path.join(self.work_root,
                                                                       CACHE_FOLDER))
            # Refused (SetupProblem) when another user could write it.
            lab_safe.check_private_folder(self.cache_dir, "the compiler cache")

    def reference_cache(self) -> Tuple[Optional[str], Optional[str]]:
        """(the reference build's local cache, the store it fills), made if
        missing and kept readable by the grading user alone: the dedicated
        users of the fallback sandbox, which may read the lab caches beside
        them, cannot enter these."""
        if not self.cache_dir:
            return None, None
        paths = (os.path.join(self.cache_dir, REFERENCE_LOCAL),
                 os.path.join(self.cache_dir, REFERENCE_STORE))
        for path in paths:
            lab_safe.check_private_folder(path, "the reference's compiler cache", mode=0o700)
            os.chmod(path, 0o700)
        return paths

    def lab_cache(self, lab: str) -> Optional[str]:
        """The cache students of @p lab read: objects of the lab's starter."""
        if not self.cache_dir:
            return None
        return os.path.join(self.cache_dir, f"lab-{lab}")

    def lab_initrds(self, lab: str, version: str) -> Optional[str]:
        """The folder of the ramdisks of @p lab's starter at @p version of
        the checkout (<kernel build dir>.cpio), which students' kernels pack
        instead of building every user program again (the grader's,
        read-only to them); None without a cache folder."""
        if not self.cache_dir:
            return None
        return os.path.join(self.cache_dir, f"lab-{lab}-initrd-{version}")

    def cmake_args(self) -> list:
        """Extra arguments for configuring a scratch tree."""
        args = ["-G", "Ninja"] if self.ninja else []
        if self.ccache:
            # The top-level CMakeLists.txt hands this launcher to the kernel's
            # ExternalProject as well.
            args.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={self.ccache}")
        return args

    def env(self, base: Dict[str, str], cache_dir: Optional[str] = None,
            store: Optional[str] = None, store_writable: bool = False) -> Dict[str, str]:
        """@p base (a dict of the environment) with ccache's settings added:
        @p cache_dir (default the cache folder itself) and, when given, the
        file @p store consulted on a miss (read-only unless @p store_writable)."""
        env = dict(base)
        for key in [k for k in env if k.startswith("CCACHE_")]:
            del env[key]  # the user's own ccache settings must not change ours
        if self.ccache:
            env.update(CCACHE_DIR=cache_dir or self.cache_dir or "", CCACHE_BASEDIR=self.work_root,
                       CCACHE_NOHASHDIR="1", CCACHE_MAXSIZE=CACHE_MAX_SIZE)
            if store:
                env["CCACHE_REMOTE_STORAGE"] = f"file:{store}" + (
                    "" if store_writable else "|read-only")
        return env

    def describe(self) -> str:
        """One line on how trees are built, for logs."""
        gen = "Ninja" if self.ninja else "the default CMake generator"
        cache = f"ccache in {self.cache_dir}" if self.ccache else "no compiler cache"
        return f"building with {gen} and {cache}"

    def counts(self, cache_dir: Optional[str] = None) -> Dict[str, int]:
        """ccache's counters for the private cache ({name: number}), {} without one."""
        if not self.ccache:
            return {}
        out = subprocess.run([self.ccache, "--print-stats"],
                             env=self.env(dict(os.environ), cache_dir),
                             capture_output=True, text=True).stdout
        counts = {}
        for line in out.splitlines():
            name, _, value = line.partition("\t")
            if value.strip().isdigit():
                counts[name] = int(value)
        return counts

    def hits_since(self, before: Dict[str, int],
                   cache_dir: Optional[str] = None) -> Tuple[int, int]:
        """(hits, misses) of the cache since counts() returned @p before."""
        now = self.counts(cache_dir)

        def grown(*names: str) -> int:
            return sum(now.get(n, 0) - before.get(n, 0) for n in names)
        return (grown("direct_cache_hit", "preprocessed_cache_hit"), grown("cache_miss"))


class ScratchSlot:
    """A scratch folder at a path reused from one submission to the next.

    The build writes the tree's own path into some compile commands (e.g. the
    host tests' TOLL_SOURCE_DIR), which ccache cannot make relative: at a
    reused path those compiles hit the cache too. Each slot is held with an
    exclusive lock on its .lock file, so two graders sharing a scratch folder
    never share a slot; the folder is emptied when claimed and when released.
    """

    def __init__(self, work_root: str) -> None:
        index = 0
        while True:
            path = os.path.join(work_root, f"{SLOT_PREFIX}{index}")
            index += 1
            try:
                fd = os.open(path + ".lock", os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW |
                             os.O_CLOEXEC, 0o600)
            except OSError:  # another user's slot
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held by another grading
                os.close(fd)
                continue
            shutil.rmtree(path, ignore_errors=True)  # what a killed grading left
            if not os.path.exists(path):
                break
            os.close(fd)  # it cannot be emptied: never build on leftovers
        self.path, self._fd = path, fd
        os.makedirs(path, mode=0o711)
        os.chmod(path, 0o711)  # enter, not list: other gradings see nothing here

    def release(self) -> None:
        """Empties the folder and gives the slot back."""
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._fd)


def ninja_inputs(build_dir: str, target: str) -> Set[str]:
    """Every file @p target is made from in the Ninja build @p build_dir:
    its explicit and implicit inputs, theirs in turn, and the headers the
    compiler reported for each object (Ninja's deps log). Order-only inputs,
    which never rebuild anything, are left out. Absolute paths."""
    seen: Set[str] = set()
    todo = [target]
    listing = subprocess.run(["ninja", "-C", build_dir, "-t", "targets", "all"],
                             capture_output=True, text=True).stdout
    made = {line.rsplit(": ", 1)[0] for line in listing.splitlines()}
    while todo:
        batch, todo = todo[:200], todo[200:]
        out = subprocess.run(["ninja", "-C", build_dir, "-t", "query", *batch],
                             capture_output=True, text=True).stdout
        deps = subprocess.run(["ninja", "-C", build_dir, "-t", "deps", *batch],
                              capture_output=True, text=True).stdout
        inputs, headers = [], []
        section = ""
        for line in out.splitlines():
            s = line.strip()
            if line.startswith("  ") and not line.startswith("    "):
                section = s
            elif line.startswith("    ") and section.startswith("input"):
                if s.startswith("|| "):
                    continue
                inputs.append(s[2:] if s.startswith("| ") else s)
        for line in deps.splitlines():
            if line.startswith("    "):
                headers.append(line.strip())  # leaves: never nodes Ninja could query
        for path in inputs + headers:
            full = os.path.normpath(os.path.join(os.path.abspath(build_dir), path))
            if full not in seen:
                seen.add(full)
                if path in inputs or path in made:  # a header another step generates
                    todo.append(path)
    return seen
