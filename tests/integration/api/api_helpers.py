"""Helpers for the api integration tests: a real `python -m services.api` server, real
databases, the fake learner/worker scripts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from support.procs import free_port

from services.api import procs

SCRIPTS = Path(__file__).parent / "scripts"
REPO = Path(__file__).resolve().parents[3]


def learner_cmd(*extra: str) -> list[str]:
    return ["{python}", str(SCRIPTS / "fake_learner.py"), "--runtime", "{runtime}", *extra]


def worker_cmd(*extra: str) -> list[str]:
    return ["{python}", str(SCRIPTS / "fake_worker.py"), "--runtime", "{runtime}", *extra]


def runner_config(learner: list[str], worker: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "type": "local",
        "learner_command": learner,
        "worker_command": worker,
        "poll_interval_s": 0.1,
        "stop_grace_s": 2.0,
        **extra,
    }


def spec(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "test-job",
        "environments": [{"name": "arithmetic"}],
        "group_size": 2,
        "batch_size": 4,
        "resources": {"rollout_workers": 2},
    }
    body.update(overrides)
    return body


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise TimeoutError(f"condition not met within {timeout} s")


def read_pids(run_dir: Path) -> dict[str, int]:
    """Every pid the fake processes recorded in their run dir."""
    return {p.stem: int(p.read_text()) for p in run_dir.glob("*.pid") if p.read_text()}


def all_gone(pids: dict[str, int]) -> bool:
    return not any(procs.pid_alive(pid) for pid in pids.values())


class ApiServer:
    """`python -m services.api` in its own process group, configured by env vars."""

    def __init__(self, home: Path, database_url: str, runner: dict[str, Any]) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SLIPSTREAM_HOME": str(home),
            "SLIPSTREAM_API_PORT": str(self.port),
            "SLIPSTREAM_API_DATABASE_URL": database_url,
            "SLIPSTREAM_API_RUNNER": json.dumps(runner),
            "SLIPSTREAM_API_LOG_LEVEL": "INFO",
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = home / "api.log"

    @property
    def token(self) -> str:
        return (self.home / "token").read_text().strip()

    def start(self, timeout: float = 60.0) -> ApiServer:
        self.home.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "services.api"],
                cwd=REPO,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            wait_for(self._ready, timeout)
        except TimeoutError:
            self.kill()
            raise RuntimeError(f"api did not start:\n{self.log.read_text()[-3000:]}") from None
        return self

    def _ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"api exited:\n{self.log.read_text()[-3000:]}")
        try:
            return httpx.get(self.url + "/readyz", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        """Graceful: SIGTERM (uvicorn runs the lifespan shutdown)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)

    def kill(self) -> None:
        """A crash: SIGKILL the API process only (its jobs' processes live on)."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
