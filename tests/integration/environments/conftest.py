"""A real environment server (uvicorn on a free port, in a thread) over the real data."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from environments import registry
from environments.app import create_app
from environments.base import EnvContext, Environment
from environments.settings import EnvironmentsSettings
from environments.tasks import Task, TaskSet
from environments.tools import tool


class SlowEnv(Environment):
    """A test-only environment whose tool sleeps: exercises the server's call timeout."""

    name = "slow-test"
    task_type = "exact_match"

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        task = Task(task_id="slow-0", task_type="exact_match", prompt="wait", answer="x")
        return TaskSet(cls.name, name, "1", seed, [task])

    @tool("Sleep for some seconds.")
    def sleep(self, seconds: float) -> str:
        time.sleep(seconds)
        return "awake"


@dataclass
class Server:
    url: str
    settings: EnvironmentsSettings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def env_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    registry.register("slow-test", SlowEnv, replace=True)
    port = _free_port()
    settings = EnvironmentsSettings(
        envs=["arithmetic", "search", "sql", "slow-test"],
        port=port,
        data_dir=Path(tmp_path_factory.mktemp("env-server-data")),
        max_sessions=40,
        step_timeout_s=1.0,
    )
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    import httpx

    url = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline:  # ready = every environment loaded
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    else:
        server.should_exit = True
        raise RuntimeError("environment server did not become ready")
    yield Server(url, settings)
    server.should_exit = True
    thread.join(timeout=30)
    registry.unregister("slow-test")
