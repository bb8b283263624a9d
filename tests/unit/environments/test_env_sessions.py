"""The session host: cap, TTL, per-call timeouts, catalog (no HTTP)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from environments import registry
from environments.base import EnvContext, Environment
from environments.sessions import EnvironmentHost, Session
from environments.settings import EnvironmentsSettings
from environments.tasks import Task, TaskSet
from environments.tools import tool
from services.common.errors import NotFound, NotReady, Overloaded, UpstreamError
from services.common.metrics import Metrics
from services.common.wire import SessionCreate, ToolCall


class NapEnv(Environment):
    name = "nap-test"
    task_type = "exact_match"

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        tasks = [
            Task(task_id=f"nap-{i}", task_type="exact_match", prompt="nap", answer="z")
            for i in range(4)
        ]
        return TaskSet(cls.name, name, "1", seed, tasks)

    @tool("Sleep for some seconds.")
    def nap(self, seconds: float) -> str:
        time.sleep(seconds)
        return "rested"


@pytest.fixture
def host(tmp_path: Path):  # type: ignore[no-untyped-def]
    registry.register("nap-test", NapEnv, replace=True)
    settings = EnvironmentsSettings(
        envs=["nap-test"],
        max_sessions=2,
        step_timeout_s=0.3,
        session_ttl_s=60,
        data_dir=tmp_path,
        mcp=False,
    )
    h = EnvironmentHost(settings, Metrics("environments_test"))
    h.preload()
    yield h
    h.shutdown()
    registry.unregister("nap-test")


async def test_cap_timeout_ttl_and_close(host: EnvironmentHost) -> None:
    a = await host.create(SessionCreate(env="nap-test", seed=1))
    assert a.tools[0].function.name == "nap" and a.observation == "nap"
    await host.create(SessionCreate(env="nap-test", task_id="nap-2"))
    with pytest.raises(Overloaded, match="cap"):
        await host.create(SessionCreate(env="nap-test"))

    fast = await host.step(a.session_id, ToolCall(name="nap", arguments={"seconds": 0}))
    assert fast.observation == "rested"
    slow = await host.step(a.session_id, ToolCall(name="nap", arguments={"seconds": 1.0}))
    assert slow.error is not None and slow.error.kind == "timeout"
    assert "0.3s" in slow.observation

    await host.close(a.session_id)
    with pytest.raises(NotFound):
        await host.step(a.session_id, ToolCall(name="nap", arguments={"seconds": 0}))
    await host.create(SessionCreate(env="nap-test"))  # room again

    host.settings.session_ttl_s = 0.01
    time.sleep(0.05)
    assert host.sweep() == 2 and not host.sessions


async def test_unknown_env_and_task_are_not_found(host: EnvironmentHost) -> None:
    with pytest.raises(NotFound, match="not served"):
        await host.create(SessionCreate(env="search-nope"))
    with pytest.raises(NotFound, match="task"):
        await host.create(SessionCreate(env="nap-test", task_id="missing"))


async def test_catalog(host: EnvironmentHost) -> None:
    [desc] = host.describe()
    assert (
        desc.loaded and desc.task_sets["default"]["train"] + desc.task_sets["default"]["eval"] == 4
    )
    views = await host.tasks("nap-test", "train", 0, 10, None)
    assert views and all(v.task_id.startswith("nap-") for v in views)
    assert host.readiness() == {"nap-test": "ok"}


class BrokenEnv(NapEnv):
    name = "broken-test"

    @classmethod
    def load_shared(cls, ctx: EnvContext) -> None:
        raise RuntimeError("data package missing")


class BadResetEnv(NapEnv):
    name = "bad-reset-test"

    def reset(self) -> str:
        raise ValueError("no prompt")

    def state_key(self) -> str:
        raise ValueError("state lost")


async def test_env_failures_are_typed_errors_or_observations(tmp_path: Path) -> None:
    registry.register("broken-test", BrokenEnv, replace=True)
    registry.register("bad-reset-test", BadResetEnv, replace=True)
    settings = EnvironmentsSettings(envs=["broken-test", "bad-reset-test"], data_dir=tmp_path)
    host = EnvironmentHost(settings, Metrics("environments_test2"))
    try:
        host.preload()
        assert host.readiness()["broken-test"].startswith("error: RuntimeError")
        with pytest.raises(NotReady, match="data package missing"):
            await host.create(SessionCreate(env="broken-test"))
        with pytest.raises(UpstreamError, match="failed to reset"):
            await host.create(SessionCreate(env="bad-reset-test"))
        assert not host.sessions and host._pending == 0
        env = BadResetEnv(Task(task_id="x", task_type="t", prompt="p"))
        host.sessions["s1"] = Session("s1", "bad-reset-test", env)
        host.metrics.live.labels("bad-reset-test").inc()
        result = await host.step("s1", ToolCall(name="nap", arguments={"seconds": 0}))
        assert result.error is not None and "state lost" in result.observation
    finally:
        host.shutdown()
        registry.unregister("broken-test")
        registry.unregister("bad-reset-test")
