"""Real services as processes for the rollout integration tests: an inference replica
(hf engine) and an environment server (arithmetic). Only processes started here are
stopped here, by pid."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from support.procs import ROOT, free_port, start_module, stop, wait_ready

__all__ = ["ROOT", "environments_env", "inference_env", "service"]


@contextlib.contextmanager
def service(module: str, env: dict[str, str], log: Path, timeout: float = 120
            ) -> Iterator[str]:
    port = free_port()
    proc = start_module(module, port, env, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, timeout, proc, log)
        yield url
    finally:
        stop(proc)


def inference_env(model: Path) -> dict[str, str]:
    return {
        "HF_HUB_OFFLINE": "1",
        "SLIPSTREAM_INFERENCE_MODEL": str(model),
        "SLIPSTREAM_INFERENCE_ENGINE__TYPE": "hf",
        "SLIPSTREAM_INFERENCE_ENGINE__DTYPE": "float32",
        "SLIPSTREAM_INFERENCE_ENGINE__MAX_MODEL_LEN": "2048",
        "SLIPSTREAM_INFERENCE_ENGINE__THREADS": "1",
        "SLIPSTREAM_INFERENCE_LOG_LEVEL": "WARNING",
    }


def environments_env() -> dict[str, str]:
    return {"SLIPSTREAM_ENVIRONMENTS_ENVS": '["arithmetic"]',
            "SLIPSTREAM_ENVIRONMENTS_LOG_LEVEL": "WARNING"}
