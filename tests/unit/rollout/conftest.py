from __future__ import annotations

from pathlib import Path

import pytest

from services.rollout.chat import ChatTokenizer


@pytest.fixture(scope="session")
def chat(tiny_model_path: Path) -> ChatTokenizer:
    return ChatTokenizer.from_pretrained(str(tiny_model_path))
