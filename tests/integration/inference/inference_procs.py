"""Start inference replicas as real processes (`python -m services.inference`) for the
router tests, and stop them (only the ones we started, by pid)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from support.procs import Proc, free_port, serve_app, start_module, stop, wait_ready

__all__ = ["HF_ENGINE", "free_port", "replicas", "serve_app", "start_replica", "stop",
           "wait_ready"]

HF_ENGINE = {"TYPE": "hf", "DTYPE": "float32", "MAX_MODEL_LEN": "1024", "THREADS": "1"}


def start_replica(model: Path, port: int, log: Path, engine: dict[str, str] | None = None
                  ) -> Proc:
    """`python -m services.inference` on `port`; `engine` maps ENGINE__<KEY> settings."""
    env = {
        "HF_HUB_OFFLINE": "1",
        "SLIPSTREAM_INFERENCE_MODEL": str(model),
        "SLIPSTREAM_INFERENCE_SERVED_MODEL_NAME": "tiny",
        "SLIPSTREAM_INFERENCE_LOG_LEVEL": "WARNING",
    }
    for key, value in (engine or HF_ENGINE).items():
        env[f"SLIPSTREAM_INFERENCE_ENGINE__{key}"] = value
    return start_module("services.inference", port, env, log)


@contextlib.contextmanager
def replicas(model: Path, n: int, logs: Path) -> Iterator[list[tuple[str, Proc]]]:
    started: list[tuple[str, Proc]] = []
    try:
        for i in range(n):
            port = free_port()
            started.append((f"http://127.0.0.1:{port}",
                            start_replica(model, port, logs / f"replica{i}.log")))
        for url, proc in started:
            wait_ready(url, proc=proc)
        yield started
    finally:
        for _, proc in started:
            stop(proc)
