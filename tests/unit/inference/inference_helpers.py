"""Helpers for the inference tests: the service served by uvicorn in a background thread
(real HTTP, so the official `openai` client and streaming work unchanged)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import uvicorn

from services.inference.app import create_app
from services.inference.settings import HfEngineSettings, InferenceSettings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve(settings: InferenceSettings, ready_timeout: float = 120.0) -> Iterator[str]:
    """Run the app under uvicorn in a thread until the block ends; yields its base URL."""
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=settings.port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{settings.port}"
    try:
        wait_ready(url, ready_timeout)
        yield url
    finally:
        server.should_exit = True
        thread.join(30)


def wait_ready(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        time.sleep(0.1)
    raise TimeoutError(f"{url} not ready after {timeout}s")


def hf_settings(model: Path, **engine: object) -> InferenceSettings:
    return InferenceSettings(
        model=str(model),
        served_model_name="tiny",
        port=free_port(),
        engine=HfEngineSettings(dtype="float32", max_model_len=1024, **engine),
    )
