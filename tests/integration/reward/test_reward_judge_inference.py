"""llm_judge against the real inference service (hf engine, tiny random-weight model).

A random-weight model cannot follow the rubric: every verdict is unparseable, so the item
must come back as a recorded failure after the bounded attempts, never as a 0 reward."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from services.common.wire import Message, ScoreItem
from services.reward.app import create_app as reward_app
from services.reward.client import RewardClient
from services.reward.registry import build_registry
from services.reward.settings import RewardSettings

inference_app = pytest.importorskip("services.inference.app")
inference_settings = pytest.importorskip("services.inference.settings")
pytest.importorskip("transformers")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _serve(app: object, port: int, ready_timeout: float = 120.0) -> Iterator[str]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} not ready after {ready_timeout}s")
            time.sleep(0.1)
        yield url
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def inference_url(tiny_model_path: Path) -> Iterator[str]:
    settings = inference_settings.InferenceSettings(
        model=str(tiny_model_path),
        served_model_name="tiny",
        port=_free_port(),
        engine=inference_settings.HfEngineSettings(dtype="float32", max_model_len=1024),
    )
    with _serve(inference_app.create_app(settings), settings.port) as url:
        yield url


def test_random_model_verdicts_are_recorded_failures(inference_url: str, data_dir: Path) -> None:
    settings = RewardSettings(
        port=_free_port(),
        data_dir=str(data_dir),
        judge_url=inference_url,  # judge_model left empty: whatever the service serves
        judge_max_attempts=2,
        judge_max_tokens=12,
    )
    item = ScoreItem(
        env="nowhere",
        task_id="free-form",
        task_type="llm_judge",
        messages=[
            Message(role="user", content="Name a primary colour."),
            Message(role="assistant", content="Red"),
        ],
    )
    with (
        _serve(reward_app(settings, build_registry(settings)), settings.port) as url,
        RewardClient(url) as client,
    ):
        [result] = client.score([item])
        metrics = httpx.get(f"{url}/metrics").text
    assert result.ok is False and result.verifier == "llm_judge"
    assert result.error is not None
    assert "attempt 1: unparseable verdict" in result.error
    assert "attempt 2: unparseable verdict" in result.error
    assert 'verifier_scores_total{outcome="error",verifier="llm_judge"} 1.0' in metrics
