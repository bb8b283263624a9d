"""Fixtures of the inference unit tests (helpers live in inference_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from inference_helpers import hf_settings, serve


@pytest.fixture(scope="module")
def hf_service(tiny_model_path: Path) -> Iterator[str]:
    with serve(hf_settings(tiny_model_path)) as url:
        yield url
