"""Fixtures of the api unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_unit_helpers import Api, make_api


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    yield from make_api(tmp_path / "home")
