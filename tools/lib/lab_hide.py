"""Run as root in a fresh mount namespace (`unshare --mount`), by the
fallback sandbox: makes the machine look to one step as bubblewrap would,
then becomes the step's dedicated user and runs the step.

    python3 lab_hide.py CONFIG COMMAND...

CONFIG is JSON: {"uid": U, "tmp_bytes": N, "shm_bytes": N, "writable": [...], "readable":
[...], "overlays": [[kind, source, dest], ...], "cwd": PATH}. Every top-level
folder but the system's (/usr and its links, /proc, /dev) is covered by an
empty tmpfs, /etc keeps only what the tools need, /tmp is a fresh capped
tmpfs of this step alone, and only the given folders come back (readable ones
read-only). A step therefore sees neither the grader's files nor other
submissions nor what an earlier step left in /tmp. The mounts end with the
namespace, when the step's last process does.
"""

import json
import os
import signal
import subprocess
import sys
from typing import Dict, List, Sequence

# Visible as they are: the system (read-only by their owners' modes) and the
# kernel's own file systems.
KEPT = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "proc", "dev"}
# What of /etc the tools need (alternatives for cc and c++, the loader's cache).
ETC_NEEDED = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d")
MOUNT = "/usr/bin/mount"
SETPRIV = "/usr/bin/setpriv"


def mount(*args: str, fds: Sequence[int] = ()) -> None:
    subprocess.run([MOUNT, *args], check=True, pass_fds=tuple(fds))


def under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def hide(config: Dict[str, object]) -> None:
    writable = [str(p) for p in config.get("writable", [])]  # type: ignore[attr-defined]
    readable = [str(p) for p in config.get("readable", [])]  # type: ignore[attr-defined]
    needed = [(p, "rw") for p in writable] + [(p, "ro") for p in readable] + \
        [(p, "ro") for p in ETC_NEEDED if os.path.exists(p)]
    needed.sort(key=lambda pk: pk[0].count("/"))  # a folder before what lies in it
    # Opened before anything is covered: the mounts below bring them back.
    held: Dict[str, int] = {}
    for path, _ in needed:
        if os.path.lexists(path) and path not in held:
            held[path] = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    overlays = [(str(k), str(s), str(d)) for k, s, d in config.get("overlays", [])]  # type: ignore
    for _, source, _ in overlays:
        if source not in held and os.path.lexists(source):
            held[source] = os.open(source, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    mount("--make-rprivate", "/")
    for name in sorted(os.listdir("/")):
        top = "/" + name
        if name in KEPT or os.path.islink(top) or not os.path.isdir(top):
            continue
        size = str(config.get("tmp_bytes", 512 << 20)) if top == "/tmp" else str(64 << 20)
        mode = "1777" if top == "/tmp" else "0755"
        mount("-t", "tmpfs", "-o", f"size={size},mode={mode},nosuid,nodev", "tmpfs", top)
    # /dev stays, but its world-writable tmpfs is the machine's (shared with
    # every other grading, kept after the step): a small one of this step's.
    if os.path.isdir("/dev/shm"):
        mount("-t", "tmpfs", "-o", f"size={config.get('shm_bytes', 64 << 20)},mode=1777,nosuid,"
              f"nodev", "tmpfs", "/dev/shm")
    for path, kind in needed:
        bring_back(path, held, kind == "ro")
    for kind, source, dest in overlays:
        bring_back(dest, held, kind == "ro", source)


def bring_back(path: str, held: Dict[str, int], read_only: bool, source: str = "") -> None:
    """Mounts what was at @p source (default @p path) at @p path again."""
    fd = held.get(source or path)
    if fd is None:
        return
    is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
    if is_dir:
        os.makedirs(path, exist_ok=True)
    elif not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w"):
            pass
    # The child gets the descriptor as the same number: /proc/self/fd/N is
    # it, for the kernel (mount must not turn it back into the path, which
    # now names the empty folder made above: --no-canonicalize).
    os.set_inheritable(fd, True)
    mount("--no-canonicalize", "--bind", f"/proc/self/fd/{fd}", path, fds=[fd])
    if read_only:
        mount("--no-canonicalize", "-o", "remount,bind,ro", path)


def main(argv: List[str]) -> int:
    config = json.loads(argv[0])
    command = argv[1:]
    hide(config)
    os.chdir(str(config.get("cwd") or "/tmp"))
    uid = str(int(config["uid"]))
    # Python ignores these; an ignored signal stays ignored across exec, and
    # a step must meet them as any program does (SIGPIPE ends `yes | head`).
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    os.execv(SETPRIV, [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
                       *command])
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
