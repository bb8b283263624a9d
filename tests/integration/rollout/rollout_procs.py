"""Real services as processes for the rollout integration tests: an inference replica
(hf engine) and an environment server (arithmetic). Only processes started here are
stopped here, by pid."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{url} not ready after {timeout}s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextlib.contextmanager
def service(module: str, env: dict[str, str], log: Path, timeout: float = 120
            ) -> Iterator[str]:
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, "--port", str(port)],
            cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, log, timeout)
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
