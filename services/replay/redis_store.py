"""Redis replay store: lists + hashes, binary token arrays, Lua for atomicity.

Everything that reads-then-writes runs as one Lua script (see `redis_lua`), so admission,
take, ack and recovery are atomic across any number of learner, worker and replay
processes. Delivery is at-least-once: a taken batch stays in a pending set with a
visibility deadline until acknowledged.
"""

from __future__ import annotations

import json
import logging
import time

import redis

from services.common.errors import Conflict, Overloaded, UpstreamError
from services.common.wire import PolicyPublication, Trajectory, new_id
from services.replay import codec, redis_lua, rules
from services.replay.schemas import (
    AdmitRequest,
    AdmitResponse,
    Batch,
    ReplayStats,
    TakeRequest,
    TrajectoryPage,
)
from services.replay.settings import RedisBackend
from services.replay.store import BaseStore, check_job_id

log = logging.getLogger(__name__)


def _int(value: bytes | str | None, default: int = 0) -> int:
    return int(value) if value is not None else default


class RedisStore(BaseStore):
    def __init__(self, config: RedisBackend | None = None) -> None:
        self.config = config or RedisBackend()
        self.poll_interval_s = self.config.poll_interval_s
        self.redis = redis.Redis.from_url(
            self.config.url,
            socket_timeout=self.config.socket_timeout_s,
            socket_connect_timeout=self.config.socket_timeout_s,
        )
        self._scripts = {
            name: self.redis.register_script(getattr(redis_lua, name))
            for name in ("PUT", "ADMIT", "RELEASE", "TAKE", "ACK", "RECOVER", "PUBLISH")
        }

    def _key(self, job_id: str, name: str = "") -> str:
        return f"{self.config.prefix}:{{{job_id}}}:{name}"

    def _run(self, script: str, *args: object) -> object:
        try:
            return self._scripts[script](args=list(args))
        except redis.RedisError as exc:
            raise UpstreamError(f"redis {script.lower()} failed: {exc}") from exc

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except redis.RedisError:
            return False

    def close(self) -> None:
        self.redis.close()

    # ---------------------------------------------------------------- producers
    def _put_many(self, trajs: list[Trajectory]) -> None:
        for traj in trajs:
            stored = self._run(
                "PUT",
                self._key(traj.job_id),
                traj.group_id,
                traj.trajectory_id,
                traj.group_size,
                traj.oldest_version,
                codec.encode(traj),
                self.config.max_len,
                self.config.archive_max,
            )
            if stored == -1:
                raise Overloaded(
                    f"replay for job {traj.job_id} is full (max_len {self.config.max_len}); "
                    "retry later"
                )

    def _admit(self, job_id: str, req: AdmitRequest) -> AdmitResponse:
        admitted, started, finished = self._run(  # type: ignore[misc]
            "ADMIT", self._key(job_id), req.version, req.max_staleness, req.batch_size, req.count
        )
        return AdmitResponse(admitted=admitted, started=started, finished=bool(finished))

    def release(self, job_id: str, count: int) -> AdmitResponse:
        _, started, finished = self._run(  # type: ignore[misc]
            "RELEASE", self._key(check_job_id(job_id)), count
        )
        return AdmitResponse(admitted=0, started=started, finished=bool(finished))

    # ---------------------------------------------------------------- learner
    def _take_once(self, job_id: str, req: TakeRequest) -> Batch | None:
        now = time.time()
        out = self._run(
            "TAKE",
            self._key(job_id),
            req.version,
            req.max_staleness,
            req.num_groups,
            now,
            now + self.config.visibility_timeout_s,
            new_id(),
        )
        batch_id, dropped, redelivered, *gids = out  # type: ignore[misc]
        if not batch_id:
            return None
        return Batch(
            batch_id=batch_id.decode(),
            job_id=job_id,
            version=req.version,
            trajectories=self._load_groups(job_id, [g.decode() for g in gids]),
            dropped_stale=dropped,
            redelivered=bool(redelivered),
        )

    def _load_groups(self, job_id: str, gids: list[str]) -> list[Trajectory]:
        pipe = self.redis.pipeline(transaction=False)
        for gid in gids:
            pipe.hvals(self._key(job_id, f"g:{gid}"))
        out: list[Trajectory] = []
        for blobs in pipe.execute():
            members = [codec.decode(blob) for blob in blobs]
            out.extend(sorted(members, key=lambda t: (t.sample_index, t.trajectory_id)))
        return out

    def ack(self, job_id: str, batch_id: str) -> bool:
        return bool(self._run("ACK", self._key(check_job_id(job_id)), batch_id))

    def recover(self, job_id: str) -> int:
        return int(self._run("RECOVER", self._key(check_job_id(job_id))))  # type: ignore[arg-type]

    # ---------------------------------------------------------------- browsing
    def stats(self, job_id: str) -> ReplayStats:
        key = self._key(check_job_id(job_id))
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(key + "meta")
        pipe.llen(key + "ready")
        pipe.zrange(key + "pending", 0, -1)
        pipe.scard(key + "open")
        pipe.hgetall(key + "ages")
        pipe.llen(key + "archive")
        meta, ready, pending, open_groups, ages, archived = pipe.execute()
        meta = {k.decode(): v.decode() for k, v in meta.items()}
        version = int(meta.get("version", 0))
        return ReplayStats(
            job_id=job_id,
            depth=int(meta.get("depth", 0)),
            pending_batches=len(pending),
            complete_groups=ready,
            consumed=int(meta.get("consumed", 0)),
            dropped_stale=int(meta.get("dropped_stale", 0)),
            started=int(meta.get("started", 0)),
            version=version,
            age_histogram=rules.age_histogram(
                {int(k): int(v) for k, v in ages.items()}, version
            ),
            incomplete_groups=open_groups,
            pending_samples=self._pending_samples(key, pending),
            redelivered_batches=int(meta.get("redelivered", 0)),
            archived=archived,
            finished="finished" in meta,
            finish_reason=meta.get("finished"),
        )

    def _pending_samples(self, key: str, batch_ids: list[bytes]) -> int:
        if not batch_ids:
            return 0
        raws = self.redis.mget([key + "b:" + b.decode() for b in batch_ids])
        gids = [gid for raw in raws if raw for gid in json.loads(raw)]
        pipe = self.redis.pipeline(transaction=False)
        for gid in gids:
            pipe.hget(key + f"gm:{gid}", "n")
        return sum(_int(n) for n in pipe.execute())

    def archive(self, job_id: str, offset: int = 0, limit: int = 50) -> TrajectoryPage:
        key = self._key(check_job_id(job_id), "archive")
        pipe = self.redis.pipeline(transaction=True)
        pipe.lrange(key, offset, offset + max(limit, 1) - 1)
        pipe.llen(key)
        blobs, total = pipe.execute()
        blobs = blobs[: max(limit, 0)]
        return TrajectoryPage(items=[codec.decode(b) for b in blobs], total=total, offset=offset)

    # ---------------------------------------------------------------- control
    def publish(self, pub: PolicyPublication) -> None:
        key = self._key(check_job_id(pub.job_id))
        if not self._run("PUBLISH", key, pub.version, pub.model_dump_json()):
            current = self.latest_publication(pub.job_id)
            raise Conflict(
                f"job {pub.job_id} already published version "
                f"{current.version if current else '?'}; refusing older version {pub.version}",
                field="version",
            )

    def latest_publication(self, job_id: str) -> PolicyPublication | None:
        raw = self.redis.get(self._key(check_job_id(job_id), "pub"))
        return PolicyPublication.model_validate_json(raw) if raw else None

    def finish(self, job_id: str, reason: str = "finished") -> None:
        self.redis.hset(self._key(check_job_id(job_id), "meta"), "finished", reason)

    def delete_job(self, job_id: str) -> None:
        pattern = self._key(check_job_id(job_id)) + "*"
        batch: list[bytes] = []
        for key in self.redis.scan_iter(match=pattern, count=500):
            batch.append(key)
            if len(batch) >= 500:
                self.redis.delete(*batch)
                batch = []
        if batch:
            self.redis.delete(*batch)
