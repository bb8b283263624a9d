"""A real environment server serving `web` (uvicorn on a free port, in a thread)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.procs import free_port, serve_app

from environments.app import create_app
from environments.settings import EnvironmentsSettings


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    settings = EnvironmentsSettings(
        envs=["web"],
        port=port,
        data_dir=Path(tmp_path_factory.mktemp("web-env-data")),
        step_timeout_s=30,
        reset_timeout_s=60,
        mcp=False,
    )
    with serve_app(create_app(settings), port, timeout=120) as url:
        yield url
