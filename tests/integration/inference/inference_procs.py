"""Start inference replicas as real processes (`python -m services.inference`) for the
router tests, and stop them (only the ones we started, by pid)."""

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

Proc = subprocess.Popen[bytes]
ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


HF_ENGINE = {"TYPE": "hf", "DTYPE": "float32", "MAX_MODEL_LEN": "1024", "THREADS": "1"}


def start_replica(model: Path, port: int, log: Path, engine: dict[str, str] | None = None
                  ) -> subprocess.Popen[bytes]:
    """`python -m services.inference` on `port`; `engine` maps ENGINE__<KEY> settings."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "SLIPSTREAM_INFERENCE_MODEL": str(model),
        "SLIPSTREAM_INFERENCE_SERVED_MODEL_NAME": "tiny",
        "SLIPSTREAM_INFERENCE_LOG_LEVEL": "WARNING",
    }
    for key, value in (engine or HF_ENGINE).items():
        env[f"SLIPSTREAM_INFERENCE_ENGINE__{key}"] = value
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "services.inference", "--port", str(port)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )


def wait_ready(url: str, timeout: float = 120.0, proc: subprocess.Popen[bytes] | None = None
               ) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url} exited with {proc.returncode}")
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


@contextlib.contextmanager
def serve_app(app: object, port: int) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a background thread; yields its base URL."""
    import threading

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,  # type: ignore[arg-type]
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, 60)
        yield url
    finally:
        server.should_exit = True
        thread.join(30)
