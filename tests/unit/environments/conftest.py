"""Fixtures for the environment unit tests: one data dir per test session (task sets,
databases and indexes are built there from the real packaged data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from environments.base import EnvContext


@pytest.fixture(scope="session")
def env_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("env-data")


@pytest.fixture(scope="session")
def env_ctx(env_data_dir: Path) -> EnvContext:
    return EnvContext(data_dir=env_data_dir)
