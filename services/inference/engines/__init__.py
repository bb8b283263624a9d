"""Engine registry: settings tag -> engine class (imported lazily: vllm/torch are heavy)."""

from __future__ import annotations

import importlib

from services.inference.engines.base import Chunk, Engine, EngineStats
from services.inference.settings import HfEngineSettings, VllmEngineSettings

__all__ = ["ENGINES", "Chunk", "Engine", "EngineStats", "build_engine"]

ENGINES: dict[str, str] = {
    "vllm": "services.inference.engines.vllm_engine:VllmEngine",
    "hf": "services.inference.engines.hf_engine:HfEngine",
}


def build_engine(
    settings: VllmEngineSettings | HfEngineSettings, model_path: str, version: int
) -> Engine:
    """Construct (not start) the engine the settings name."""
    module_name, _, cls_name = ENGINES[settings.type].partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    return cls(settings, model_path, version)
