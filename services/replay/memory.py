"""In-process replay store: the embedded default (thread-safe, nothing survives the
process). Semantics are those of `services.replay.store`."""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field

from services.common.errors import Conflict, Overloaded
from services.common.wire import PolicyPublication, Trajectory, new_id
from services.replay import rules
from services.replay.schemas import (
    AdmitRequest,
    AdmitResponse,
    Batch,
    ReplayStats,
    TakeRequest,
    TrajectoryPage,
)
from services.replay.settings import MemoryBackend
from services.replay.store import BaseStore, check_job_id


@dataclass
class _Group:
    size: int
    members: dict[str, Trajectory] = field(default_factory=dict)
    delivered: bool = False

    def oldest_versions(self) -> list[int]:
        return [t.oldest_version for t in self.members.values()]

    def ordered(self) -> list[Trajectory]:
        return sorted(self.members.values(), key=lambda t: (t.sample_index, t.trajectory_id))


@dataclass
class _Pending:
    groups: list[tuple[str, _Group]]
    deadline: float
    seq: int


@dataclass
class _Job:
    archive_max: int
    open: dict[str, _Group] = field(default_factory=dict)
    live: dict[str, _Group] = field(default_factory=dict)  # every group not yet gone
    ready: deque[tuple[str, _Group]] = field(default_factory=deque)
    pending: dict[str, _Pending] = field(default_factory=dict)
    ages: Counter[int] = field(default_factory=Counter)
    archive: deque[Trajectory] = field(default_factory=deque)
    started: int = 0
    consumed: int = 0
    dropped_stale: int = 0
    redelivered: int = 0
    depth: int = 0
    seq: int = 0
    publication: PolicyPublication | None = None
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        self.archive = deque(maxlen=self.archive_max)

    def count_waiting(self, group: _Group, sign: int) -> None:
        self.depth += sign * len(group.members)
        for version in group.oldest_versions():
            self.ages[version] += sign


class MemoryStore(BaseStore):
    """Dicts and deques behind one lock; a condition wakes blocked takes on new data."""

    def __init__(self, config: MemoryBackend | None = None) -> None:
        self.config = config or MemoryBackend()
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def _job(self, job_id: str) -> _Job:
        job = self._jobs.get(job_id)
        if job is None:
            job = self._jobs[job_id] = _Job(archive_max=self.config.archive_max)
        return job

    def _wait_for_data(self, job_id: str, timeout: float) -> None:
        with self._changed:
            self._changed.wait(timeout)

    # ---------------------------------------------------------------- producers
    def _put_many(self, trajs: list[Trajectory]) -> None:
        with self._changed:
            for traj in trajs:
                self._put_one(self._job(traj.job_id), traj)
            self._changed.notify_all()

    def _put_one(self, job: _Job, traj: Trajectory) -> None:
        group = job.live.get(traj.group_id)
        if group is not None and (
            traj.trajectory_id in group.members or len(group.members) >= group.size
        ):
            return  # idempotent re-put, or a late extra member of a complete group
        if job.depth >= self.config.max_len:
            raise Overloaded(
                f"replay for job {traj.job_id} holds {job.depth} waiting trajectories "
                f"(max_len {self.config.max_len}); retry later"
            )
        if group is None:
            group = job.live[traj.group_id] = job.open[traj.group_id] = _Group(traj.group_size)
        group.members[traj.trajectory_id] = traj
        job.depth += 1
        job.ages[traj.oldest_version] += 1
        job.archive.appendleft(traj)
        if len(group.members) >= group.size:
            del job.open[traj.group_id]
            job.ready.append((traj.group_id, group))

    def _admit(self, job_id: str, req: AdmitRequest) -> AdmitResponse:
        with self._lock:
            job = self._job(job_id)
            if job.finish_reason is not None:
                return AdmitResponse(admitted=0, started=job.started, finished=True)
            admitted = rules.admit_count(
                job.started, req.version, req.max_staleness, req.batch_size, req.count
            )
            job.started += admitted
            return AdmitResponse(admitted=admitted, started=job.started)

    def release(self, job_id: str, count: int) -> AdmitResponse:
        with self._lock:
            job = self._job(check_job_id(job_id))
            job.started = max(0, job.started - count)
            return AdmitResponse(
                admitted=0, started=job.started, finished=job.finish_reason is not None
            )

    # ---------------------------------------------------------------- learner
    def _requeue(self, job: _Job, batch_ids: list[str]) -> None:
        """Put pending batches back at the queue's front, oldest batch first."""
        batches = sorted((job.pending.pop(bid) for bid in batch_ids), key=lambda p: -p.seq)
        for pending in batches:
            for gid, group in reversed(pending.groups):
                job.ready.appendleft((gid, group))
                job.count_waiting(group, +1)
            job.redelivered += 1

    def _take_once(self, job_id: str, req: TakeRequest) -> Batch | None:
        with self._lock:
            job = self._job(job_id)
            now = time.monotonic()
            self._requeue(job, [b for b, p in job.pending.items() if p.deadline <= now])
            fresh: list[tuple[str, _Group]] = []
            dropped = 0
            while len(fresh) < req.num_groups and job.ready:
                gid, group = job.ready.popleft()
                job.count_waiting(group, -1)
                if rules.group_is_stale(
                    group.oldest_versions(), req.version, req.max_staleness
                ):
                    dropped += len(group.members)
                    job.live.pop(gid, None)
                    job.started = max(0, job.started - len(group.members))
                else:
                    fresh.append((gid, group))
            job.dropped_stale += dropped
            if len(fresh) < req.num_groups:
                for gid, group in reversed(fresh):
                    job.ready.appendleft((gid, group))
                    job.count_waiting(group, +1)
                return None
            return self._make_batch(job_id, job, req, fresh, dropped, now)

    def _make_batch(
        self,
        job_id: str,
        job: _Job,
        req: TakeRequest,
        groups: list[tuple[str, _Group]],
        dropped: int,
        now: float,
    ) -> Batch:
        batch_id = new_id()
        job.seq += 1
        job.pending[batch_id] = _Pending(
            groups=groups, deadline=now + self.config.visibility_timeout_s, seq=job.seq
        )
        redelivered = any(group.delivered for _, group in groups)
        for _, group in groups:
            group.delivered = True
        return Batch(
            batch_id=batch_id,
            job_id=job_id,
            version=req.version,
            trajectories=[t for _, group in groups for t in group.ordered()],
            dropped_stale=dropped,
            redelivered=redelivered,
        )

    def ack(self, job_id: str, batch_id: str) -> bool:
        with self._lock:
            job = self._job(check_job_id(job_id))
            pending = job.pending.pop(batch_id, None)
            if pending is None:
                return False
            for gid, group in pending.groups:
                job.consumed += len(group.members)
                job.live.pop(gid, None)
            return True

    def recover(self, job_id: str) -> int:
        with self._changed:
            job = self._job(check_job_id(job_id))
            batch_ids = list(job.pending)
            self._requeue(job, batch_ids)
            self._changed.notify_all()
            return len(batch_ids)

    # ---------------------------------------------------------------- browsing
    def stats(self, job_id: str) -> ReplayStats:
        with self._lock:
            job = self._job(check_job_id(job_id))
            version = job.publication.version if job.publication else 0
            return ReplayStats(
                job_id=job_id,
                depth=job.depth,
                pending_batches=len(job.pending),
                complete_groups=len(job.ready),
                consumed=job.consumed,
                dropped_stale=job.dropped_stale,
                started=job.started,
                version=version,
                age_histogram=rules.age_histogram(dict(job.ages), version),
                incomplete_groups=len(job.open),
                pending_samples=sum(
                    len(g.members) for p in job.pending.values() for _, g in p.groups
                ),
                redelivered_batches=job.redelivered,
                archived=len(job.archive),
                finished=job.finish_reason is not None,
                finish_reason=job.finish_reason,
            )

    def archive(self, job_id: str, offset: int = 0, limit: int = 50) -> TrajectoryPage:
        with self._lock:
            job = self._job(check_job_id(job_id))
            items = list(job.archive)[offset : offset + limit]
            return TrajectoryPage(items=items, total=len(job.archive), offset=offset)

    # ---------------------------------------------------------------- control
    def publish(self, pub: PolicyPublication) -> None:
        with self._changed:
            job = self._job(check_job_id(pub.job_id))
            if job.publication is not None and pub.version < job.publication.version:
                raise Conflict(
                    f"job {pub.job_id} already published version {job.publication.version}; "
                    f"refusing older version {pub.version}",
                    field="version",
                )
            job.publication = pub
            self._changed.notify_all()

    def latest_publication(self, job_id: str) -> PolicyPublication | None:
        with self._lock:
            return self._job(check_job_id(job_id)).publication

    def finish(self, job_id: str, reason: str = "finished") -> None:
        with self._changed:
            self._job(check_job_id(job_id)).finish_reason = reason
            self._changed.notify_all()

    def delete_job(self, job_id: str) -> None:
        with self._changed:
            self._jobs.pop(check_job_id(job_id), None)
            self._changed.notify_all()
