"""Child processes for Toll's tools: each runs in a session of its own, so that
ending it ends everything it started (an emulator's helpers, a build's
compilers), and is always reaped.

    with process.Group(cmd, stdout=subprocess.PIPE) as child:
        for fd, chunk in process.read_ready([child.proc.stdout.fileno()], 0.2):
            ...
"""

import os
import select
import signal
import subprocess


class Group:
    """A command started in a new session (its own process group). Leaving the
    `with` block, or kill(), sends SIGKILL to the whole group and reaps the
    command: nothing it started outlives it."""

    def __init__(self, command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, env=None, cwd=None):
        self.proc = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=stderr,
                                     env=env, cwd=cwd, start_new_session=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()

    @property
    def pid(self):
        return self.proc.pid

    def poll(self):
        return self.proc.poll()

    def wait(self, timeout=None):
        """The exit status, or None if the command still runs after @p timeout seconds."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        """Kills the group (even after the command itself exited: a child it
        left behind is in the group too) and reaps the command."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        status = self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe:
                try:
                    pipe.close()
                except OSError:
                    pass
        return status


def read_ready(fds, timeout):
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
