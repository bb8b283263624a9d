"""A real environment server (uvicorn on a free port, in a thread) over the real data."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.procs import free_port, serve_app

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


@pytest.fixture(scope="session")
def env_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    registry.register("slow-test", SlowEnv, replace=True)
    port = free_port()
    settings = EnvironmentsSettings(
        envs=["arithmetic", "search", "sql", "slow-test"],
        port=port,
        data_dir=Path(tmp_path_factory.mktemp("env-server-data")),
        max_sessions=40,
        step_timeout_s=1.0,
    )
    # ready = every environment loaded
    with serve_app(create_app(settings), port, timeout=120) as url:
        yield Server(url, settings)
    registry.unregister("slow-test")
