"""Child processes for Toll's tools: each runs in a session of its own, so that
ending it ends everything it started (an emulator's helpers, a build's
compilers), and is always reaped.

    with process.Group(cmd, stdout=subprocess.PIPE) as child:
        for fd, chunk in process.read_ready([child.proc.stdout.fileno()], 0.2):
            ...

A command that may print without end has its output copied to a file on a
thread, up to a limit (LimitedCopy), while the caller waits with a deadline:

    with process.Group(cmd, stderr=subprocess.STDOUT) as child:
        copy = process.LimitedCopy(child.proc.stdout, log, limit)
        status = child.wait(timeout)   # None: still running at the deadline
        child.stop()
        copy.join(10)
"""

import io
import os
import select
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import IO, Any, cast


class Group:
    """A command started in a new session (its own process group). Leaving the
    `with` block, or kill(), sends SIGKILL to the whole group and reaps the
    command: nothing it started outlives it."""

    def __init__(self, command: Sequence[str], stdin: int | IO[Any] | None = subprocess.DEVNULL,
                 stdout: int | IO[Any] | None = subprocess.PIPE,
                 stderr: int | IO[Any] | None = subprocess.PIPE,
                 env: dict[str, str] | None = None, cwd: str | None = None,
                 **popen: Any) -> None:
        """@p popen: further subprocess.Popen arguments (umask, user, preexec_fn...)."""
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            command, stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=cwd,
            start_new_session=True, **popen)
        self._stopped = False

    def __enter__(self) -> "Group":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit status, or None if the command still runs after @p timeout seconds."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> int:
        """Kills the group (even after the command itself exited: a child it
        left behind is in the group too) and reaps the command, leaving its
        pipes open for a reader to drain. Only the first call kills: after
        the reaping, the group's number may belong to someone else."""
        if not self._stopped:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if self.proc.poll() is None:  # left its group (setsid), or not ours to signal
                try:
                    self.proc.kill()
                except ProcessLookupError:
                    pass
            self._stopped = True
        return self.proc.wait()

    def kill(self) -> int:
        """stop(), then closes the command's pipes."""
        status = self.stop()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe:
                try:
                    pipe.close()
                except OSError:
                    pass
        return status


def read_ready(fds: list[int], timeout: float) -> list[tuple[int, bytes]]:
    """Waits up to @p timeout seconds for any of @p fds to become readable and
    returns [(fd, bytes)] for each that did; bytes is b"" at end of file."""
    if not fds:
        return []
    ready, _, _ = select.select(fds, [], [], max(0.0, timeout))
    chunks = []
    for fd in ready:
        try:
            chunks.append((fd, os.read(fd, 65536)))
        except OSError:  # a pseudo-terminal whose other side closed
            chunks.append((fd, b""))
    return chunks


class LimitedCopy:
    """Copies a pipe to a binary file on a thread of its own: the first
    @p limit bytes are written, the rest are read, counted and dropped, so a
    command that prints without end neither blocks on a full pipe nor fills
    the disk. Ends at end of file, or when the pipe is closed under it."""

    def __init__(self, pipe: IO[bytes], sink: IO[bytes], limit: int) -> None:
        self.total = 0  # bytes read, kept or not
        self.kept = 0   # bytes written to the sink
        self._thread = threading.Thread(target=self._copy, args=(pipe, sink, limit), daemon=True)
        self._thread.start()

    @property
    def truncated(self) -> bool:
        return self.total > self.kept

    def join(self, timeout: float | None = None) -> bool:
        """True when the copy has ended (within @p timeout seconds)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _copy(self, pipe: IO[bytes], sink: IO[bytes], limit: int) -> None:
        reader = cast(io.BufferedIOBase, pipe)  # what Popen makes of a pipe: it has read1
        try:
            while True:
                chunk = reader.read1(65536)
                if not chunk:
                    break
                room = max(0, limit - self.kept)
                if room:
                    sink.write(chunk[:room])
                    self.kept += min(room, len(chunk))
                self.total += len(chunk)
        except (OSError, ValueError):  # the pipe was closed under the read
            pass
