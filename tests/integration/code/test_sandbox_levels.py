"""Isolation levels: without bubblewrap the sandbox refuses to start unless the operator
explicitly allows the weak `rlimit` level; the standalone code app refuses to start too;
the weak level still enforces limits and reports itself in every result."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from environments.code.app import create_app
from environments.code.models import Isolation, Limits, Status
from environments.code.sandbox import IsolationUnavailable, Sandbox
from environments.code.settings import SandboxSettings

NO_BWRAP = {"bwrap": "/nonexistent/bwrap", "uid_base": 62000, "slots": 2}


def test_refuses_without_bubblewrap_by_default() -> None:
    with pytest.raises(IsolationUnavailable, match="MIN_ISOLATION=rlimit"):
        Sandbox(SandboxSettings(**NO_BWRAP))


def test_standalone_app_refuses_to_start_without_bubblewrap() -> None:
    app = create_app(SandboxSettings(**NO_BWRAP))
    with pytest.raises(IsolationUnavailable), TestClient(app):
        pass


def test_weak_level_only_when_explicitly_allowed() -> None:
    box = Sandbox(SandboxSettings(**NO_BWRAP, min_isolation=Isolation.RLIMIT))
    print(f"weak sandbox isolation level: {box.level.value}")
    assert box.level is Isolation.RLIMIT
    ok = box.run("print(input())", stdin="hi", limits=Limits(wall_time_s=5))
    assert ok.status is Status.OK and ok.stdout == "hi\n" and ok.isolation is Isolation.RLIMIT
    slow = box.run("while True:\n    pass\n", limits=Limits(wall_time_s=3, cpu_time_s=1))
    assert slow.status is Status.TIMEOUT and slow.isolation is Isolation.RLIMIT
    big = box.run("x = bytearray(4 * 1024**3)", limits=Limits(memory_mb=128))
    assert big.status is Status.MEMORY


def test_standalone_app_serves_run_code() -> None:
    with TestClient(create_app(SandboxSettings(slots=2))) as client:
        ready = client.get("/readyz").json()
        assert any(k.startswith("sandbox isolation=bwrap") for k in ready["checks"]), ready
        out = client.post("/v1/run_code", json={"code": "print(2 ** 10)"}).json()
        assert out["status"] == "ok" and out["stdout"] == "1024\n"
