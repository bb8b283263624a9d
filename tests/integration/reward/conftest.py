"""Fixtures: a scripted OpenAI-format judge server, and the reward service on uvicorn."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from judge_server import JudgeServer, running_judge
from support.procs import free_port

from services.reward.app import create_app
from services.reward.registry import build_registry
from services.reward.settings import RewardSettings


@pytest.fixture(scope="module")
def judge() -> Iterator[JudgeServer]:
    with running_judge() as server:
        yield server


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reward-data")


@pytest.fixture(scope="module")
def reward_url(judge: JudgeServer, data_dir: Path) -> Iterator[str]:
    """The reward service with its default verifiers, on a real port."""
    settings = RewardSettings(
        port=free_port(),
        data_dir=str(data_dir),
        judge_url=judge.url,
        judge_model="tiny",
        judge_max_attempts=2,
        timeouts={"llm_judge": 2.0},
    )
    app = create_app(settings, build_registry(settings))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=settings.port, log_config=None)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("reward service did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{settings.port}"
    server.should_exit = True
    thread.join(timeout=10)
