"""The Ray launcher's wiring (actor per process, calls through ray.get) against an
in-process stand-in for `ray`, with real subprocesses; the real Ray is an optional extra
that is not installed here."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from api_helpers import all_gone, learner_cmd, read_pids, wait_for, worker_cmd

from services.api.db import open_database
from services.api.runner import JobRunner
from services.api.schemas import JobStatus
from services.api.settings import ApiSettings, RayRunnerSettings
from services.api.store import JobStore
from services.common.jobspec import parse_job_spec


class _Method:
    def __init__(self, bound: Any) -> None:
        self.bound = bound

    def remote(self, *args: Any) -> Any:
        return self.bound(*args)  # the "object ref" is the value itself


class _Actor:
    def __init__(self, instance: Any) -> None:
        self.instance = instance

    def __getattr__(self, name: str) -> _Method:
        return _Method(getattr(self.instance, name))


def _fake_ray() -> types.ModuleType:
    ray = types.ModuleType("ray")
    ray.calls = {"init": [], "options": [], "killed": 0}  # type: ignore[attr-defined]
    ray.exceptions = types.SimpleNamespace(RayActorError=RuntimeError)  # type: ignore[attr-defined]
    ray.is_initialized = lambda: False  # type: ignore[attr-defined]
    ray.init = lambda **kw: ray.calls["init"].append(kw)  # type: ignore[attr-defined]
    ray.get = lambda ref, timeout=None: ref  # type: ignore[attr-defined]
    ray.shutdown = lambda: None  # type: ignore[attr-defined]

    def kill(actor: Any) -> None:
        ray.calls["killed"] += 1  # type: ignore[attr-defined]

    def remote(**options: Any) -> Any:
        ray.calls["options"].append(options)  # type: ignore[attr-defined]

        def wrap(cls: type) -> Any:
            return types.SimpleNamespace(remote=lambda *a: _Actor(cls(*a)))

        return wrap

    ray.kill = kill  # type: ignore[attr-defined]
    ray.remote = remote  # type: ignore[attr-defined]
    return ray


def test_ray_runner_runs_and_cancels_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = _fake_ray()
    monkeypatch.setitem(sys.modules, "ray", ray)
    settings = ApiSettings(
        home=tmp_path,
        runner=RayRunnerSettings(
            address="ray://head:10001",
            learner_command=learner_cmd("--steps", "2", "--no-post"),
            worker_command=worker_cmd(),
            poll_interval_s=0.05,
            stop_grace_s=1.0,
            num_cpus_per_process=0.5,
        ),
    )
    db = open_database(settings.resolved_database_url())
    store = JobStore(db)
    runner = JobRunner(store, settings)
    runner.start()
    try:
        spec = parse_job_spec(
            {"environments": [{"name": "arithmetic"}], "group_size": 1, "batch_size": 1}
        )
        done = store.create_job(spec, None, "t")
        final = wait_for(lambda: store.get_job(done.id).status.terminal and store.get_job(done.id))
        assert final.status is JobStatus.COMPLETED, final.failure_reason
        assert all_gone(read_pids(tmp_path / "runs" / done.id))
        assert ray.calls["init"] == [{"address": "ray://head:10001", "ignore_reinit_error": True}]
        assert ray.calls["options"] == [{"num_cpus": 0.5}]
        assert ray.calls["killed"] >= 2  # each actor is released once its process is gone

        runner.config.learner_command = learner_cmd("--steps", "100000", "--no-post")
        long = store.create_job(spec, None, "t")
        run_dir = tmp_path / "runs" / long.id
        pids = wait_for(
            lambda: {"learner", "worker-0"} <= set(read_pids(run_dir)) and read_pids(run_dir)
        )
        assert runner.cancel(long.id).status is JobStatus.CANCELLED
        assert all_gone(pids)
    finally:
        runner.stop()
        db.dispose()
