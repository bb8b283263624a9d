"""Spawn one launcher chain, capture capped output, enforce the wall clock, reap.

Uses `subprocess.Popen` without a preexec function (so CPython may vfork, cheap even from
a large server process, and no Python code runs in the child), `close_fds=True` (a
concurrent execution never inherits another one's code, input or tests, nor any
descriptor the server inherited) and a pidfd to learn of the exit without polling. We
reap with `wait4` ourselves to get the tree's resource usage.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

DRAIN_GRACE_S = 0.5  # after exit, how long to wait for pipe EOF before giving up

KillTree = Callable[[int, bool], None]  # (launcher pid, final) -> None


@dataclass
class Capture:
    """Bytes read from one pipe, cut at `cap`."""

    cap: int
    data: bytearray = field(default_factory=bytearray)
    truncated: bool = False

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if len(chunk) > room:
            self.truncated = True
            chunk = chunk[: max(room, 0)]
        self.data += chunk

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass
class Outcome:
    """How the process tree ended."""

    wait_status: int | None
    rusage: object | None
    timed_out: bool
    stdout: Capture
    stderr: Capture
    wall_time_s: float

    @property
    def exit_code(self) -> int | None:
        """Exit code, or minus the signal number; None when never reaped."""
        if self.wait_status is None:
            return None
        return os.waitstatus_to_exitcode(self.wait_status)


def memfd_with(name: str, data: bytes) -> int:
    """A close-on-exec in-memory file holding `data`, positioned at its start."""
    fd = _high(os.memfd_create(name, os.MFD_CLOEXEC))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _high(fd: int) -> int:
    """Move a descriptor to >= 3 so it never collides with the child's stdio slots."""
    if fd >= 3:
        return fd
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return new


def _pipe() -> tuple[int, int]:
    r, w = os.pipe()
    return _high(r), _high(w)


def _read_into(fd: int, capture: Capture) -> bool:
    """Read what is available; False at EOF."""
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return True
    if not chunk:
        return False
    capture.feed(chunk)
    return True


def spawn_and_collect(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    stdin_fd: int,
    pass_fds: Sequence[int],
    wall_time_s: float,
    max_output_bytes: int,
    kill_tree: KillTree,
) -> Outcome:
    """Run `argv` in a new session with `stdin_fd` as stdin, `pass_fds` kept at their
    numbers and every other descriptor closed; kill the tree at the wall clock; reap it
    with its resource usage."""
    out_r, out_w = _pipe()
    err_r, err_w = _pipe()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv), env=env, stdin=stdin_fd, stdout=out_w, stderr=err_w,
            pass_fds=tuple(pass_fds), close_fds=True, start_new_session=True,
        )  # fmt: skip
    except BaseException:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        raise
    os.close(out_w)
    os.close(err_w)
    stdout, stderr = Capture(max_output_bytes), Capture(max_output_bytes)
    try:
        timed_out = _pump(proc.pid, {out_r: stdout, err_r: stderr}, start + wall_time_s, kill_tree)
        _, status, rusage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    finally:
        os.close(out_r)
        os.close(err_r)
    return Outcome(status, rusage, timed_out, stdout, stderr, time.monotonic() - start)


def _pump(pid: int, pipes: dict[int, Capture], deadline: float, kill_tree: KillTree) -> bool:
    """Read the pipes until the process exits and they close; kill at the deadline.
    Anything still alive once the main process has exited is a leftover and is killed.
    Returns True when the wall clock ran out.

    At the deadline the tree is killed from the inside (`final=False`) so the launcher
    reaps its own children and exits by itself; it is killed too (`final=True`) only if
    it has not exited after a grace period."""
    pidfd = os.pidfd_open(pid)
    sel = selectors.DefaultSelector()
    try:
        for fd in pipes:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        sel.register(pidfd, selectors.EVENT_READ)
        open_pipes, exited, timed_out = set(pipes), False, False
        while open_pipes or not exited:
            now = time.monotonic()
            if now >= deadline:
                if exited or timed_out:  # grace over: stop waiting
                    kill_tree(pid, True)
                    break
                timed_out = True
                kill_tree(pid, False)
                deadline = now + DRAIN_GRACE_S
                continue
            for key, _ in sel.select(deadline - now):
                if key.fd == pidfd:
                    exited = True
                    sel.unregister(pidfd)
                    kill_tree(pid, True)
                    deadline = min(deadline, time.monotonic() + DRAIN_GRACE_S)
                elif not _read_into(key.fd, pipes[key.fd]):
                    sel.unregister(key.fd)
                    open_pipes.discard(key.fd)
        return timed_out
    finally:
        sel.close()
        os.close(pidfd)


def children_of(pid: int) -> list[int]:
    """Direct children of `pid` (from /proc/<pid>/task/*/children)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"{task.path}/children") as f:
                found += [int(x) for x in f.read().split()]
    return found


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
