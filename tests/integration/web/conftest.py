"""A real environment server serving `web` (uvicorn on a free port, in a thread)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from environments.app import create_app
from environments.settings import EnvironmentsSettings


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = EnvironmentsSettings(
        envs=["web"],
        port=port,
        data_dir=Path(tmp_path_factory.mktemp("web-env-data")),
        step_timeout_s=30,
        reset_timeout_s=60,
        mcp=False,
    )
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    else:
        server.should_exit = True
        raise RuntimeError("web environment server did not become ready")
    yield url
    server.should_exit = True
    thread.join(timeout=30)
