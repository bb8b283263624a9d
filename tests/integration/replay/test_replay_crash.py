"""Killing the learner between take and ack, then restarting it, loses no trajectory
(Redis backend, real server, the replay service as a real process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest
import redis
from replay_fixtures import REDIS_URL, make_group, redis_available
from support.procs import free_port

from services.replay.client import ReplayClient

pytestmark = pytest.mark.skipif(not redis_available(), reason="no Redis at 127.0.0.1:6379")

LEARNER = textwrap.dedent(
    """
    import json, sys, time
    from services.replay.client import ReplayClient
    url, job_id = sys.argv[1], sys.argv[2]
    with ReplayClient(url) as replay:
        batch = replay.take_batch(job_id, 0, 0, 2, wait_s=10)
        print(json.dumps([t.trajectory_id for t in batch.trajectories]), flush=True)
        time.sleep(600)  # "training": killed here, before the ack
    """
)


def _start_replay(port: int, prefix: str) -> subprocess.Popen[bytes]:
    backend = {"type": "redis", "url": REDIS_URL, "prefix": prefix}
    env = os.environ | {"SLIPSTREAM_REPLAY_BACKEND": json.dumps(backend)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.replay", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    client = ReplayClient(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while not client.healthy():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "no start")
        time.sleep(0.1)
    client.close()
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_learner_killed_between_take_and_ack_loses_nothing() -> None:
    prefix = f"slipstream-test:{uuid.uuid4().hex[:8]}"
    job_id = "crash-job"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    replay_proc = _start_replay(port, prefix)
    try:
        groups = [make_group(job_id, 2) for _ in range(5)]
        all_ids = {t.trajectory_id for g in groups for t in g}
        with ReplayClient(url) as replay:
            for group in groups:
                replay.put_many(group)

        learner = subprocess.Popen(
            [sys.executable, "-c", LEARNER, url, job_id], stdout=subprocess.PIPE
        )
        taken = json.loads(learner.stdout.readline())  # type: ignore[union-attr]
        assert len(taken) == 4
        learner.send_signal(signal.SIGKILL)
        learner.wait()

        # The replay service restarts too: its state is all in Redis.
        _stop(replay_proc)
        replay_proc = _start_replay(port, prefix)

        consumed: list[str] = []
        with ReplayClient(url) as replay:
            assert replay.stats(job_id).pending_batches == 1
            assert replay.recover(job_id) == 1  # the restarted learner's first call
            while (batch := replay.take_batch(job_id, 0, 0, 1, wait_s=0.5)) is not None:
                consumed += [t.trajectory_id for t in batch.trajectories]
                assert replay.ack(job_id, batch.batch_id)
            stats = replay.stats(job_id)
        assert set(consumed) == all_ids and len(consumed) == len(all_ids)
        assert consumed[:4] == taken  # redelivered first, in the same order
        assert (stats.consumed, stats.depth, stats.pending_batches) == (10, 0, 0)
    finally:
        _stop(replay_proc)
        client = redis.Redis.from_url(REDIS_URL)
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)
