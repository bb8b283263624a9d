"""Small Linux process helpers: process groups, pid identity, finding a job's processes.

Every job process is started in its own session (so its own process group, pgid == pid)
with `SLIPSTREAM_JOB_ID=<job id>` in its environment; that marker is how a restarted API
finds the leftovers of a job it no longer supervises, without trusting a recycled pid.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

JOB_ID_ENV = "SLIPSTREAM_JOB_ID"
PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()  # fields from 'state' (field 3) on


def start_time(pid: int) -> float | None:
    """Kernel start time of `pid` in clock ticks since boot (None if it is gone)."""
    fields = _stat_fields(pid)
    return float(fields[19]) if fields else None


def is_zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] == "Z"


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is left in the process group. Zombies do not
    count: an orphan that was killed may wait a while for init to reap it."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not PROC.exists():
        return True
    return bool(group_members(pgid))


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) pids whose process group is `pgid`."""
    members = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields and int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def pid_alive(pid: int) -> bool:
    """Whether `pid` is a live process (zombies count as gone)."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] != "Z"


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def job_pids(job_id: str) -> list[int]:
    """Pids of live processes carrying `SLIPSTREAM_JOB_ID=job_id` (readable ones only)."""
    marker = f"{JOB_ID_ENV}={job_id}".encode()
    found = []
    for entry in PROC.iterdir() if PROC.exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0") and not is_zombie(int(entry.name)):
            found.append(int(entry.name))
    return found


def process_group(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[2]) if fields else None


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def tail_lines(path: Path, n: int, max_bytes: int = 64_000) -> list[str]:
    """The last `n` lines of a text file (reads at most `max_bytes` from its end)."""
    if n <= 0:
        return []
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except OSError:
        return []
    return data.decode(errors="replace").splitlines()[-n:]
