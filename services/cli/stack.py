"""Start, stop and inspect the local stack: each service a process on 127.0.0.1 with its
log in `$SLIPSTREAM_HOME/logs/<service>.log` and its pid in `$SLIPSTREAM_HOME/run/`."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from services.common.paths import logs_dir, run_dir
from services.common.topology import SERVICES, ServiceEntry

log = logging.getLogger(__name__)


@dataclass
class ServiceState:
    entry: ServiceEntry
    pid: int | None
    alive: bool
    healthy: bool
    ready: bool

    @property
    def url(self) -> str:
        return self.entry.url


def _pid_file(name: str) -> Path:
    return run_dir() / f"{name}.pid"


def _read_pid(name: str) -> int | None:
    try:
        return int(_pid_file(name).read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); reap it if it is ours.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def _probe(url: str, path: str) -> bool:
    try:
        return httpx.get(url + path, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def state(entry: ServiceEntry) -> ServiceState:
    pid = _read_pid(entry.name)
    url = f"http://127.0.0.1:{entry.port}"
    healthy = _probe(url, "/healthz")
    return ServiceState(entry, pid, _alive(pid), healthy, healthy and _probe(url, "/readyz"))


def start_service(entry: ServiceEntry, env: Mapping[str, str]) -> int:
    """Start one service detached from our terminal, in its own process group."""
    logs_dir().mkdir(parents=True, exist_ok=True)
    run_dir().mkdir(parents=True, exist_ok=True)
    log_path = logs_dir() / f"{entry.name}.log"
    with open(log_path, "ab") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", entry.module, "--host", "127.0.0.1", "--port", str(entry.port)],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
            start_new_session=True,
        )
    _pid_file(entry.name).write_text(str(proc.pid))
    return proc.pid


def wait_healthy(entries: Iterable[ServiceEntry], timeout_s: float, path: str) -> list[str]:
    """Wait until every service answers `path` with 200; returns those that never did."""
    waiting = {e.name: e for e in entries}
    deadline = time.monotonic() + timeout_s
    while waiting and time.monotonic() < deadline:
        for name, entry in list(waiting.items()):
            if _probe(f"http://127.0.0.1:{entry.port}", path):
                del waiting[name]
            elif not _alive(_read_pid(name)):
                return [name, *(n for n in waiting if n != name)]
        time.sleep(0.25)
    return list(waiting)


def stop_service(name: str, grace_s: float = 10.0) -> bool:
    """SIGTERM the service's process group, SIGKILL after `grace_s`. True if it was up."""
    pid = _read_pid(name)
    _pid_file(name).unlink(missing_ok=True)
    if not _alive(pid):
        return False
    assert pid is not None
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    # The group may hold children (engine workers) even after the leader exits.
    _signal_group(pid, signal.SIGKILL)
    return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def select(names: Iterable[str] | None) -> list[ServiceEntry]:
    wanted = set(names or [])
    unknown = wanted - {e.name for e in SERVICES}
    if unknown:
        known = ", ".join(e.name for e in SERVICES)
        raise ValueError(f"unknown service(s) {sorted(unknown)}; known: {known}")
    return [e for e in SERVICES if not wanted or e.name in wanted]


def log_tail(name: str, lines: int = 20) -> str:
    path = logs_dir() / f"{name}.log"
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
