"""Helpers for the inference tests: the service served by uvicorn in a background thread
(real HTTP, so the official `openai` client and streaming work unchanged)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from support.procs import free_port, serve_app

from services.inference.app import create_app
from services.inference.settings import HfEngineSettings, InferenceSettings


@contextlib.contextmanager
def serve(settings: InferenceSettings, ready_timeout: float = 120.0) -> Iterator[str]:
    """Run the app under uvicorn in a thread until the block ends; yields its base URL."""
    with serve_app(create_app(settings), settings.port, ready_timeout) as url:
        yield url


def hf_settings(model: Path, **engine: object) -> InferenceSettings:
    return InferenceSettings(
        model=str(model),
        served_model_name="tiny",
        port=free_port(),
        engine=HfEngineSettings(dtype="float32", max_model_len=1024, **engine),
    )
