"""Fixtures for the sandbox tests: one real Sandbox per session, its isolation level
printed in the test output, and a check that an execution left nothing on the host."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.procs import free_port, serve_app

from environments.code.models import Isolation, Limits
from environments.code.sandbox import Sandbox
from environments.code.settings import SandboxSettings

ISOLATION_SEEN: list[str] = []
NEXT_LIMITS = Limits(wall_time_s=5, cpu_time_s=5, memory_mb=256)


@pytest.fixture(scope="session")
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed (Debian package 'bubblewrap')")
    box = Sandbox(SandboxSettings(min_isolation=Isolation.BWRAP, slots=4))
    line = f"sandbox isolation level: {box.level.value} ({box.describe()})"
    ISOLATION_SEEN.append(line)
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\n{line}")
    yield box


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    for line in dict.fromkeys(ISOLATION_SEEN):
        terminalreporter.write_sep("-", line)


def sandbox_pids(box: Sandbox) -> list[int]:
    """Host processes running as any of the sandbox's uids."""
    base, count = box.settings.uid_base, box.settings.slots
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                uid = entry.stat().st_uid
            except OSError:
                continue
            if base <= uid < base + count:
                found.append(int(entry.name))
    return found


def leftover_cgroups(box: Sandbox) -> list[Path]:
    out: list[Path] = []
    for controller in box.cgroups.controllers:
        parent = box.cgroups.root / controller / box.cgroups.parent
        out += [p for p in parent.iterdir() if p.is_dir()] if parent.is_dir() else []
    return out


@pytest.fixture
def assert_contained(sandbox: Sandbox):  # type: ignore[no-untyped-def]
    """Call after an attack: nothing of it survives and the next execution works."""

    def check() -> None:
        assert sandbox_pids(sandbox) == [], "sandbox processes survived on the host"
        assert leftover_cgroups(sandbox) == [], "per-execution cgroups were not removed"
        nxt = sandbox.run("print(sum(range(10)))", limits=NEXT_LIMITS)
        assert nxt.status == "ok" and nxt.stdout == "45\n", nxt

    return check


@pytest.fixture(scope="session")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real environment server serving `code` (uvicorn on a free port, in a thread).
    The sandbox pool is small (1 running + 1 queued) so back-pressure is testable."""
    from environments.app import create_app
    from environments.settings import EnvironmentsSettings

    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed (Debian package 'bubblewrap')")
    port = free_port()
    settings = EnvironmentsSettings(
        envs=["code"],
        port=port,
        data_dir=Path(tmp_path_factory.mktemp("code-env-data")),
        env_options={"code": {"sandbox": {"concurrency": 1, "queue_size": 1, "slots": 4}}},
        step_timeout_s=30,
        mcp=False,
    )
    with serve_app(create_app(settings), port, timeout=120) as url:
        yield url
