"""Launchers start one job process and hand back a handle the runner supervises.

`LocalLauncher`: a subprocess in its own session/process group, output to its log file.
`RayLauncher`: the same subprocess, but inside a Ray actor placed by the Ray scheduler
(`ray` is imported only when this launcher is built).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from services.api import procs
from services.api.schemas import ProcessInfo
from services.api.settings import RayRunnerSettings

MAX_LINE_CHARS = 2000


@dataclass
class LaunchRequest:
    role: Literal["learner", "worker"]
    index: int
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    runtime_path: Path
    runtime_json: str
    cwd: str | None = None

    @property
    def label(self) -> str:
        return "learner" if self.role == "learner" else f"worker-{self.index}"


@dataclass
class LogCursor:
    """Incremental reader of a growing log file: whole new lines, bounded per call."""

    path: Path
    offset: int = 0
    partial: bytes = b""
    skipped: int = field(default=0)

    def read(self, max_lines: int, max_bytes: int = 256_000) -> list[str]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read(max_bytes)
        except OSError:
            return []
        self.offset += len(data)
        data = self.partial + data
        *complete, self.partial = data.split(b"\n")
        lines = [c.decode(errors="replace")[:MAX_LINE_CHARS] for c in complete]
        if len(lines) > max_lines:
            self.skipped += len(lines) - max_lines
            lines = [*lines[:max_lines], f"... ({len(lines) - max_lines} lines not forwarded)"]
        return lines


def write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def spawn(request: LaunchRequest) -> subprocess.Popen[bytes]:
    """Write the runtime file and start the process in a new session, logging to file."""
    write_private(request.runtime_path, request.runtime_json)
    request.log_path.parent.mkdir(parents=True, exist_ok=True)
    with request.log_path.open("ab") as log:
        return subprocess.Popen(
            request.argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **request.env},
            cwd=request.cwd,
            start_new_session=True,
        )


class ProcessHandle(ABC):
    """One job process under supervision."""

    info: ProcessInfo
    label: str

    @abstractmethod
    def poll(self) -> int | None:
        """Exit status once exited (reaping it), else None."""

    @abstractmethod
    def signal(self, sig: signal.Signals) -> None:
        """Send `sig` to the process's whole group."""

    @abstractmethod
    def group_alive(self) -> bool:
        """Whether anything of the process group is still running."""

    @abstractmethod
    def new_lines(self, max_lines: int) -> list[str]:
        """Log lines written since the last call (bounded)."""

    @abstractmethod
    def tail(self, n: int) -> list[str]:
        """The last `n` lines of the log."""


class Launcher(ABC):
    @abstractmethod
    def launch(self, request: LaunchRequest) -> ProcessHandle: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release launcher resources (Ray connection)."""


class LocalHandle(ProcessHandle):
    def __init__(self, request: LaunchRequest) -> None:
        self.label = request.label
        self.proc = spawn(request)
        self.cursor = LogCursor(request.log_path)
        self.info = ProcessInfo(
            role=request.role,
            index=request.index,
            pid=self.proc.pid,
            start_time=procs.start_time(self.proc.pid),
            log=str(request.log_path),
        )

    def poll(self) -> int | None:
        code = self.proc.poll()
        self.info.returncode = code
        return code

    def signal(self, sig: signal.Signals) -> None:
        procs.signal_group(self.proc.pid, sig)

    def group_alive(self) -> bool:
        self.poll()  # reap the leader so a zombie does not count
        return procs.group_alive(self.proc.pid)

    def new_lines(self, max_lines: int) -> list[str]:
        return self.cursor.read(max_lines)

    def tail(self, n: int) -> list[str]:
        return procs.tail_lines(self.cursor.path, n)


class LocalLauncher(Launcher):
    def launch(self, request: LaunchRequest) -> ProcessHandle:
        return LocalHandle(request)


class _ProcessActorBody:
    """Runs inside a Ray actor: owns one subprocess on the actor's node."""

    def __init__(self, request: LaunchRequest) -> None:
        self.handle = LocalHandle(request)

    def info(self) -> dict[str, Any]:
        return self.handle.info.model_dump(mode="json")

    def poll(self) -> int | None:
        return self.handle.poll()

    def signal(self, sig: int) -> None:
        self.handle.signal(signal.Signals(sig))

    def group_alive(self) -> bool:
        return self.handle.group_alive()

    def new_lines(self, max_lines: int) -> list[str]:
        return self.handle.new_lines(max_lines)

    def tail(self, n: int) -> list[str]:
        return self.handle.tail(n)


class RayHandle(ProcessHandle):
    TIMEOUT_S = 30.0

    def __init__(self, ray: Any, actor: Any, label: str) -> None:
        self.ray, self.actor, self.label = ray, actor, label
        self.info = ProcessInfo.model_validate(self._call("info"))

    def _call(self, method: str, *args: Any) -> Any:
        ref = getattr(self.actor, method).remote(*args)
        return self.ray.get(ref, timeout=self.TIMEOUT_S)

    def poll(self) -> int | None:
        try:
            code = self._call("poll")
        except self.ray.exceptions.RayActorError:
            code = -int(signal.SIGKILL)  # the actor (and its node) is gone
        self.info.returncode = code
        return code

    def signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(self.ray.exceptions.RayActorError):
            self._call("signal", int(sig))

    def group_alive(self) -> bool:
        try:
            alive = bool(self._call("group_alive"))
        except self.ray.exceptions.RayActorError:
            return False
        if not alive:
            self.ray.kill(self.actor)
        return alive

    def new_lines(self, max_lines: int) -> list[str]:
        try:
            return list(self._call("new_lines", max_lines))
        except self.ray.exceptions.RayActorError:
            return []

    def tail(self, n: int) -> list[str]:
        try:
            return list(self._call("tail", n))
        except self.ray.exceptions.RayActorError:
            return ["(ray actor lost: no log available)"]


class RayLauncher(Launcher):
    def __init__(self, settings: RayRunnerSettings) -> None:
        try:
            import ray
        except ImportError as exc:
            raise RuntimeError("runner.type=ray needs Ray: pip install 'slipstream[ray]'") from exc
        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=settings.address, ignore_reinit_error=True)
        self.actor_cls = ray.remote(num_cpus=settings.num_cpus_per_process)(_ProcessActorBody)

    def launch(self, request: LaunchRequest) -> ProcessHandle:
        actor = self.actor_cls.remote(request)
        return RayHandle(self.ray, actor, request.label)

    def close(self) -> None:
        self.ray.shutdown()


def make_launcher(settings: Any) -> Launcher:
    if isinstance(settings, RayRunnerSettings):
        return RayLauncher(settings)
    return LocalLauncher()


def stop_handles(handles: list[ProcessHandle], grace_s: float) -> None:
    """SIGTERM every process group, wait up to `grace_s`, then SIGKILL what is left and
    wait until every group is empty."""
    for handle in handles:
        if handle.group_alive():
            handle.signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(h.group_alive() for h in handles):
        time.sleep(0.05)
    for handle in handles:
        if handle.group_alive():
            handle.signal(signal.SIGKILL)
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and any(h.group_alive() for h in handles):
        time.sleep(0.05)
    for handle in handles:
        handle.poll()
