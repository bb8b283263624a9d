"""Replica choice and settings, without any replica running."""

from __future__ import annotations

import subprocess
import sys

import pytest

from services.inference.replicas import ReplicaPool
from services.inference.settings import HfEngineSettings, InferenceSettings, VllmEngineSettings


def pool(n: int) -> ReplicaPool:
    replicas = ReplicaPool([f"http://r{i}" for i in range(n)])
    for replica in replicas.replicas:
        replica.healthy = True
    return replicas


def test_least_outstanding_wins_and_ties_rotate() -> None:
    replicas = pool(3)
    replicas.replicas[0].outstanding = 2
    replicas.replicas[1].outstanding = 1
    replicas.replicas[2].outstanding = 5
    assert replicas.pick(None).url == "http://r1"
    for replica in replicas.replicas:
        replica.outstanding = 0
    assert {replicas.pick(None).url for _ in range(6)} == {"http://r0", "http://r1", "http://r2"}


def test_sticky_by_episode_until_the_replica_fails() -> None:
    replicas = pool(2)
    first = replicas.pick("ep")
    assert first is not None
    first.outstanding = 10  # stickiness beats load
    assert replicas.pick("ep") is first
    replicas.mark_failed(first, "connection refused")
    moved = replicas.pick("ep")
    assert moved is not None and moved is not first
    assert replicas.pick("ep") is moved


def test_no_healthy_replica_and_exclusions() -> None:
    replicas = pool(2)
    assert replicas.pick(None, exclude={"http://r0", "http://r1"}) is None
    for replica in replicas.replicas:
        replica.healthy = False
    assert replicas.pick("ep") is None


def test_sticky_map_is_bounded() -> None:
    replicas = ReplicaPool(["http://a"], sticky_capacity=3)
    replicas.replicas[0].healthy = True
    for i in range(10):
        replicas.pick(f"ep{i}")
    assert len(replicas._sticky) == 3


def test_engine_is_a_tagged_union_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(InferenceSettings().engine, VllmEngineSettings)
    monkeypatch.setenv("SLIPSTREAM_INFERENCE_ENGINE__TYPE", "hf")
    monkeypatch.setenv("SLIPSTREAM_INFERENCE_ENGINE__MAX_BATCH_SIZE", "3")
    engine = InferenceSettings().engine
    assert isinstance(engine, HfEngineSettings) and engine.max_batch_size == 3
    monkeypatch.setenv("SLIPSTREAM_INFERENCE_ENGINE__TYPE", "tgi")
    with pytest.raises(ValueError, match="tgi"):
        InferenceSettings()


def test_importing_the_apps_is_cheap() -> None:
    code = (
        "import sys, services.inference.app, services.inference.router, "
        "services.inference.models, services.inference.client;"
        "print([m for m in ('torch','vllm','transformers') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
