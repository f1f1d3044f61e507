"""The sandbox the grader runs student code in: every build, host test and
emulator run of a submission goes through Sandbox.run().

Two layers, each used where the machine allows it:

* bubblewrap (`bwrap`): a fresh PID namespace (every process it started dies
  when the command ends or is killed), no network, a private /tmp, a read-only
  /usr and only the scratch tree writable. The grader's checkout, its output
  folder, other students' trees and the rest of the machine (/etc/passwd,
  /home, ...) are not in the sandbox's file system at all.
* a dedicated unprivileged user (as root only): the command runs as a uid of
  its own (one per scratch slot), so it cannot write the grader's files, and
  after the command ends every process of that uid is killed.

Both come with resource limits (CPU seconds, address space, file size, number
of processes) and a cap on the output kept, beyond which the log ends with a
clear mark. Which protection was in force is said by describe() and goes into
every report. TOLL_GRADE_SANDBOX (auto, bwrap, user, none) forces a mode,
which the tests use to exercise the fallback.
"""

import fcntl
import io
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from . import lab_safe, process

# The first uid of the dedicated users (one per slot: base, base+1, ...).
# Debian leaves 60000-64999 to be allocated on demand; nothing here uses it.
DEFAULT_UID_BASE = 64100
UID_POOL = 32
# One lock file per uid in use, shared by every grader on the machine.
UID_LOCKS = "/tmp/toll-grade-uids"
# Inside bubblewrap, the student's code sees itself as this uid.
INSIDE_UID = 1000

TRUNCATION_MARK = ("\n[... output cut by the grader after {limit} bytes; {dropped} more byte(s) "
                   "dropped ...]\n")

# Files of /etc the tools need: alternatives (cc, c++, ld links) and the
# dynamic loader's cache. Nothing else of /etc is visible.
ETC_NEEDED = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d")
# Top-level folders of a merged-/usr system (links into /usr) or real folders.
TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
PRLIMIT = "/usr/bin/prlimit"  # util-linux, in every Debian system
UNSHARE = "/usr/bin/unshare"  # util-linux too
# Run by the fallback in a mount namespace of the step's own: hides the machine.
HIDE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab_hide.py")
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by the dedicated users
# What a command puts in its argument list to be given the write end of the
# result pipe (Sandbox.run(result_limit=...)): the grader reads what comes
# out of it, never a file the sandbox could have replaced.
RESULT = "{result-pipe}"
# The sandbox's private /tmp (a tmpfs, so RAM): capped.
TMPFS_BYTES = 512 << 20
# Its /dev/shm, the other world-writable tmpfs: a fresh one per step, capped.
SHM_BYTES = 64 << 20
# What a step may leave in its scratch folder before it is stopped.
SCRATCH_BYTES = 3 << 30
# Where an instructor (or a test) sets another cap, in MiB.
SCRATCH_MB_VARIABLE = "TOLL_GRADE_SCRATCH_MB"


def scratch_limit() -> int:
    """The scratch cap in force: SCRATCH_BYTES, or what SCRATCH_MB_VARIABLE says."""
    text = os.environ.get(SCRATCH_MB_VARIABLE, "")
    return int(text) << 20 if text.isdigit() and int(text) > 0 else SCRATCH_BYTES


class SandboxError(Exception):
    """The requested protection is not available on this machine."""


class Limits:
    """Resource limits of one sandboxed command."""

    def __init__(self, cpu_seconds: int = 600, memory_bytes: int = 3 << 30,
                 file_bytes: int = 64 << 20, processes: int = 256,
                 output_bytes: int = 1 << 20) -> None:
        self.cpu_seconds = cpu_seconds
        self.memory_bytes = memory_bytes
        self.file_bytes = file_bytes
        self.processes = processes
        self.output_bytes = output_bytes

    def describe(self) -> str:
        return (f"{self.cpu_seconds} s CPU per process, {self.memory_bytes >> 20} MiB of address "
                f"space, files up to {self.file_bytes >> 20} MiB, {self.processes} processes, "
                f"{self.output_bytes >> 10} KiB of output kept")


class Outcome:
    """How a sandboxed command ended."""

    def __init__(self) -> None:
        self.status: Optional[int] = None  # exit status; None when stopped at the time limit
        self.seconds = 0.0
        self.output_bytes = 0   # what the command printed, kept or not
        self.truncated = False
        self.leftovers = 0      # processes killed after the command ended
        self.result = b""       # what came out of the result pipe
        self.result_truncated = False
        self.disk_full = False  # stopped for filling the scratch folder

    @property
    def timed_out(self) -> bool:
        return self.status is None

    def limit_signal(self) -> str:
        """The resource limit that killed the command, in words, or ''."""
        if self.status is None or self.status >= 0:
            return ""
        words: Dict[int, str] = {signal.SIGXCPU: "the CPU time limit",
                                 signal.SIGXFSZ: "the file size limit",
                                 signal.SIGKILL: "a kill (the CPU or memory limit?)"}
        return words.get(-self.status, "")


def _as_user(uid: Optional[int]) -> Dict[str, Any]:
    """Popen arguments that start a command as @p uid (none for None)."""
    if uid is None:
        return {}
    return {"user": uid, "group": uid, "extra_groups": []}


def _bwrap_works(uid: Optional[int]) -> bool:
    """True when bubblewrap can make its namespaces here (as @p uid when given)."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False
    try:
        r = subprocess.run([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr",
                            "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
                            "--symlink", "usr/lib64", "/lib64", "/usr/bin/true"],
                           capture_output=True, timeout=20, **_as_user(uid))
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0


def _mount_namespaces_work() -> bool:
    """True when the grader (root) can make a mount namespace of its own here."""
    try:
        r = subprocess.run([UNSHARE, "--mount", "--propagation", "private", "--",
                            "/usr/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", "/tmp"],
                           capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0


def _processes_of(uid: int) -> List[int]:
    """Pids of the live processes whose real or effective uid is @p uid."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                for line in f:
                    if line.startswith("State:") and line.split()[1] in "ZX":
                        break  # a zombie runs nothing; reaping it is its parent's job
                    if line.startswith("Uid:"):
                        ids = line.split()[1:3]
                        if str(uid) in ids:
                            found.append(int(name))
                        break
        except OSError:
            continue
    return found


def kill_user(uid: int) -> int:
    """Kills every process of @p uid (from a process that takes that uid, so
    kill(-1) reaches exactly them); returns how many there were."""
    count = len(_processes_of(uid))
    for _ in range(50):
        if not _processes_of(uid):
            return count
        subprocess.run([SYSTEM_PYTHON, "-c", "import os, signal; os.kill(-1, signal.SIGKILL)"],
                       stdin=subprocess.DEVNULL, capture_output=True, **_as_user(uid))
        time.sleep(0.02)
    return count


class Sandbox:
    """Runs commands of one grader with the strongest protection available.

    @p mode: "auto" (bubblewrap where user namespaces work, plus a dedicated
    user when running as root), "bwrap", "user" (root only: the dedicated
    user without namespaces) or "none" (limits only; must be asked for).
    """

    def __init__(self, mode: str = "auto", uid_base: Optional[int] = None) -> None:
        mode = os.environ.get("TOLL_GRADE_SANDBOX") or mode
        if mode not in ("auto", "bwrap", "user", "none"):
            raise SandboxError(f"unknown sandbox mode {mode!r} (auto, bwrap, user or none)")
        self.root = os.geteuid() == 0
        self.uid_base = int(os.environ.get("TOLL_GRADE_UID") or uid_base or DEFAULT_UID_BASE)
        if mode == "user" and not self.root:
            raise SandboxError("the dedicated-user sandbox needs the grader to run as root")
        self.users = self.root and mode in ("auto", "bwrap", "user")
        self.bwrap: Optional[str] = None
        self._lock = threading.Lock()
        self._held: Dict[int, int] = {}  # uid -> the descriptor holding its lock
        if self.users:
            self._check_uids()
        if mode in ("auto", "bwrap"):
            if _bwrap_works(self.uid_base if self.users else None):
                self.bwrap = shutil.which("bwrap")
            elif mode == "bwrap":
                raise SandboxError("bubblewrap is missing or cannot create user namespaces here "
                                   "(install the Debian package bubblewrap; in a container, "
                                   "allow user namespaces)")
        if mode == "auto" and not self.bwrap and not self.users:
            raise SandboxError(
                "no sandbox is available: bubblewrap cannot create namespaces here and the "
                "grader is not root (so it cannot run student code as a dedicated user). "
                "Install bubblewrap, run the grader as root, or pass --sandbox none to grade "
                "without protection (only for code you trust)")
        self.mode = "bwrap" if self.bwrap else ("user" if self.users else "none")
        # The fallback hides the machine from each step when it can.
        self.hides = self.mode == "user" and _mount_namespaces_work()

    def _check_uids(self) -> None:
        for uid in range(self.uid_base, self.uid_base + UID_POOL):
            try:
                owner = pwd.getpwuid(uid).pw_name
            except KeyError:
                owner = None
            if owner and owner != "nobody":
                raise SandboxError(f"uid {uid} belongs to user {owner}: the grader needs "
                                   f"{UID_POOL} unused uids from {self.uid_base} "
                                   f"(set TOLL_GRADE_UID to another base)")

    def describe(self) -> str:
        """One line on the protection in force, for reports."""
        if self.mode == "bwrap":
            who = (f", as a dedicated unprivileged user (uid {self.uid_base}+)"
                   if self.users else "")
            return ("bubblewrap: own PID, network, IPC and mount namespaces (no network; only "
                    "the scratch tree writable; the grader's files and other submissions "
                    f"invisible){who}; resource limits")
        if self.mode == "user" and self.hides:
            return (f"a dedicated unprivileged user (uid {self.uid_base}+) whose processes are "
                    "all killed after each step, in a mount namespace of each step's own (a "
                    "private capped /tmp per step; only the scratch tree writable; the "
                    "grader's files, other submissions and the rest of the machine covered "
                    "by empty file systems), and resource limits (no PID or network "
                    "namespace)")
        if self.mode == "user":
            return (f"a dedicated unprivileged user (uid {self.uid_base}+) whose processes are "
                    "all killed after each step, a private HOME and TMPDIR per grading, and "
                    "resource limits (no namespaces: files readable by every user of this "
                    "machine were readable)")
        return ("NONE: student code ran as the grader's own user with resource limits only "
                "(--sandbox none)")

    def acquire_uid(self) -> Optional[int]:
        """A dedicated uid for one grading (None when not switching users).
        Each is held with a lock file, so that two graders on one machine
        (two batches, two labs' checks) never share one: a grader kills
        every process of its uid."""
        if not self.users:
            return None
        try:
            lab_safe.check_private_folder(UID_LOCKS, "the sandbox's lock folder")
        except lab_safe.SetupProblem as e:
            raise SandboxError(str(e))
        for uid in range(self.uid_base, self.uid_base + UID_POOL):
            fd = os.open(os.path.join(UID_LOCKS, str(uid)),
                         os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another grading holds it
                os.close(fd)
                continue
            with self._lock:
                self._held[uid] = fd
            kill_user(uid)  # anything a killed grader left behind
            return uid
        raise SandboxError(f"all {UID_POOL} sandbox uids from {self.uid_base} are in use")

    def release_uid(self, uid: Optional[int]) -> None:
        if uid is None:
            return
        kill_user(uid)
        with self._lock:
            fd = self._held.pop(uid)
        os.close(fd)

    def hand_over(self, path: str, uid: Optional[int]) -> None:
        """Makes the tree at @p path writable by the sandbox's user @p uid
        (before any of its code runs: the grader made every file in it, and
        lchown never follows a link)."""
        if uid is None:
            return
        for base, dirs, files in os.walk(path):
            for name in [base] + [os.path.join(base, n) for n in dirs + files]:
                try:
                    os.lchown(name, uid, uid)
                except OSError:
                    pass
        os.chmod(path, 0o700)  # other sandbox users (other gradings) stay out

    def unreachable(self, paths: Sequence[str], uid: Optional[int]) -> List[str]:
        """The folders of @p paths that the sandbox's user @p uid cannot
        enter and read (a cache under root's home, say): grading there would
        fail every build, which is the grader's setup at fault."""
        if uid is None:
            return []
        bad = []
        for path in paths:
            r = subprocess.run(["/usr/bin/test", "-x", path, "-a", "-r", path],
                               stdin=subprocess.DEVNULL, capture_output=True, **_as_user(uid))
            if r.returncode != 0:
                bad.append(path)
        return bad

    def bwrap_args(self, writable: Sequence[str], readable: Sequence[str],
                   cwd: Optional[str],
                   overlays: Sequence[Tuple[str, str, str]] = ()) -> List[str]:
        assert self.bwrap
        args = [self.bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--uid", str(INSIDE_UID),
                "--gid", str(INSIDE_UID), "--hostname", "toll-grade", "--die-with-parent",
                "--new-session", "--ro-bind", "/usr", "/usr"]
        for top in TOP_LEVEL:
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        for path in ETC_NEEDED:
            args += ["--ro-bind-try", path, path]
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
                 "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
        for path in readable:
            args += ["--ro-bind", path, path]
        for path in writable:
            args += ["--bind", path, path]
        # Read-only views laid over what is bound above (a build's outputs
        # replaced by the grader's copies of them): later mounts win.
        for kind, source, dest in overlays:
            args += ["--bind" if kind == "rw" else "--ro-bind", source, dest]
        args += ["--chdir", cwd or (writable[0] if writable else "/tmp")]
        return args

    def run(self, cmd: Sequence[str], log_path: str, timeout: float, limits: Limits,
            writable: Sequence[str] = (), readable: Sequence[str] = (),
            cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
            uid: Optional[int] = None, overlays: Sequence[Tuple[str, str, str]] = (),
            result_limit: int = 0, watch: Optional[str] = None,
            stdin_data: bytes = b"") -> Outcome:
        """Runs @p cmd with output (stdout and stderr, at most
        limits.output_bytes of it) in @p log_path, a file of the grader's own
        folder, stopping it after @p timeout seconds. Only @p writable
        folders can be written (and, under bubblewrap, only they and @p
        readable are visible besides /usr; @p overlays are ("ro" or "rw",
        folder, path) mounts laid over them, in order). @p uid is the dedicated user
        from acquire_uid(). With @p result_limit, an argument RESULT in @p cmd
        becomes a path to the write end of a pipe whose first @p result_limit
        bytes become Outcome.result. @p watch is a folder whose size is capped
        at SCRATCH_BYTES while the command runs. @p stdin_data is the
        command's input. Returns an Outcome."""
        writable = [os.path.abspath(p) for p in writable]
        readable = [os.path.abspath(p) for p in readable]
        full = list(cmd)
        pass_fds: Tuple[int, ...] = ()
        result_r = result_w = -1
        if result_limit:
            result_r, result_w = os.pipe()
            os.set_inheritable(result_w, True)
            if uid is not None:  # reopened through /dev/fd by the sandbox's user
                os.fchown(result_w, uid, uid)
            pass_fds = (result_w,)
            full = [f"/dev/fd/{result_w}" if a == RESULT else a for a in full]
        if self.bwrap:
            full = self.bwrap_args(writable, readable, cwd, overlays) + ["--"] + full
        env = dict(env or minimal_env())
        # prlimit sets the limits on itself and runs the command: nothing of
        # Python runs between fork and exec (the grader has threads).
        full = [PRLIMIT, f"--cpu={limits.cpu_seconds}", f"--as={limits.memory_bytes}",
                f"--fsize={limits.file_bytes}", f"--nproc={limits.processes}", "--core=0",
                "--"] + full
        start_as = uid
        if self.hides and uid is not None:
            # Root makes the step's mount namespace, then becomes its user.
            config = {"uid": uid, "tmp_bytes": TMPFS_BYTES, "shm_bytes": SHM_BYTES,
                      "writable": writable, "readable": readable,
                      "overlays": [list(o) for o in overlays],
                      "cwd": cwd or (writable[0] if writable else "/tmp")}
            full = [UNSHARE, "--mount", "--propagation", "private", "--", SYSTEM_PYTHON, "-I",
                    "-S", HIDE_SCRIPT, json.dumps(config)] + full
            start_as = None

        out = Outcome()
        start = time.monotonic()
        log_fd = lab_safe.open_private_write(log_path)
        stdin_r = -1
        if stdin_data:
            stdin_r, stdin_w = os.pipe()
            writer = threading.Thread(target=_feed, args=(stdin_w, stdin_data), daemon=True)
        with os.fdopen(log_fd, "wb") as log:
            result_sink = io.BytesIO()
            try:
                group = process.Group(full, stdin=stdin_r if stdin_data else subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      cwd=None if self.bwrap else cwd, env=env, umask=0o022,
                                      pass_fds=pass_fds, **_as_user(start_as))
            finally:
                if result_limit:
                    os.close(result_w)
                if stdin_data:
                    os.close(stdin_r)
            if stdin_data:
                writer.start()
            result_copy = None
            if result_limit:
                result_copy = process.LimitedCopy(os.fdopen(result_r, "rb"), result_sink,
                                                  result_limit)
            with group as child:
                assert child.proc.stdout is not None  # stdout=PIPE above
                copy = process.LimitedCopy(child.proc.stdout, log, limits.output_bytes)
                try:
                    out.status = _wait(child, timeout, watch, out, uid)
                finally:
                    child.stop()  # bwrap's own session, or a plain process group
                    if uid is not None:
                        out.leftovers = kill_user(uid)
                    copy.join(timeout=10)
            # Leaving the group closed the pipe, which also frees a reader that
            # a leftover (no sandbox) keeps waiting.
            copy.join(timeout=10)
            if result_copy is not None:
                result_copy.join(timeout=10)
                out.result = result_sink.getvalue()
                out.result_truncated = result_copy.truncated
            out.output_bytes, out.truncated = copy.total, copy.truncated
            if copy.truncated:
                log.write(TRUNCATION_MARK.format(limit=limits.output_bytes,
                                                 dropped=copy.total - copy.kept).encode())
            if out.disk_full:
                log.write(f"\n[... stopped by the grader: {disk_words()} ...]\n".encode())
        out.seconds = time.monotonic() - start
        return out


def _feed(fd: int, data: bytes) -> None:
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError:  # the command did not read it all
        pass


def folder_bytes(path: str, stop: int) -> int:
    """The bytes the files under @p path take on disk (links not followed),
    counting no further than @p stop."""
    total = 0
    todo = [path]
    while todo and total <= stop:
        try:
            with os.scandir(todo.pop()) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
        except OSError:
            continue
    return total


def deleted_open_bytes(uid: Optional[int]) -> int:
    """The bytes of the files that processes of @p uid hold open after
    deleting them: on disk until they end, but in no folder."""
    if uid is None:
        return 0
    total = 0
    seen: Set[Tuple[int, int]] = set()
    for pid in _processes_of(uid):
        fds = f"/proc/{pid}/fd"
        try:
            names = os.listdir(fds)
        except OSError:
            continue
        for fd in names:
            try:
                st = os.stat(os.path.join(fds, fd))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and \
                    (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def disk_words() -> str:
    """What the scratch watchdog stopped, in words."""
    return (f"the scratch folder (with the files its processes hold open after deleting "
            f"them) grew past {scratch_limit() >> 20} MiB, so the step was stopped")


def _wait(child: process.Group, timeout: float, watch: Optional[str],
          out: Outcome, uid: Optional[int] = None) -> Optional[int]:
    """The command's status, None at the time limit; with @p watch, stops it
    when that folder, with the deleted files @p uid's processes hold open,
    grows past scratch_limit()."""
    if not watch:
        return child.wait(timeout)
    deadline = time.monotonic() + timeout
    cap = scratch_limit()
    while True:
        status = child.wait(min(2.0, max(0.0, deadline - time.monotonic())))
        if status is not None:
            return status
        if time.monotonic() >= deadline:
            return None
        if folder_bytes(watch, cap) + deleted_open_bytes(uid) > cap:
            out.disk_full = True
            child.stop()
            status = child.wait(10)
            return status if status is not None else -signal.SIGKILL


def minimal_env(extra: Optional[Dict[str, str]] = None,
                home: str = "/tmp") -> Dict[str, str]:
    """An environment that tells student code nothing about the grader: no
    paths of the grading machine, no user's settings. @p home is HOME and
    TMPDIR: the private /tmp under bubblewrap, a folder of the grading's own
    without it. No Python reads user site-packages (a .pth planted there
    would run in every later Python)."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home,
           "LANG": "C.UTF-8", "TERM": "dumb", "PYTHONNOUSERSITE": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home}
    env.update(extra or {})
    return env
