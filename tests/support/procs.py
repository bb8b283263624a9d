"""Real services for the integration tests: free ports, readiness polls, `python -m`
processes (stopped only by their own pid) and ASGI apps on uvicorn in a thread.

A plain module, not a package: pytest puts `tests/` on sys.path for `tests/conftest.py`,
so conftests and test modules import it as `from support.procs import ...`."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

Proc = subprocess.Popen[bytes]
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, timeout: float = 120.0, proc: Proc | None = None,
               log: Path | None = None) -> None:
    """Poll `url`/readyz until it answers 200. Where `proc` is given, fail as soon as it
    exits (with the tail of `log`, where given)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = f": {log.read_text()[-2000:]}" if log is not None else ""
            raise RuntimeError(f"{url} exited with {proc.returncode}{tail}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{url} not ready after {timeout}s")


def stop(proc: Proc) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def start_module(module: str, port: int, env: dict[str, str], log: Path) -> Proc:
    """`python -m <module> --port <port>` from the repository root, with `env` over the
    current environment, stdout and stderr to `log`."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", module, "--port", str(port)],
            cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT,
        )


@contextlib.contextmanager
def serve_app(app: object, port: int, timeout: float = 60.0, **config: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a background thread; yields its base URL once
    its /readyz answers 200. `config`: more `uvicorn.Config` options (log_level defaults
    to "warning")."""
    import uvicorn

    config.setdefault("log_level", "warning")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **config))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, timeout)
        yield url
    finally:
        server.should_exit = True
        thread.join(30)
