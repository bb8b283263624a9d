"""Helpers shared by the replay tests: trajectories, groups and stores for each backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from services.common.wire import Trajectory
from services.replay.settings import MemoryBackend, RedisBackend
from services.replay.store import BaseStore, make_store

REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_available() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_timeout=1).ping())
    except redis.RedisError:
        return False


def make_traj(
    job_id: str,
    group_id: str,
    index: int,
    group_size: int,
    version: int = 0,
    n_tokens: int = 6,
) -> Trajectory:
    """A small trajectory: prompt tokens (mask 0) then model tokens at `version`."""
    prompt = n_tokens // 2
    mask = [0] * prompt + [1] * (n_tokens - prompt)
    return Trajectory(
        job_id=job_id,
        task_id=f"task-{group_id}",
        group_id=group_id,
        group_size=group_size,
        sample_index=index,
        env="arithmetic",
        token_ids=[100 + i for i in range(n_tokens)],
        loss_mask=mask,  # type: ignore[arg-type]
        behavior_logprobs=[-0.5 * m for m in mask],
        policy_versions=[version * m for m in mask],
        prompt_length=prompt,
        start_version=version,
        reward=float(index),
    )


def make_group(
    job_id: str, group_size: int, version: int = 0, versions: list[int] | None = None
) -> list[Trajectory]:
    gid = uuid.uuid4().hex[:10]
    versions = versions or [version] * group_size
    return [make_traj(job_id, gid, i, group_size, versions[i]) for i in range(group_size)]


@contextmanager
def backend_store(kind: str, **limits: object) -> Iterator[BaseStore]:
    """A fresh store of `kind` ('memory' or 'redis') under a unique Redis prefix."""
    if kind == "memory":
        store = make_store(MemoryBackend(**limits))  # type: ignore[arg-type]
        yield store
        return
    prefix = f"slipstream-test:{uuid.uuid4().hex[:8]}"
    store = make_store(RedisBackend(url=REDIS_URL, prefix=prefix, **limits))  # type: ignore[arg-type]
    try:
        yield store
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
        store.close()


@contextmanager
def serve_app(app: object) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free local port in a thread; yields its URL."""
    import threading
    import time

    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")  # type: ignore[arg-type]
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
