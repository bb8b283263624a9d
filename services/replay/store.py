"""The replay store contract, its shared base and the backend factory.

Every backend (memory, redis) and both HTTP clients expose the same method names, so the
learner and the rollout workers can use the store in-process or over HTTP unchanged.

Semantics (the contract suite in tests/unit/replay checks them on every backend):

- `put(traj)`: idempotent by trajectory_id. A group becomes *complete* when `group_size`
  distinct members arrived; complete groups queue FIFO by completion time.
- `try_admit(...)`: AReaL's admission rule, atomic across processes.
- `take_batch(...)`: the next `num_groups` complete groups for a learner at `version`.
  Groups with any member older than `version - max_staleness` are dropped whole, counted
  in `dropped_stale` and their admission slots given back. Returns None (after waiting up
  to `wait_s`) when not enough fresh complete groups exist; nothing is taken then.
- `ack(job_id, batch_id)`: the learner used the batch: it is gone for good. A batch not
  acknowledged within the visibility timeout, or when the learner calls `recover(job_id)`
  after a restart, goes back to the front of the queue (at-least-once delivery) and is
  re-filtered for staleness at its next take.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from services.common.errors import BadRequest
from services.common.wire import PolicyPublication, Trajectory
from services.replay.schemas import (
    AdmitRequest,
    AdmitResponse,
    Batch,
    ReplayStats,
    TakeRequest,
    TrajectoryPage,
)
from services.replay.settings import MemoryBackend, RedisBackend, StoreBackend

_JOB_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def check_job_id(job_id: str) -> str:
    if not _JOB_ID.match(job_id):
        raise BadRequest(
            f"job id {job_id!r} must be 1-128 characters of letters, digits, '.', '_', '-'",
            field="job_id",
        )
    return job_id


def as_take_request(
    version: TakeRequest | int,
    max_staleness: int | None = None,
    num_groups: int | None = None,
    wait_s: float = 0.0,
) -> TakeRequest:
    """Accept either a TakeRequest or its fields (the client-style call)."""
    if isinstance(version, TakeRequest):
        return version
    if max_staleness is None or num_groups is None:
        raise TypeError("take_batch(job_id, version, max_staleness, num_groups, wait_s)")
    return TakeRequest(
        version=version, max_staleness=max_staleness, num_groups=num_groups, wait_s=wait_s
    )


def as_admit_request(
    version: AdmitRequest | int,
    max_staleness: int | None = None,
    batch_size: int | None = None,
    count: int = 1,
) -> AdmitRequest:
    if isinstance(version, AdmitRequest):
        return version
    if max_staleness is None or batch_size is None:
        raise TypeError("admit(job_id, version, max_staleness, batch_size, count)")
    return AdmitRequest(
        version=version, max_staleness=max_staleness, batch_size=batch_size, count=count
    )


@runtime_checkable
class ReplayStore(Protocol):
    """What the learner, the workers and the HTTP façade use (sync flavour)."""

    def put(self, traj: Trajectory) -> None: ...
    def put_many(self, trajs: Iterable[Trajectory]) -> None: ...
    def try_admit(
        self, job_id: str, version: int, max_staleness: int, batch_size: int, count: int = 1
    ) -> AdmitResponse: ...
    def release(self, job_id: str, count: int) -> AdmitResponse: ...
    def take_batch(
        self,
        job_id: str,
        version: TakeRequest | int,
        max_staleness: int | None = None,
        num_groups: int | None = None,
        wait_s: float = 0.0,
    ) -> Batch | None: ...
    def ack(self, job_id: str, batch_id: str) -> bool: ...
    def recover(self, job_id: str) -> int: ...
    def stats(self, job_id: str) -> ReplayStats: ...
    def archive(self, job_id: str, offset: int = 0, limit: int = 50) -> TrajectoryPage: ...
    def publish(self, pub: PolicyPublication) -> None: ...
    def latest_publication(self, job_id: str) -> PolicyPublication | None: ...
    def finish(self, job_id: str, reason: str = "finished") -> None: ...
    def delete_job(self, job_id: str) -> None: ...


class BaseStore(ABC):
    """Shared plumbing: argument forms, blocking take, aliases. Backends implement the
    single-shot operations."""

    poll_interval_s: float = 0.05

    # ---- backend primitives
    @abstractmethod
    def _put_many(self, trajs: list[Trajectory]) -> None: ...

    @abstractmethod
    def _admit(self, job_id: str, req: AdmitRequest) -> AdmitResponse: ...

    @abstractmethod
    def _take_once(self, job_id: str, req: TakeRequest) -> Batch | None: ...

    def _wait_for_data(self, job_id: str, timeout: float) -> None:
        """Block until something may have changed for `job_id` (or timeout)."""
        time.sleep(min(timeout, self.poll_interval_s))

    @abstractmethod
    def release(self, job_id: str, count: int) -> AdmitResponse: ...
    @abstractmethod
    def ack(self, job_id: str, batch_id: str) -> bool: ...
    @abstractmethod
    def recover(self, job_id: str) -> int: ...
    @abstractmethod
    def stats(self, job_id: str) -> ReplayStats: ...
    @abstractmethod
    def archive(self, job_id: str, offset: int = 0, limit: int = 50) -> TrajectoryPage: ...
    @abstractmethod
    def publish(self, pub: PolicyPublication) -> None: ...
    @abstractmethod
    def latest_publication(self, job_id: str) -> PolicyPublication | None: ...
    @abstractmethod
    def finish(self, job_id: str, reason: str = "finished") -> None: ...
    @abstractmethod
    def delete_job(self, job_id: str) -> None: ...

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        return None

    # ---- public API built on the primitives
    def put(self, traj: Trajectory) -> None:
        self.put_many([traj])

    def put_many(self, trajs: Iterable[Trajectory]) -> None:
        items = list(trajs)
        for traj in items:
            check_job_id(traj.job_id)
        if items:
            self._put_many(items)

    def try_admit(
        self, job_id: str, version: int, max_staleness: int, batch_size: int, count: int = 1
    ) -> AdmitResponse:
        req = as_admit_request(version, max_staleness, batch_size, count)
        return self._admit(check_job_id(job_id), req)

    def admit(
        self,
        job_id: str,
        version: AdmitRequest | int,
        max_staleness: int | None = None,
        batch_size: int | None = None,
        count: int = 1,
    ) -> AdmitResponse:
        return self._admit(
            check_job_id(job_id), as_admit_request(version, max_staleness, batch_size, count)
        )

    def take_batch(
        self,
        job_id: str,
        version: TakeRequest | int,
        max_staleness: int | None = None,
        num_groups: int | None = None,
        wait_s: float = 0.0,
    ) -> Batch | None:
        req = as_take_request(version, max_staleness, num_groups, wait_s)
        check_job_id(job_id)
        deadline = time.monotonic() + req.wait_s
        while True:
            batch = self._take_once(job_id, req)
            remaining = deadline - time.monotonic()
            if batch is not None or remaining <= 0:
                return batch
            self._wait_for_data(job_id, remaining)

    def trajectories(self, job_id: str, offset: int = 0, limit: int = 50) -> TrajectoryPage:
        return self.archive(job_id, offset, limit)


def make_store(backend: StoreBackend | None = None) -> BaseStore:
    """Build the store a backend config names."""
    backend = backend or MemoryBackend()
    if isinstance(backend, RedisBackend):
        from services.replay.redis_store import RedisStore

        return RedisStore(backend)
    from services.replay.memory import MemoryStore

    return MemoryStore(backend)
