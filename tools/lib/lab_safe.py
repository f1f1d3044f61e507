"""How the grader touches files that student code could have touched.

The grader runs as root outside the sandbox. Everything it writes, reads back
or changes the owner of lives in folders no sandboxed step can write
(check_private_folder() proves that of the folders it is given). Where it must
read a file from a student-writable tree (a submission, a build's outputs) it
uses read_regular(): no symbolic link is followed (O_NOFOLLOW on the file,
and every folder on the way is checked), and only a regular file with one
link is read, so a FIFO, a device or a hard link to a file of the machine is
refused rather than opened.
"""

import os
import shutil
import re
import stat
from typing import Optional


class Unsafe(Exception):
    """A path the grader refuses to touch, with the reason in words."""


class SetupProblem(Exception):
    """The grader's own folders are not fit for grading: an instructor's problem."""


# ANSI escape sequences (CSI, OSC and two-byte ones) and the control
# characters a terminal acts on; tab and newline stay.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """@p text without terminal escapes, control characters or bidirectional
    overrides (which could make a report or a gradebook lie on screen)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n")))


def describe_mode(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def check_regular(st: os.stat_result, what: str) -> None:
    """Raises Unsafe unless @p st is a regular file with one link."""
    if not stat.S_ISREG(st.st_mode):
        raise Unsafe(f"{what} is {describe_mode(st.st_mode)}, which the grader never opens")
    if st.st_nlink > 1:
        raise Unsafe(f"{what} is a hard link ({st.st_nlink} names for one file), which the "
                     f"grader never follows")


def _open_dir_chain(top: str, rel: str) -> int:
    """A descriptor of the folder holding @p rel under @p top, reached without
    following any link; raises Unsafe."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    parts = [p for p in rel.split("/") if p][:-1]
    try:
        for part in parts:
            if part in (".", ".."):
                raise Unsafe(f"{rel} leaves its folder")
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=fd)
            except OSError as e:
                raise Unsafe(f"{rel}: the folder {part} is a symbolic link or unreadable "
                             f"({e.strerror})")
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str, limit: int, top: Optional[str] = None, what: str = "") -> bytes:
    """At most @p limit bytes of the regular file @p path; raises Unsafe for a
    link (anywhere below @p top, when given), a hard link, a FIFO or a device,
    and OSError when it does not exist. Never blocks on a FIFO."""
    what = what or path
    if top is not None:
        rel = os.path.relpath(path, top)
        if rel.startswith(".."):
            raise Unsafe(f"{what} lies outside {top}")
        dir_fd = _open_dir_chain(top, rel)
        name = os.path.basename(rel)
    else:
        dir_fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY |
                         os.O_CLOEXEC)
        name = os.path.basename(path)
    try:
        try:
            st = os.lstat(name, dir_fd=dir_fd)
        except FileNotFoundError:
            raise
        check_regular(st, what)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    try:
        check_regular(os.fstat(fd), what)  # the same file that lstat saw, or refused
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str, limit: int = 1 << 20, top: Optional[str] = None) -> str:
    """read_regular() as text; '' for a file that is missing or refused."""
    try:
        return read_regular(path, limit, top).decode("utf-8", "replace")
    except (OSError, Unsafe):
        return ""


def open_private_write(path: str) -> int:
    """A descriptor to write the grader's own file @p path (created or
    truncated), refusing a link or anything not a regular file there."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC |
                 os.O_NONBLOCK, 0o644)
    try:
        check_regular(os.fstat(fd), path)
    except Unsafe:
        os.close(fd)
        raise
    return fd


def write_private(path: str, data: bytes) -> None:
    """Writes @p data to @p path once, atomically (a new file renamed over the
    old), without following any link."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(tmp, path)


def fresh_folder(path: str, owner: Optional[int] = None) -> str:
    """A new, empty folder at @p path, in a folder that sandboxed code may
    have written: whatever is there (a link, a FIFO, a folder) is removed
    without following a link, the folder is made anew (mkdir never follows
    one) and handed to @p owner without following one either."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)  # refuses a link at the top; never follows one below
        else:
            os.unlink(path)
    os.mkdir(path, 0o755)
    if owner is not None:
        os.chown(path, owner, owner, follow_symlinks=False)
    return path


def check_private_folder(path: str, what: str, create: bool = True,
                         mode: int = 0o755) -> str:
    """@p path as an absolute path, made if missing (with @p mode), after
    checking that it and every folder above it is owned by the grading user
    or root and writable by no one else (a sticky /tmp above it is fine, as
    nobody else can replace what is inside). Raises SetupProblem otherwise."""
    path = os.path.abspath(path)
    if create and not os.path.lexists(path):
        try:
            # mkdir makes a folder of ours or fails (it never follows a link
            # someone planted there); what was there already is checked below.
            os.makedirs(path, mode)
        except FileExistsError:
            pass
        except OSError as e:
            raise SetupProblem(f"{what} {path} cannot be made: {e.strerror}")
    me = os.geteuid()
    cur = path
    while True:
        try:
            st = os.lstat(cur)
        except OSError as e:
            raise SetupProblem(f"{what} {path}: {cur} cannot be read: {e.strerror}")
        if stat.S_ISLNK(st.st_mode):
            try:
                real = os.path.realpath(cur)
                rst = os.stat(real)
            except OSError as e:
                raise SetupProblem(f"{what} {path}: {cur} is a broken link: {e.strerror}")
            if st.st_uid not in (0, me) or rst.st_uid not in (0, me):
                raise SetupProblem(f"{what} {path}: {cur} is a link owned by uid {st.st_uid}")
            st = rst
        if not stat.S_ISDIR(st.st_mode):
            raise SetupProblem(f"{what} {path}: {cur} is not a folder")
        sticky = bool(st.st_mode & stat.S_ISVTX)
        if st.st_uid not in (0, me):
            raise SetupProblem(f"{what} {path}: {cur} belongs to uid {st.st_uid}, not to the "
                               f"grading user (uid {me}); another user could change what the "
                               f"grader trusts there. Use a folder of your own")
        if cur == path and st.st_mode & 0o022:
            raise SetupProblem(f"{what} {path} is writable by other users (mode "
                               f"{st.st_mode & 0o7777:04o}); make it 0755 or 0700 "
                               f"(chmod go-w), or use a folder of your own")
        if cur != path and st.st_mode & 0o022 and not sticky:
            raise SetupProblem(f"{what} {path}: the folder {cur} above it is writable by "
                               f"other users without the sticky bit")
        if cur == "/":
            break
        cur = os.path.dirname(cur)
    return path
