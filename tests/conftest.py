"""Fixtures shared by every test suite. Keep this file light: no vllm, no torch at import."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")


@pytest.fixture(scope="session")
def tiny_model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local HF folder of the seeded tiny random-weight model (SmolLM2 tokenizer,
    head_dim 64, fp32). Reuses the default cache when it is already prepared there;
    otherwise builds it once per session into a temp cache (about 10 s)."""
    from services.inference.models import (
        TINY_RANDOM,
        default_cache_dir,
        is_prepared,
        prepare_model,
    )

    cached = default_cache_dir() / TINY_RANDOM
    if is_prepared(cached):
        return cached
    return prepare_model(TINY_RANDOM, cache_dir=tmp_path_factory.mktemp("models"))
