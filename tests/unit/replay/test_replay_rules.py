from __future__ import annotations

import numpy as np
import pytest

from services.common.wire import Trajectory
from services.replay import codec, rules
from services.replay.settings import MemoryBackend, RedisBackend, ReplaySettings


def test_admission_capacity_is_areal_rule() -> None:
    assert rules.admission_capacity(0, 0, 8) == 8
    assert rules.admission_capacity(3, 4, 8) == 64
    assert rules.admit_count(started=60, version=3, max_staleness=4, batch_size=8, count=8) == 4
    assert rules.admit_count(started=70, version=3, max_staleness=4, batch_size=8, count=8) == 0


def test_staleness_filter() -> None:
    assert not rules.is_stale(3, 4, 1)
    assert rules.is_stale(2, 4, 1)
    assert rules.group_is_stale([4, 4, 2], 4, 1)
    assert not rules.group_is_stale([4, 3], 4, 1)
    assert rules.age_histogram({1: 2, 3: 1, 2: 0}, 4) == {"1": 1, "3": 2}


def test_codec_round_trip_and_compactness() -> None:
    n = 1000
    traj = Trajectory(
        job_id="j",
        task_id="t",
        group_id="g",
        group_size=1,
        env="arithmetic",
        token_ids=[(i * 7919) % 49152 for i in range(n)],
        loss_mask=[i % 2 for i in range(n)],  # type: ignore[misc]
        behavior_logprobs=[float(np.float32(-((i * 0.7331) % 5.0))) for i in range(n)],
        policy_versions=[7 * (i % 2) for i in range(n)],
    )
    blob = codec.encode(traj)
    assert codec.decode(blob) == traj
    assert len(blob) < 14 * n + 1000
    assert len(blob) < len(traj.model_dump_json()) / 2
    with pytest.raises(codec.CodecError):
        codec.decode(b"nope" + blob[4:])
    with pytest.raises(codec.CodecError):
        codec.decode(blob[:-10])


def test_backend_is_a_tagged_union(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(ReplaySettings().backend, MemoryBackend)
    monkeypatch.setenv("SLIPSTREAM_REPLAY_BACKEND", '{"type": "redis", "prefix": "p"}')
    backend = ReplaySettings().backend
    assert isinstance(backend, RedisBackend) and backend.prefix == "p"
    monkeypatch.delenv("SLIPSTREAM_REPLAY_BACKEND")
    monkeypatch.setenv("SLIPSTREAM_REPLAY_BACKEND__TYPE", "redis")
    assert isinstance(ReplaySettings().backend, RedisBackend)


def test_every_settings_field_is_described() -> None:
    for model in (ReplaySettings, MemoryBackend, RedisBackend):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name}"
