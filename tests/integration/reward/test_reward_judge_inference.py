"""llm_judge against the real inference service (hf engine, tiny random-weight model).

A random-weight model cannot follow the rubric: every verdict is unparseable, so the item
must come back as a recorded failure after the bounded attempts, never as a 0 reward."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest
from support.procs import free_port, serve_app

from services.common.wire import Message, ScoreItem
from services.reward.app import create_app as reward_app
from services.reward.client import RewardClient
from services.reward.registry import build_registry
from services.reward.settings import RewardSettings

inference_app = pytest.importorskip("services.inference.app")
inference_settings = pytest.importorskip("services.inference.settings")
pytest.importorskip("transformers")


def _serve(app: object, port: int, ready_timeout: float = 120.0) -> AbstractContextManager[str]:
    """The app on uvicorn with uvicorn's own logging left alone (no log config, no level)."""
    return serve_app(app, port, ready_timeout, log_config=None, log_level=None)


@pytest.fixture(scope="module")
def inference_url(tiny_model_path: Path) -> Iterator[str]:
    settings = inference_settings.InferenceSettings(
        model=str(tiny_model_path),
        served_model_name="tiny",
        port=free_port(),
        engine=inference_settings.HfEngineSettings(dtype="float32", max_model_len=1024),
    )
    with _serve(inference_app.create_app(settings), settings.port) as url:
        yield url


def test_random_model_verdicts_are_recorded_failures(inference_url: str, data_dir: Path) -> None:
    settings = RewardSettings(
        port=free_port(),
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
