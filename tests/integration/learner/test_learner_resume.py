"""Kill-and-resume: `python -m learner` killed with SIGKILL mid-run resumes from its
checkpoint at the same policy version and finishes the job. Real Redis replay store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import torch
from learner_bandit import BanditProducer

from learner import checkpoint as ckpt
from services.common.jobspec import Endpoints, JobRuntime, parse_job_spec
from services.replay.redis_store import RedisStore
from services.replay.settings import RedisBackend

REDIS = "redis://127.0.0.1:6379/0"
STEPS = 8
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def store() -> RedisStore:
    s = RedisStore(RedisBackend(url=REDIS))
    try:
        s.redis.ping()
    except Exception as exc:  # pragma: no cover - the project's machines have Redis
        pytest.skip(f"Redis not reachable at {REDIS}: {exc}")
    return s


def write_runtime(model: Path, run_dir: Path, job: str) -> Path:
    spec = parse_job_spec({
        "environments": [{"name": "bandit"}],
        "model": {"name": str(model), "engine": "hf"},
        "group_size": 4, "batch_size": 8, "max_staleness": 2,
        "budget": {"max_steps": STEPS},
        "algorithm": {"learning_rate": 1e-3},
        "checkpoint": {"every_n_steps": 1, "keep_last": 2},
    })  # fmt: skip
    endpoints = Endpoints(replay=REDIS, inference="http://127.0.0.1:9")
    rt = JobRuntime(job_id=job, spec=spec, endpoints=endpoints, run_dir=str(run_dir))
    path = run_dir / "runtime.json"
    path.write_text(rt.model_dump_json())
    return path


def start(runtime: Path, log: Path, resume: bool) -> subprocess.Popen[bytes]:
    env = os.environ | {"OMP_NUM_THREADS": "1", "SLIPSTREAM_LEARNER_TAKE_WAIT_S": "1",
                        "SLIPSTREAM_LEARNER_PUBLISH_TIMEOUT_S": "2",
                        "SLIPSTREAM_LEARNER_EVALUATE": "false"}  # fmt: skip
    args = [sys.executable, "-m", "learner", "--runtime", str(runtime)]
    with log.open("ab") as out:
        return subprocess.Popen(args + (["--resume"] if resume else []), cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip


def feed_until(store: RedisStore, producer: BanditProducer, job: str, proc, done, timeout: float):  # type: ignore[no-untyped-def]
    """Keep one batch of fresh groups waiting until `done(version)` or the process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pub = store.latest_publication(job)
        if pub is not None:
            if done(pub.version):
                return pub.version
            producer.load(pub.checkpoint_path, pub.version)
            if store.stats(job).complete_groups < 2:
                store.put_many(producer.produce(2))
        if proc.poll() is not None:
            return None
        time.sleep(0.2)
    raise TimeoutError("learner made no progress")


@pytest.mark.slow
def test_killed_learner_resumes_at_checkpoint_version(
    tiny_model_path: Path, tmp_path: Path, store: RedisStore
) -> None:
    torch.set_num_threads(1)
    job = f"learner-resume-{uuid.uuid4().hex[:8]}"
    runtime = write_runtime(tiny_model_path, tmp_path, job)
    log = tmp_path / "learner.log"
    producer = BanditProducer(tiny_model_path, job, group_size=4, seed=3)
    proc = start(runtime, log, resume=False)
    try:
        feed_until(store, producer, job, proc, lambda v: v >= 3, 300)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        saved = ckpt.LearnerState.model_validate_json(
            (ckpt.latest_checkpoint(tmp_path) / ckpt.STATE_FILE).read_text()
        )
        published = store.latest_publication(job).version
        assert saved.version >= published >= 3  # checkpoints are written before publishing

        proc = start(runtime, log, resume=True)
        feed_until(store, producer, job, proc, lambda v: v >= STEPS, 300)
        assert proc.wait(120) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        store.delete_job(job)

    text = log.read_text()
    folder = tmp_path / "checkpoints" / f"v{saved.version:08d}"
    assert f"resumed from {folder} at policy version {saved.version}" in text
    assert "learner done at v8 (max_steps)" in text
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in rows]
    assert steps[-1] == STEPS and steps == sorted(steps)  # numbering continued, never back
    assert (tmp_path / "final" / "model.safetensors").is_file()
